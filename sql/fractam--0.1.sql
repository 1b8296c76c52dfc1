/* fractam--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION fractam" to load this file. \quit

CREATE FUNCTION fractam_index_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'fractam_index_handler'
LANGUAGE C STRICT;

-- "fractam" is the table access method's name; CREATE INDEX ... USING
-- fractam is mapped to this index access method by fractam's utility hook.
CREATE ACCESS METHOD fractam_index TYPE INDEX HANDLER fractam_index_handler;
COMMENT ON ACCESS METHOD fractam_index IS
  'buffered fractal tree (B-epsilon tree) index; CREATE INDEX ... USING fractam';

CREATE FUNCTION fractam_table_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME', 'fractam_table_handler'
LANGUAGE C STRICT;

CREATE ACCESS METHOD fractam TYPE TABLE HANDLER fractam_table_handler;
COMMENT ON ACCESS METHOD fractam IS
  'buffered fractal tree (B-epsilon tree) table; CREATE TABLE ... USING fractam';

CREATE FUNCTION fractam_verify(rel regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'fractam_verify'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION fractam_verify(regclass) IS
  'check every invariant of a fractam index or table; raises an error naming the first broken one';

CREATE FUNCTION fractam_stats(rel regclass,
  OUT height int,
  OUT leaf_pages bigint,
  OUT buffer_pages bigint,
  OUT routing_pages bigint,
  OUT leaf_items bigint,
  OUT buffered_messages bigint,
  OUT buffered_bytes bigint,
  OUT flushes bigint,
  OUT splits bigint,
  OUT free_pages bigint,
  OUT avg_flush_size float8,
  OUT upper_buffer_pages bigint,
  OUT upper_buffered_messages bigint,
  OUT moves bigint,
  OUT avg_move_size float8,
  OUT compressed_leaf_pages bigint,
  OUT compressed_bytes bigint,
  OUT uncompressed_bytes bigint,
  OUT compression_ratio float8)
RETURNS record
AS 'MODULE_PATHNAME', 'fractam_stats'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION fractam_stats(regclass) IS
  'shape and activity counters of a fractam index or table';

CREATE FUNCTION fractam_compression_estimate(rel regclass,
  method text DEFAULT 'zstd',
  level int DEFAULT NULL,
  OUT page_kind text,
  OUT pages bigint,
  OUT items bigint,
  OUT raw_bytes bigint,
  OUT compressed_bytes bigint,
  OUT ratio float8,
  OUT pages_if_compressed float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'fractam_compression_estimate'
LANGUAGE C CALLED ON NULL INPUT PARALLEL RESTRICTED;
-- it reads every page: what its sizes reveal is for those who may read them
REVOKE ALL ON FUNCTION fractam_compression_estimate(regclass, text, int) FROM PUBLIC;
COMMENT ON FUNCTION fractam_compression_estimate(regclass, text, int) IS
  'compresses every page of a fractam index or table in memory (lz4 or zstd, level NULL = the method''s default) and reports raw and compressed item bytes per page kind: what compressed pages would save';

CREATE FUNCTION fractam_table_stats(rel regclass,
  OUT rowids_used bigint,
  OUT rowids_left bigint,
  OUT live_versions bigint,
  OUT dead_versions bigint,
  OUT recently_dead_versions bigint,
  OUT in_progress_versions bigint,
  OUT table_bytes bigint,
  OUT bytes_per_live_version float8,
  OUT full_versions bigint,
  OUT compact_versions bigint,
  OUT settled_versions bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fractam_table_stats'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION fractam_table_stats(regclass) IS
  'row ids used and left, row versions by state and by stored form (reads the whole table), and bytes per live version of a fractam table';

CREATE FUNCTION fractam_routing_cache_stats(
  OUT cached_pages bigint,
  OUT hits bigint,
  OUT stores bigint,
  OUT stale bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fractam_routing_cache_stats'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION fractam_routing_cache_stats() IS
  'counters of this session''s cache of fractam routing pages';

CREATE FUNCTION fractam_unique_stats(
  OUT in_descent bigint,
  OUT searched bigint,
  OUT waited bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fractam_unique_stats'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION fractam_unique_stats() IS
  'counters of this session''s inserts into unique fractam indexes';

REVOKE ALL ON FUNCTION fractam_verify(regclass) FROM PUBLIC;

-- Operator classes: fractam orders entries exactly like btree, so every
-- built-in btree operator family is mirrored with the same operators and
-- support functions (1 comparison, 2 sort support, 3 in_range, 4
-- equalimage), including the cross-type members of each family.
DO $$
DECLARE
  fam record;
  cls record;
  m record;
  items text[];
  done text[] := '{}';
  member text;
BEGIN
  FOR fam IN
    SELECT f.oid, f.opfname
    FROM pg_catalog.pg_opfamily f
    JOIN pg_catalog.pg_am a ON a.oid = f.opfmethod
    WHERE a.amname = 'btree' AND f.opfnamespace = 'pg_catalog'::regnamespace
    ORDER BY f.opfname
  LOOP
    EXECUTE format('CREATE OPERATOR FAMILY pg_catalog.%I USING fractam_index',
                   fam.opfname);
    done := '{}';
    FOR cls IN
      SELECT c.opcname, c.opcintype, c.opcdefault
      FROM pg_catalog.pg_opclass c
      WHERE c.opcfamily = fam.oid
      ORDER BY c.opcdefault DESC, c.opcname
    LOOP
      items := '{}';
      FOR m IN
        SELECT format('OPERATOR %s %s', o.amopstrategy, o.amopopr::regoperator) AS item,
               format('o%s/%s/%s', o.amopstrategy, o.amoplefttype, o.amoprighttype) AS k
        FROM pg_catalog.pg_amop o
        WHERE o.amopfamily = fam.oid AND o.amoppurpose = 's'
          AND o.amoplefttype = cls.opcintype AND o.amoprighttype = cls.opcintype
        UNION ALL
        SELECT format('FUNCTION %s (%s, %s) %s', p.amprocnum,
                      p.amproclefttype::regtype, p.amprocrighttype::regtype,
                      p.amproc::regprocedure),
               format('p%s/%s/%s', p.amprocnum, p.amproclefttype, p.amprocrighttype)
        FROM pg_catalog.pg_amproc p
        WHERE p.amprocfamily = fam.oid AND p.amprocnum <= 4
          AND p.amproclefttype = cls.opcintype AND p.amprocrighttype = cls.opcintype
      LOOP
        IF NOT m.k = ANY (done) THEN
          items := items || m.item;
          done := done || m.k;
        END IF;
      END LOOP;
      IF cardinality(items) = 0 THEN
        -- another class of this family already carries these members
        items := ARRAY[format('STORAGE %s', cls.opcintype::regtype)];
      END IF;
      EXECUTE format('CREATE OPERATOR CLASS pg_catalog.%I %s FOR TYPE %s USING fractam_index FAMILY pg_catalog.%I AS %s',
                     cls.opcname,
                     CASE WHEN cls.opcdefault THEN 'DEFAULT' ELSE '' END,
                     cls.opcintype::regtype, fam.opfname,
                     array_to_string(items, ', '));
    END LOOP;
    -- cross-type members
    FOR m IN
      SELECT format('OPERATOR %s %s', o.amopstrategy, o.amopopr::regoperator) AS item,
             format('o%s/%s/%s', o.amopstrategy, o.amoplefttype, o.amoprighttype) AS k
      FROM pg_catalog.pg_amop o
      WHERE o.amopfamily = fam.oid AND o.amoppurpose = 's'
      UNION ALL
      SELECT format('FUNCTION %s (%s, %s) %s', p.amprocnum,
                    p.amproclefttype::regtype, p.amprocrighttype::regtype,
                    p.amproc::regprocedure),
             format('p%s/%s/%s', p.amprocnum, p.amproclefttype, p.amprocrighttype)
      FROM pg_catalog.pg_amproc p
      WHERE p.amprocfamily = fam.oid AND p.amprocnum <= 4
    LOOP
      IF NOT m.k = ANY (done) THEN
        EXECUTE format('ALTER OPERATOR FAMILY pg_catalog.%I USING fractam_index ADD %s',
                       fam.opfname, m.item);
        done := done || m.k;
      END IF;
    END LOOP;
  END LOOP;
END
$$;

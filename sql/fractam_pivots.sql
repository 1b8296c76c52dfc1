--
-- High keys and pivots keep only the leading key columns that separate
-- two leaves (suffix truncation): nodes hold many more children, and every
-- search, scan and unique check still finds what it must.
--
SET client_min_messages = warning;
SELECT setseed(0.25);

-- long key columns and a long INCLUDE column, NULLs; the same rows in the
-- same random order into a fractam-indexed and a btree-indexed table, so
-- that leaves split on the cached (direct) insert path
CREATE TABLE pv_src AS
  SELECT (i * 7919) % 3000 AS grp,
         repeat(chr(97 + (i / 7) % 5), 120) || (i % 7) AS name,
         i AS n, repeat('p', 300) AS pad
    FROM generate_series(1, 30000) i ORDER BY random();
INSERT INTO pv_src SELECT NULL, NULL, i, 'x' FROM generate_series(30001, 30200) i;
INSERT INTO pv_src SELECT 7, NULL, i, 'y' FROM generate_series(30201, 30400) i;
CREATE TABLE pvf (LIKE pv_src);
CREATE TABLE pvb (LIKE pv_src);
CREATE INDEX pvf_idx ON pvf USING fractam (grp, name DESC, n) INCLUDE (pad);
CREATE INDEX pvb_idx ON pvb USING btree (grp, name DESC, n) INCLUDE (pad);
INSERT INTO pvf SELECT * FROM pv_src;
INSERT INTO pvb SELECT * FROM pv_src;
SELECT fractam_verify('pvf_idx');

-- whole-entry pivots (about 470 bytes) allow about 8 children per node;
-- truncated ones (mostly the group alone) many times that
SELECT leaf_pages / GREATEST(buffer_pages, 1) >= 25 AS wide_nodes
  FROM fractam_stats('pvf_idx');

-- searches on every prefix of the key, both directions, against btree
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET client_min_messages = notice;
CREATE FUNCTION pv_same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  rf text;
  rb text;
BEGIN
  EXECUTE format(q, 'pvf') INTO rf;
  EXECUTE format(q, 'pvb') INTO rb;
  IF rf IS DISTINCT FROM rb THEN
    RAISE NOTICE 'differs: % / %', rf, rb;
  END IF;
  RETURN rf IS NOT DISTINCT FROM rb AND rf IS NOT NULL;
END $$;
SELECT q, pv_same(q) FROM (VALUES
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp = 1234'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp BETWEEN 100 AND 900'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp = 2504 AND name > repeat(''c'', 120)'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp = 2504 AND name < repeat(''c'', 120)'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp >= 2990'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp < 10'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp IS NULL'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp = 7 AND name IS NULL'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp = 7 AND name IS NULL AND n > 30300'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp = 7 AND name IS NOT NULL'),
  ('SELECT string_agg(n::text, '','') FROM (SELECT n FROM %I WHERE grp BETWEEN 40 AND 45 ORDER BY grp DESC, name, n DESC) s'),
  ('SELECT string_agg(n::text, '','') FROM (SELECT n FROM %I WHERE grp > 2995 ORDER BY grp, name DESC, n) s'),
  ('SELECT string_agg(n::text || pad, '','') FROM (SELECT n, pad FROM %I WHERE grp = 7 ORDER BY grp, name DESC, n) s')
) v(q);
-- buffered inserts and deletes (messages routed by truncated pivots, then
-- flushed into leaves that split), against btree again
SET fractam.direct_apply = off;
INSERT INTO pvf SELECT grp + 1, name, n + 100000, 'b' FROM pv_src WHERE n % 3 = 0;
INSERT INTO pvb SELECT grp + 1, name, n + 100000, 'b' FROM pv_src WHERE n % 3 = 0;
DELETE FROM pvf WHERE n % 11 = 0;
DELETE FROM pvb WHERE n % 11 = 0;
SELECT buffered_messages > 0 AS buffered FROM fractam_stats('pvf_idx');
SELECT q, pv_same(q) FROM (VALUES
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp = 1235'),
  ('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp BETWEEN 200 AND 1900 AND name <= repeat(''c'', 120)'),
  ('SELECT string_agg(n::text, '','') FROM (SELECT n FROM %I WHERE grp BETWEEN 2000 AND 2010 ORDER BY grp DESC, name, n DESC) s')
) v(q);
VACUUM pvf;
SELECT fractam_verify('pvf_idx');
RESET fractam.direct_apply;

-- every probe used the index
EXPLAIN (COSTS OFF) SELECT n FROM pvf WHERE grp = 7 AND name IS NULL;

-- a unique index whose pivots keep every key column but lose the INCLUDE
-- column and the heap TID: duplicates on either side of a leaf boundary
-- are found, by plain inserts and by ON CONFLICT
CREATE TABLE pvu (a int, b int, pad text);
CREATE UNIQUE INDEX pvu_idx ON pvu USING fractam (a, b) INCLUDE (pad);
INSERT INTO pvu SELECT i / 50, i % 50, repeat('u', 200)
  FROM generate_series(0, 19999) i ORDER BY random();
SELECT fractam_verify('pvu_idx');
SELECT leaf_pages / GREATEST(buffer_pages, 1) >= 25 AS wide_nodes
  FROM fractam_stats('pvu_idx');
DO $$
DECLARE
  i int;
  dup int := 0;
BEGIN
  FOR i IN 0 .. 19999 BY 97 LOOP
    BEGIN
      INSERT INTO pvu VALUES (i / 50, i % 50, 'again');
    EXCEPTION WHEN unique_violation THEN
      dup := dup + 1;
    END;
  END LOOP;
  RAISE NOTICE 'duplicates reported: %', dup;
END $$;
INSERT INTO pvu SELECT i / 50, i % 50, 'upsert' FROM generate_series(0, 19999, 13) i
  ON CONFLICT (a, b) DO NOTHING;
INSERT INTO pvu SELECT i / 50, 50 + i % 50, 'new' FROM generate_series(0, 999) i
  ON CONFLICT (a, b) DO NOTHING;
SELECT count(*), count(*) FILTER (WHERE pad = 'new') AS new FROM pvu;
SELECT count(*) FROM pvu WHERE a BETWEEN 100 AND 110;
SELECT fractam_verify('pvu_idx');

-- a bulk build (CREATE INDEX) truncates its leaves' keys too, plain and
-- compressed, and they give the same answers
CREATE INDEX pvf_build ON pvf USING fractam (grp, name DESC, n) INCLUDE (pad);
CREATE INDEX pvf_build_lz4 ON pvf USING fractam (grp, name DESC, n) INCLUDE (pad)
  WITH (compression = 'lz4');
SELECT fractam_verify('pvf_build'), fractam_verify('pvf_build_lz4');
DROP INDEX pvf_idx, pvf_build_lz4;
SELECT pv_same('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp BETWEEN 1000 AND 1010 AND name >= repeat(''b'', 120)');
DROP INDEX pvf_build;
CREATE INDEX pvf_build_lz4 ON pvf USING fractam (grp, name DESC, n) INCLUDE (pad)
  WITH (compression = 'lz4');
SELECT pv_same('SELECT count(*) || '':'' || sum(n) FROM %I WHERE grp BETWEEN 1000 AND 1010 AND name >= repeat(''b'', 120)');

DROP TABLE pv_src, pvf, pvb, pvu;
DROP FUNCTION pv_same(text);

--
-- fractam_basic: the extension's objects, USING fractam, reloptions, the SQL
-- functions, small scans, and keys too large for a page.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

-- the index access method and the WAL resource manager
SELECT amname, amtype FROM pg_am WHERE amname LIKE 'fractam%' ORDER BY 1;
SELECT rm_name, rm_builtin FROM pg_get_wal_resource_managers() WHERE rm_name = 'fractam';
SET wal_consistency_checking = 'fractam';
SHOW wal_consistency_checking;
RESET wal_consistency_checking;
SELECT to_regprocedure('fractam_verify(regclass)') IS NOT NULL AS has_verify,
       (SELECT prorettype::regtype FROM pg_proc
        WHERE oid = to_regprocedure('fractam_verify(regclass)')) AS verify_returns,
       to_regprocedure('fractam_stats(regclass)') IS NOT NULL AS has_stats;

-- every listed type has a default operator class, and they all validate
SELECT t AS type_without_default_opclass
FROM unnest(ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'text',
                  'bpchar', 'bytea', 'bool', 'date', 'time', 'timestamp',
                  'timestamptz', 'interval', 'uuid', 'oid', 'char', 'name']::regtype[]) t
WHERE NOT EXISTS (SELECT 1 FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
                  WHERE a.amname = 'fractam_index' AND c.opcdefault AND c.opcintype = t);
SELECT count(*) > 15 AS many_opclasses,
       count(*) FILTER (WHERE NOT amvalidate(c.oid)) AS invalid_opclasses
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE a.amname = 'fractam_index';
-- integer_ops is a cross-type family, as in btree
SELECT count(*) > 0 AS has_cross_type_int_ops
FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
JOIN pg_am a ON a.oid = f.opfmethod
WHERE a.amname = 'fractam_index' AND o.amoplefttype = 'int4'::regtype
  AND o.amoprighttype = 'int8'::regtype;

-- USING fractam is mapped onto the fractam_index access method
CREATE TABLE b1 (a int, b text, c int);
CREATE INDEX b1_a ON b1 USING fractam (a);
CREATE INDEX b1_b ON b1 USING fractam_index (b);
CREATE INDEX b1_c_bt ON b1 USING btree (c);
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname LIKE 'b1%' AND c.relkind = 'i' ORDER BY 1;
\d b1

-- an empty index: scans find nothing, it verifies, the statistics are zero
SELECT ft_check('index', 'SELECT a FROM b1 WHERE a = 1');
SELECT ft_check('bitmap', 'SELECT a FROM b1 WHERE a > 1');
SELECT ft_check('index', 'SELECT a FROM b1 ORDER BY a DESC LIMIT 3', true);
SELECT fractam_verify('b1_a');
SELECT height BETWEEN 0 AND 1 AS low_tree, leaf_items, buffered_messages,
       buffered_bytes, flushes, splits
FROM fractam_stats('b1_a');
SELECT pg_typeof(height) AS height, pg_typeof(leaf_pages) AS leaf_pages,
       pg_typeof(buffer_pages) AS buffer_pages, pg_typeof(routing_pages) AS routing_pages,
       pg_typeof(leaf_items) AS leaf_items, pg_typeof(buffered_messages) AS buffered_messages,
       pg_typeof(buffered_bytes) AS buffered_bytes, pg_typeof(flushes) AS flushes,
       pg_typeof(splits) AS splits
FROM fractam_stats('b1_a');

-- a few rows
INSERT INTO b1 SELECT i % 100, 'v' || (i % 37), i FROM generate_series(1, 1000) i;
INSERT INTO b1 VALUES (NULL, NULL, NULL), (NULL, 'x', 0);
SELECT ft_check('index', 'SELECT a, b, c FROM b1 WHERE a = 42');
SELECT ft_check('index', 'SELECT a, c FROM b1 WHERE a >= 98');
SELECT ft_check('index', 'SELECT a, c FROM b1 WHERE a < 2 AND a > 0');
SELECT ft_check('index', 'SELECT a FROM b1 WHERE a IS NULL');
SELECT ft_check('bitmap', 'SELECT c FROM b1 WHERE b = ''v7''');
SELECT ft_check('index', 'SELECT b FROM b1 WHERE b > ''v8'' ORDER BY b LIMIT 30', true);
SELECT ft_check('index', 'SELECT a FROM b1 ORDER BY a DESC LIMIT 15', true);
SELECT ft_check('index', 'SELECT a FROM b1 WHERE a = 1000');
-- the full EXPLAIN for one query of each kind
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM b1 WHERE a = 42;
EXPLAIN (COSTS OFF) SELECT a FROM b1 ORDER BY a DESC LIMIT 5;
SET enable_indexscan = off;
SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT * FROM b1 WHERE b = 'v7';
SET enable_indexonlyscan = on;
SET enable_bitmapscan = off;
SET enable_indexscan = on;
EXPLAIN (COSTS OFF) SELECT a FROM b1 WHERE a < 3;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
SELECT ft_verify_all('b1');
SELECT leaf_items + buffered_messages AS entries FROM fractam_stats('b1_a');
SELECT count(*) FROM b1;

-- reloptions: valid values
CREATE INDEX b1_r1 ON b1 USING fractam (a) WITH (fanout = 2);
CREATE INDEX b1_r2 ON b1 USING fractam (a) WITH (fanout = 64, fillfactor = 10);
CREATE INDEX b1_r3 ON b1 USING fractam (a) WITH (fillfactor = 100, buffering = off);
CREATE INDEX b1_r4 ON b1 USING fractam (a) WITH (buffering = true, fanout = 16, fillfactor = 90);
SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'b1_r%' ORDER BY 1;
SELECT ft_verify_all('b1');
-- reloptions: bad values
CREATE INDEX b1_bad ON b1 USING fractam (a) WITH (fanout = 1);
CREATE INDEX b1_bad ON b1 USING fractam (a) WITH (fanout = 65);
CREATE INDEX b1_bad ON b1 USING fractam (a) WITH (fanout = 'many');
CREATE INDEX b1_bad ON b1 USING fractam (a) WITH (fanout = '4x');
CREATE INDEX b1_bad ON b1 USING fractam (a) WITH (fillfactor = 9);
CREATE INDEX b1_bad ON b1 USING fractam (a) WITH (fillfactor = 101);
CREATE INDEX b1_bad ON b1 USING fractam (a) WITH (buffering = maybe);
CREATE INDEX b1_bad ON b1 USING fractam (a) WITH (nosuchoption = 1);
SELECT count(*) FROM pg_class WHERE relname = 'b1_bad';
-- ALTER INDEX SET / RESET
ALTER INDEX b1_r1 SET (fanout = 8);
ALTER INDEX b1_r1 SET (fanout = 0);
ALTER INDEX b1_r1 SET (buffering = off);
SELECT reloptions FROM pg_class WHERE relname = 'b1_r1';
ALTER INDEX b1_r1 RESET (fanout, buffering);
SELECT reloptions FROM pg_class WHERE relname = 'b1_r1';
INSERT INTO b1 SELECT i % 100, 'w' || i, i FROM generate_series(1, 500) i;
SELECT ft_verify_all('b1');
-- only b1_r1 (whose options were altered) is left on column a
DROP INDEX b1_a, b1_r2, b1_r3, b1_r4;
SELECT ft_check('index', 'SELECT a, c FROM b1 WHERE a = 7');
SELECT ft_check('index', 'SELECT a FROM b1 WHERE a > 90 ORDER BY a LIMIT 40', true);

-- the SQL functions refuse what is not a fractam index
DO $$
BEGIN
	PERFORM fractam_verify('b1_c_bt');
	RAISE NOTICE 'fractam_verify(btree index): no error';
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE 'fractam_verify(btree index): error raised';
END $$;
DO $$
BEGIN
	PERFORM fractam_verify('b1');
	RAISE NOTICE 'fractam_verify(table): no error';
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE 'fractam_verify(table): error raised';
END $$;
DO $$
BEGIN
	PERFORM * FROM fractam_stats('b1_c_bt');
	RAISE NOTICE 'fractam_stats(btree index): no error';
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE 'fractam_stats(btree index): error raised';
END $$;

-- keys too large for a page: a clear program_limit_exceeded error, like btree
CREATE TABLE big (id int, t text);
CREATE INDEX big_t ON big USING fractam (t);
CREATE FUNCTION incompressible(n int) RETURNS text LANGUAGE sql AS
$$ SELECT string_agg(md5(i::text || 'x'), '') FROM generate_series(1, n) i $$;
SELECT length(incompressible(300)) AS len;
DO $$
BEGIN
	INSERT INTO big VALUES (1, incompressible(300));
	RAISE NOTICE 'huge key: accepted';
EXCEPTION
	WHEN program_limit_exceeded THEN RAISE NOTICE 'huge key: program_limit_exceeded';
	WHEN OTHERS THEN RAISE NOTICE 'huge key: unexpected error %: %', SQLSTATE, SQLERRM;
END $$;
SELECT count(*) FROM big;
-- keys of about 1 kB must work (few per page: many splits)
INSERT INTO big SELECT i, incompressible(31) || i FROM generate_series(3, 300) i;
-- a key of a third of a page may be accepted or refused, but never corrupts
DO $$
BEGIN
	INSERT INTO big VALUES (2, incompressible(90));
	RAISE NOTICE 'medium key: handled';
EXCEPTION
	WHEN program_limit_exceeded THEN RAISE NOTICE 'medium key: handled';
	WHEN OTHERS THEN RAISE NOTICE 'medium key: unexpected error %: %', SQLSTATE, SQLERRM;
END $$;
SELECT ft_verify_all('big');
SELECT ft_check('index', 'SELECT id FROM big WHERE t = ' || quote_literal(incompressible(31) || 77));
SELECT ft_check('index', 'SELECT id FROM big WHERE t > ' || quote_literal(incompressible(31) || 5)
                || ' ORDER BY t LIMIT 20', true);
SELECT ft_check('bitmap', 'SELECT id FROM big WHERE t < ' || quote_literal(incompressible(31) || 2));
SELECT ft_check('index', 'SELECT id, length(t) FROM big WHERE t = ' || quote_literal(incompressible(90)))
       ~ ' ok$' AS medium_key_lookup_ok;
-- building an index over a too-large key fails the same way
DROP INDEX big_t;
ALTER TABLE big ALTER COLUMN t SET STORAGE plain;
INSERT INTO big VALUES (0, incompressible(250));
DO $$
BEGIN
	CREATE INDEX big_t2 ON big USING fractam (t);
	RAISE NOTICE 'index build over a huge key: succeeded';
EXCEPTION
	WHEN program_limit_exceeded THEN RAISE NOTICE 'index build over a huge key: program_limit_exceeded';
	WHEN OTHERS THEN RAISE NOTICE 'index build: unexpected error %: %', SQLSTATE, SQLERRM;
END $$;
SELECT count(*) FROM pg_class WHERE relname = 'big_t2';

DROP TABLE b1;
DROP TABLE big;
DROP FUNCTION incompressible(int);

-- fractam table access method: behaviour matches heap.
-- Every check runs the same statements on a heap table and on a fractam
-- table and compares, or prints values heap would print.
SET client_min_messages = warning;

-- catalog
SELECT amname, amtype FROM pg_am WHERE amname LIKE 'fractam%' ORDER BY 1;

-- ctids are dense from (0,1), an UPDATE appends, as in heap
CREATE TABLE ft (id int, v text) USING fractam;
CREATE TABLE hp (id int, v text) USING heap;
INSERT INTO ft VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO hp VALUES (1, 'a'), (2, 'b'), (3, 'c');
SELECT ctid, * FROM ft;
UPDATE ft SET v = 'bb' WHERE id = 2;
UPDATE hp SET v = 'bb' WHERE id = 2;
SELECT ctid, * FROM ft ORDER BY id;
SELECT ctid, * FROM hp ORDER BY id;
DELETE FROM ft WHERE id = 1 RETURNING *;
DELETE FROM hp WHERE id = 1 RETURNING *;
SELECT ctid, * FROM ft ORDER BY id;
-- system columns
SELECT xmin <> '0' AS has_xmin, xmax, cmin, tableoid::regclass
  FROM ft WHERE id = 3;
BEGIN;
DELETE FROM ft WHERE id = 3;
ROLLBACK;
SELECT xmax <> '0' AS xmax_of_aborted_delete, * FROM ft WHERE id = 3;

-- savepoints, subtransactions and combo command ids
BEGIN;
INSERT INTO ft VALUES (4, 'd');
SAVEPOINT s1;
UPDATE ft SET v = v || '!';
DELETE FROM ft WHERE id = 4;
ROLLBACK TO s1;
UPDATE ft SET v = v || '?' WHERE id = 4;
UPDATE ft SET v = v || '?' WHERE id = 4;
DECLARE c CURSOR FOR SELECT id, v FROM ft ORDER BY id;
UPDATE ft SET v = 'gone';
FETCH ALL FROM c;
COMMIT;
SELECT id, v FROM ft ORDER BY id;

-- DML against heap: multi-row, INSERT ... SELECT, RETURNING, triggers
TRUNCATE ft, hp;
CREATE FUNCTION trg_upper() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN NEW.v := upper(NEW.v); RETURN NEW; END $$;
CREATE TRIGGER ft_upper BEFORE INSERT OR UPDATE ON ft FOR EACH ROW EXECUTE FUNCTION trg_upper();
CREATE TRIGGER hp_upper BEFORE INSERT OR UPDATE ON hp FOR EACH ROW EXECUTE FUNCTION trg_upper();
INSERT INTO ft SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
INSERT INTO hp SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
UPDATE ft SET v = v || 'x' WHERE id % 7 = 0;
UPDATE hp SET v = v || 'x' WHERE id % 7 = 0;
DELETE FROM ft WHERE id % 11 = 0;
DELETE FROM hp WHERE id % 11 = 0;
INSERT INTO ft SELECT id + 10000, v FROM ft WHERE id < 100;
INSERT INTO hp SELECT id + 10000, v FROM hp WHERE id < 100;
SELECT count(*) FROM ((TABLE ft EXCEPT TABLE hp) UNION ALL (TABLE hp EXCEPT TABLE ft)) d;
SELECT count(*), sum(id) FROM ft;

-- indexes of every kind, and the scans that use them
CREATE INDEX ft_btree ON ft (id);
CREATE INDEX ft_hash ON ft USING hash (v);
CREATE INDEX ft_frac ON ft USING fractam (v);
CREATE INDEX ft_gin ON ft USING gin ((ARRAY[id % 10, id % 7]));
CREATE INDEX ft_gist ON ft USING gist (point(id, id));
CREATE INDEX ft_partial ON ft (id) WHERE id > 4000;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM ft WHERE id BETWEEN 100 AND 2000;
SELECT id FROM ft WHERE v = (SELECT v FROM hp WHERE id = 70) ORDER BY id;
SELECT count(*) FROM ft WHERE id > 4500;
EXPLAIN (COSTS OFF) SELECT id FROM ft WHERE id = 5;
SELECT id FROM ft WHERE id = 5;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT count(*) FROM ft WHERE ARRAY[id % 10, id % 7] @> ARRAY[3, 4];
SELECT count(*) FROM hp WHERE ARRAY[id % 10, id % 7] @> ARRAY[3, 4];
SELECT count(*) FROM ft WHERE point(id, id) <@ box '((10,10),(500,500))';
SET work_mem = '64kB';
SELECT count(*), sum(id) FROM ft WHERE id BETWEEN 10 AND 4000;
RESET work_mem;
RESET enable_indexscan;
RESET enable_seqscan;
-- unique constraints and a fractam unique index
CREATE UNIQUE INDEX ft_uniq ON ft (id);
INSERT INTO ft VALUES (5, 'dup');
CREATE UNIQUE INDEX ft_funiq ON ft USING fractam (v);
CREATE UNIQUE INDEX ft_funiq ON ft USING fractam (v) WHERE id < 10000;
INSERT INTO ft VALUES (99999, (SELECT v FROM ft WHERE id = 5));
INSERT INTO ft VALUES (9999, (SELECT v FROM ft WHERE id = 5));

-- INSERT ... ON CONFLICT through speculative insertion
CREATE TABLE fu (k int PRIMARY KEY, n int) USING fractam;
INSERT INTO fu VALUES (1, 1), (2, 1);
INSERT INTO fu VALUES (1, 100) ON CONFLICT DO NOTHING;
INSERT INTO fu VALUES (2, 100), (3, 1) ON CONFLICT (k) DO UPDATE SET n = fu.n + excluded.n;
INSERT INTO fu VALUES (2, 100) ON CONFLICT (k) DO UPDATE SET n = fu.n + 1 RETURNING *;
SELECT * FROM fu ORDER BY k;
CREATE TABLE fu2 (k text, n int) USING fractam;
CREATE UNIQUE INDEX fu2_k ON fu2 USING fractam (k);
INSERT INTO fu2 VALUES ('a', 1);
INSERT INTO fu2 VALUES ('a', 5), ('b', 5) ON CONFLICT (k) DO UPDATE SET n = fu2.n + excluded.n;
SELECT * FROM fu2 ORDER BY k;

-- row locks and foreign keys in both directions
SELECT k FROM fu WHERE k = 1 FOR UPDATE;
SELECT k FROM fu WHERE k = 1 FOR NO KEY UPDATE;
SELECT k FROM fu WHERE k = 1 FOR SHARE;
SELECT k FROM fu WHERE k = 1 FOR KEY SHARE;
BEGIN;
SELECT k FROM fu WHERE k = 1 FOR KEY SHARE;
SELECT k FROM fu WHERE k = 1 FOR UPDATE;
UPDATE fu SET n = n + 1 WHERE k = 1;
COMMIT;
SELECT * FROM fu WHERE k = 1;
CREATE TABLE fchild (id int, k int REFERENCES fu ON DELETE CASCADE) USING fractam;
INSERT INTO fchild VALUES (1, 1), (2, 2), (3, 2);
INSERT INTO fchild VALUES (4, 42);
DELETE FROM fu WHERE k = 2;
SELECT * FROM fchild ORDER BY id;
CREATE TABLE hchild (id int, k int REFERENCES fu) USING heap;
INSERT INTO hchild VALUES (1, 1);
DELETE FROM fu WHERE k = 1;

-- TOAST: values larger than a page go to a heap TOAST table
CREATE TABLE ftoast (id int, big text) USING fractam;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
  WHERE c.oid = (SELECT reltoastrelid FROM pg_class WHERE relname = 'ftoast');
INSERT INTO ftoast SELECT g, repeat(md5(g::text), 2000) FROM generate_series(1, 20) g;
UPDATE ftoast SET big = big || 'x' WHERE id % 2 = 0;
DELETE FROM ftoast WHERE id % 5 = 0;
SELECT count(*), sum(length(big)), count(DISTINCT md5(big)) FROM ftoast;
ALTER TABLE ftoast ALTER COLUMN big SET COMPRESSION lz4;
INSERT INTO ftoast VALUES (100, repeat('z', 100000));
SELECT pg_column_compression(big), length(big) FROM ftoast WHERE id = 100;

-- VACUUM removes dead versions and their index entries
CREATE TABLE fv (id int, x int) USING fractam WITH (autovacuum_enabled = off);
CREATE INDEX fv_id ON fv (id);
CREATE INDEX fv_x ON fv USING fractam (x);
INSERT INTO fv SELECT g, g FROM generate_series(1, 20000) g;
DELETE FROM fv WHERE id % 2 = 0;
UPDATE fv SET x = -x WHERE id % 3 = 0;
-- the DML's counts must reach the shared statistics before VACUUM sets
-- n_live_tup/n_dead_tup, or they would be added on top of its numbers
SELECT pg_stat_force_next_flush();
VACUUM fv;
SELECT n_live_tup, n_dead_tup, vacuum_count FROM pg_stat_user_tables WHERE relname = 'fv';
SELECT count(*), sum(x) FROM fv;
SET enable_seqscan = off;
SELECT count(*), sum(x) FROM fv WHERE id > 0;
SELECT count(*) FROM fv WHERE x < 0;
RESET enable_seqscan;
SELECT fractam_verify('fv_x');
SELECT age(relfrozenxid) < 1000 AS frozenxid_recent FROM pg_class WHERE relname = 'fv';

-- ANALYZE: a row sample that gives heap-like estimates
ANALYZE fv;
SELECT reltuples BETWEEN 9000 AND 11000 AS reltuples_ok FROM pg_class WHERE relname = 'fv';
SELECT n_distinct < 0 AS distinct_ids FROM pg_stats WHERE tablename = 'fv' AND attname = 'id';

-- DDL: defaults, CTAS, SELECT INTO, rewrites, access method changes
SET default_table_access_method = fractam;
CREATE TABLE fdef (a int);
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'fdef';
CREATE TABLE fctas AS SELECT g AS a FROM generate_series(1, 1000) g;
SELECT a INTO fselinto FROM fctas WHERE a <= 10;
RESET default_table_access_method;
SELECT relname, amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
  WHERE relname IN ('fctas', 'fselinto') ORDER BY 1;
SELECT count(*), sum(a) FROM fselinto;
SELECT relfilenode AS before FROM pg_class WHERE relname = 'fctas' \gset
ALTER TABLE fctas ADD COLUMN b int DEFAULT 7;
SELECT relfilenode = :before AS no_rewrite FROM pg_class WHERE relname = 'fctas';
INSERT INTO fctas VALUES (1001, 8);
SELECT count(*), sum(a), sum(b) FROM fctas;
ALTER TABLE fctas ALTER COLUMN a TYPE bigint;
ALTER TABLE fctas DROP COLUMN b;
SELECT count(*), sum(a) FROM fctas;
ALTER TABLE fctas SET ACCESS METHOD heap;
SELECT amname, (SELECT sum(a) FROM fctas) FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'fctas';
ALTER TABLE fctas SET ACCESS METHOD fractam;
SELECT amname, (SELECT sum(a) FROM fctas) FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'fctas';
-- TRUNCATE, also in the creating transaction and rolled back
BEGIN;
CREATE TABLE ftr (a int) USING fractam;
INSERT INTO ftr VALUES (1), (2);
TRUNCATE ftr;
INSERT INTO ftr VALUES (3);
SELECT ctid, a FROM ftr;
ROLLBACK;
BEGIN;
TRUNCATE fctas;
SELECT count(*) FROM fctas;
ROLLBACK;
SELECT count(*) FROM fctas;
-- temporary and unlogged tables
CREATE TEMP TABLE ftemp (a int) USING fractam;
INSERT INTO ftemp SELECT generate_series(1, 3);
SELECT ctid, a FROM ftemp;
CREATE UNLOGGED TABLE funlogged (a int) USING fractam;
INSERT INTO funlogged SELECT generate_series(1, 3);
SELECT sum(a) FROM funlogged;
ALTER TABLE funlogged SET LOGGED;
SELECT relpersistence, (SELECT sum(a) FROM funlogged) FROM pg_class WHERE relname = 'funlogged';
-- COPY in and out
CREATE TABLE fcopy (a int, b text) USING fractam;
COPY fcopy FROM stdin;
1	one
2	two
3	three
\.
COPY fcopy TO stdout;
-- a COPY of many rows goes through multi_insert, which appends a leaf's
-- worth of rows at a time (one WAL record per leaf): rows, ctids, the
-- generated column and the indexes (filled from the slots' TIDs) must be
-- right, within one transaction and after rolling one back
CREATE TABLE fcopy2 (a int, b text GENERATED ALWAYS AS (md5(a::text)) STORED)
  USING fractam;
CREATE INDEX fcopy2_a ON fcopy2 USING fractam (a);
CREATE INDEX fcopy2_b ON fcopy2 (b);
COPY fcopy2 (a) FROM PROGRAM 'seq 1 30000';
BEGIN;
COPY fcopy2 (a) FROM PROGRAM 'seq 30001 40000';
ROLLBACK;
COPY fcopy2 (a) FROM PROGRAM 'seq 40001 50000';
SELECT count(*), sum(a), count(DISTINCT b), bool_and(b = md5(a::text)) FROM fcopy2;
SELECT ctid, a FROM fcopy2 WHERE a IN (1, 291, 292, 30000, 40001, 50000) ORDER BY a;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(a), bool_and(b = md5(a::text)) FROM fcopy2 WHERE a BETWEEN 25000 AND 45000;
SELECT count(*), sum(a), bool_and(b = md5(a::text)) FROM fcopy2 WHERE a BETWEEN 25000 AND 45000;
SELECT a FROM fcopy2 WHERE b = md5('44444');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT fractam_verify('fcopy2'), fractam_verify('fcopy2_a');
-- partitions
CREATE TABLE fpart (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE fpart_1 PARTITION OF fpart FOR VALUES FROM (0) TO (100) USING fractam;
CREATE TABLE fpart_2 PARTITION OF fpart FOR VALUES FROM (100) TO (200) USING fractam;
INSERT INTO fpart SELECT g, g::text FROM generate_series(0, 199) g;
UPDATE fpart SET k = k + 100 WHERE k < 10;
SELECT tableoid::regclass, count(*) FROM fpart GROUP BY 1 ORDER BY 1;

-- parallel sequential scans split the row ids between workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM ft;
SELECT count(*), sum(id) FROM ft;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- TID scans
SELECT ctid, id FROM ft WHERE ctid = '(0,2)';
SELECT count(*) FROM ft WHERE ctid = '(9999,1)';

-- scrollable cursors: sequential scans in both directions
CREATE TABLE fsc (a int) USING fractam;
INSERT INTO fsc SELECT generate_series(1, 10);
DELETE FROM fsc WHERE a = 10;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT a FROM fsc;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH FORWARD 2 FROM c;
FETCH LAST FROM c;
FETCH FORWARD 1 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ABSOLUTE 5 FROM c;
COMMIT;

-- VACUUM FULL and CLUSTER rewrite into a new file, row ids from 0; update
-- chains, TOAST values and every index survive
CREATE TABLE frw (id int, t text) USING fractam;
CREATE INDEX frw_id ON frw (id DESC);
CREATE INDEX frw_t ON frw USING fractam (t);
INSERT INTO frw SELECT g, md5(g::text) FROM generate_series(1, 3000) g;
INSERT INTO frw VALUES (5002, repeat('toast', 3000));
DELETE FROM frw WHERE id % 3 = 0;
UPDATE frw SET t = 'u' || id WHERE id % 5 = 0;
SELECT count(*) AS n, sum(id) AS s, count(DISTINCT t) AS d FROM frw \gset before_
SELECT relfilenode AS before_file FROM pg_class WHERE relname = 'frw' \gset
VACUUM FULL frw;
SELECT relfilenode <> :before_file AS new_file FROM pg_class WHERE relname = 'frw';
SELECT count(*) = :before_n AND sum(id) = :before_s AND count(DISTINCT t) = :before_d AS same_rows FROM frw;
SELECT ctid, id FROM frw ORDER BY ctid LIMIT 3;
SELECT length(t) FROM frw WHERE id = 5002;
CLUSTER frw USING frw_id;
SELECT ctid, id FROM frw ORDER BY ctid LIMIT 3;
SET enable_seqscan = off;
SELECT count(*) = :before_n AS same_rows FROM frw WHERE id > 0;
SELECT t FROM frw WHERE t = 'u10';
RESET enable_seqscan;
SELECT fractam_verify('frw'), fractam_verify('frw_t');
-- rows stored before ADD COLUMN ... DEFAULT keep the default through a
-- rewrite (which clears the catalog's missing values) and a dropped
-- column's bytes go: both as heap
CREATE TABLE fmiss (id int NOT NULL, s text) USING fractam;
CREATE TABLE hmiss (id int NOT NULL, s text);
INSERT INTO fmiss SELECT g, 's' || g FROM generate_series(1, 500) g;
INSERT INTO hmiss SELECT g, 's' || g FROM generate_series(1, 500) g;
ALTER TABLE fmiss ADD COLUMN k bigint NOT NULL DEFAULT 42, ADD COLUMN d text DEFAULT 'dflt';
ALTER TABLE hmiss ADD COLUMN k bigint NOT NULL DEFAULT 42, ADD COLUMN d text DEFAULT 'dflt';
INSERT INTO fmiss VALUES (501, 'x', 7, NULL);
INSERT INTO hmiss VALUES (501, 'x', 7, NULL);
ALTER TABLE fmiss DROP COLUMN s;
ALTER TABLE hmiss DROP COLUMN s;
VACUUM FULL fmiss;
VACUUM FULL hmiss;
SELECT count(*), sum(k), count(d), count(*) FILTER (WHERE d = 'dflt') FROM fmiss;
SELECT (SELECT count(*) FROM ((TABLE fmiss EXCEPT ALL TABLE hmiss) UNION ALL
                              (TABLE hmiss EXCEPT ALL TABLE fmiss)) x) AS differ,
       (SELECT count(*) FROM pg_attribute WHERE attrelid = 'fmiss'::regclass
        AND atthasmissing) AS missing_left;
ALTER TABLE fmiss ADD COLUMN m int DEFAULT 3;
CREATE INDEX fmiss_id ON fmiss (id);
CLUSTER fmiss USING fmiss_id;
SELECT count(*), sum(k), sum(m), count(d) FROM fmiss;
DROP TABLE fmiss, hmiss;

-- CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY
CREATE INDEX CONCURRENTLY frw_cic ON frw (t);
CREATE UNIQUE INDEX CONCURRENTLY frw_cic_u ON frw USING fractam (id);
REINDEX INDEX CONCURRENTLY frw_id;
SELECT indexrelid::regclass, indisvalid FROM pg_index
  WHERE indrelid = 'frw'::regclass ORDER BY indexrelid::regclass::text;
SET enable_seqscan = off;
SELECT count(*) FROM frw WHERE t LIKE 'u%';
SELECT id FROM frw WHERE id = 10;
RESET enable_seqscan;
INSERT INTO frw VALUES (10, 'dup');

-- TID range scans, TABLESAMPLE and BRIN work on pseudo-blocks of row ids
CREATE TABLE fps (id int, t text) USING fractam;
INSERT INTO fps SELECT g, md5(g::text) FROM generate_series(1, 2000) g;
EXPLAIN (COSTS OFF) SELECT ctid, id FROM fps WHERE ctid > '(5,288)' AND ctid <= '(6,2)';
SELECT ctid, id FROM fps WHERE ctid > '(5,288)' AND ctid <= '(6,2)';
SELECT count(*) FROM fps WHERE ctid < '(1,0)';
SELECT count(*) FROM fps WHERE ctid >= '(6,0)';
SELECT count(*) FROM fps TABLESAMPLE SYSTEM (100);
SELECT count(*) FROM fps TABLESAMPLE BERNOULLI (0);
SELECT count(*) BETWEEN 100 AND 300 AS bernoulli_ok FROM fps TABLESAMPLE BERNOULLI (10) REPEATABLE (1);
CREATE INDEX fps_brin ON fps USING brin (id) WITH (pages_per_range = 2);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM fps WHERE id BETWEEN 100 AND 700;
SELECT count(*) FROM fps WHERE id BETWEEN 100 AND 700;
INSERT INTO fps SELECT g, 'x' FROM generate_series(2001, 5000) g;
SELECT brin_summarize_new_values('fps_brin') > 0 AS summarized;
SELECT count(*) FROM fps WHERE id BETWEEN 1900 AND 4000;
RESET enable_seqscan;

DROP TABLE ft, hp, fu, fu2, fchild, hchild, ftoast, fv, fdef, fctas, fselinto,
  fcopy, fcopy2, fpart, ftemp, funlogged, fsc, frw, fps;
DROP FUNCTION trg_upper();

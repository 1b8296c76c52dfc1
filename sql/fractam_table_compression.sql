--
-- fractam_table_compression: fractam tables WITH (compression = 'lz4' |
-- 'zstd').  VACUUM merges runs of a table's leaves into compressed leaves
-- (settling what every snapshot sees), and COPY leaves compressed pages
-- behind its right edge; deletes, row locks and updates of
-- rows there go into the leaf's change area (small records, no
-- re-encoding), and a leaf whose change area or decoded page is full is
-- rewritten into compressed halves.  Every query must answer as heap does.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

-- the parameters: pg_class.reloptions, checked like an index's
CREATE TABLE tz (id bigint, k int, t text, n numeric, f float8)
  USING fractam WITH (compression = 'zstd');
CREATE TABLE tl (id bigint, k int, t text, n numeric, f float8)
  USING fractam WITH (compression = 'lz4', compression_level = 4, fanout = 8);
CREATE TABLE tp (id bigint, k int, t text, n numeric, f float8) USING fractam;
CREATE TABLE th (id bigint, k int, t text, n numeric, f float8);
SELECT relname, reloptions FROM pg_class
WHERE relname IN ('tz', 'tl', 'tp') ORDER BY relname;
CREATE TABLE t_bad (a int) USING fractam WITH (compression = 'brotli');
CREATE TABLE t_bad (a int) USING fractam WITH (compression = 'lz4', compression_level = 13);
CREATE TABLE t_bad (a int) USING fractam WITH (compression_level = 3);
CREATE TABLE t_bad (a int) USING heap WITH (compression = 'lz4');
BEGIN;
ALTER TABLE tp SET (compression = 'lz4');
SELECT reloptions FROM pg_class WHERE relname = 'tp';
ROLLBACK;
SELECT reloptions FROM pg_class WHERE relname = 'tp';

-- the same rows in each (NULLs, wide text, numerics)
INSERT INTO th SELECT g, (g * 7919) % 1000,
  CASE WHEN g % 17 = 0 THEN NULL ELSE 'sensor-' || (g % 300) || repeat('x', g % 40) END,
  (g % 1000) / 10.0, CASE WHEN g % 29 = 0 THEN NULL ELSE g * 0.25 END
FROM generate_series(1, 60000) g;
-- tz is loaded uncompressed, for VACUUM to compress it; the rows that go
-- one at a time into tl, a compressed table others see, are compressed
-- behind each append point as they come (src/ft/ft_seal.c), until the
-- pages those merges free and one statement cannot reuse before it ends
-- are 128 (2048 by default): the rest waits for VACUUM
SET fractam.debug_seal_max_waiting = 128;
ALTER TABLE tz SET (compression = 'none');
INSERT INTO tz SELECT * FROM th ORDER BY id;
ALTER TABLE tz SET (compression = 'zstd');
INSERT INTO tl SELECT * FROM th ORDER BY id;
INSERT INTO tp SELECT * FROM th ORDER BY id;
RESET fractam.debug_seal_max_waiting;
CREATE INDEX tz_id ON tz USING fractam (id);
CREATE INDEX tz_k ON tz USING fractam (k);
CREATE INDEX tl_id ON tl USING fractam (id);
CREATE INDEX th_id ON th (id);

-- does a table hold what th holds (as a multiset of rows)?
CREATE FUNCTION same_as_heap(tbl regclass) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM ((TABLE th EXCEPT ALL TABLE %s) UNION ALL
	                (TABLE %s EXCEPT ALL TABLE th)) d', tbl, tbl) INTO n;
	RETURN n = 0;
END $$;
CREATE TEMP TABLE before AS
SELECT c.relname, s.leaf_pages FROM pg_class c, fractam_stats(c.oid) s
WHERE c.relname IN ('tz', 'tl', 'tp');
SELECT c.relname, s.compressed_leaf_pages > 0 AS some_compressed,
       s.free_pages BETWEEN 128 AND 128 + 6 AS merges_stopped_at_128_free,
       s.leaf_items = 60000 AS all_rows
FROM pg_class c, fractam_stats(c.oid) s
WHERE c.relname IN ('tz', 'tl') ORDER BY c.relname;
SELECT fractam_verify('tl'), same_as_heap('tl');

-- VACUUM compresses all leaves but the last of each level-1 node's first
-- and the append point (tz: three leaves' rows a page, zstd; tl: the
-- leaves its load left uncompressed); the uncompressed table stays as it
-- was
VACUUM tz;
VACUUM tl;
VACUUM tp;
SELECT c.relname, s.compressed_leaf_pages * 4 > s.leaf_pages * 3 AS mostly_compressed,
       s.leaf_pages * 2 < b.leaf_pages AS under_half,
       s.leaf_pages * 3 < b.leaf_pages * 2 AS under_two_thirds,
       s.compression_ratio > 2 AS ratio_over_2,
       s.leaf_items = 60000 AS all_rows
FROM pg_class c, fractam_stats(c.oid) s, before b
WHERE c.relname IN ('tz', 'tl') AND b.relname = 'tp' ORDER BY c.relname;
SELECT compressed_leaf_pages = 0 AS tp_uncompressed FROM fractam_stats('tp');
SELECT fractam_verify('tz'), fractam_verify('tl'), fractam_verify('tz_id');
SELECT same_as_heap('tz'), same_as_heap('tl');

-- every scan kind reads compressed leaves
SELECT ft_check('index', 'SELECT * FROM tz WHERE id BETWEEN 1000 AND 9000');
SELECT ft_check('bitmap', 'SELECT * FROM tz WHERE k BETWEEN 10 AND 30');
SELECT ft_check('index', 'SELECT * FROM tz WHERE id = 31337');
SELECT ft_check('index', 'SELECT * FROM tl WHERE id BETWEEN 50000 AND 50500');
SELECT * FROM tz WHERE ctid = (SELECT ctid FROM tz WHERE id = 4242);
SELECT count(*), sum(id) FROM tz WHERE ctid >= '(10,1)' AND ctid < '(40,1)';
SELECT count(*), sum(id) FROM th WHERE id BETWEEN 10 * 291 + 1 AND 40 * 291;
ANALYZE tz;
SELECT reltuples BETWEEN 55000 AND 65000 AS analyzed FROM pg_class WHERE relname = 'tz';

-- a bulk DELETE of ascending rows: one change per kind per leaf, the
-- leaves stay compressed
CREATE TEMP TABLE c0 AS SELECT compressed_leaf_pages FROM fractam_stats('tz');
DELETE FROM tz WHERE id BETWEEN 10001 AND 10400;
DELETE FROM tl WHERE id BETWEEN 10001 AND 10400;
DELETE FROM th WHERE id BETWEEN 10001 AND 10400;
SELECT s.compressed_leaf_pages >= c0.compressed_leaf_pages AS still_compressed
FROM fractam_stats('tz') s, c0;
SELECT same_as_heap('tz'), same_as_heap('tl');

-- deletes, updates and row locks spread over every leaf, rolled back and
-- committed, in savepoints; beyond what change areas take, leaves are
-- rewritten
BEGIN;
DELETE FROM tz WHERE id % 5 = 0;
SELECT count(*) FROM tz;
ROLLBACK;
SELECT same_as_heap('tz');
BEGIN;
UPDATE tz SET k = k + 1 WHERE id % 7 = 0;
SAVEPOINT s1;
DELETE FROM tz WHERE id % 11 = 0;
ROLLBACK TO s1;
UPDATE tz SET t = t || '!' WHERE id % 13 = 0;
COMMIT;
UPDATE th SET k = k + 1 WHERE id % 7 = 0;
UPDATE th SET t = t || '!' WHERE id % 13 = 0;
UPDATE tl SET k = k + 1 WHERE id % 7 = 0;
UPDATE tl SET t = t || '!' WHERE id % 13 = 0;
SELECT same_as_heap('tz'), same_as_heap('tl');
BEGIN;
SELECT count(*) FROM (SELECT 1 FROM tz WHERE id BETWEEN 20000 AND 30000 FOR UPDATE) x;
SELECT count(*) FROM (SELECT 1 FROM tl WHERE id % 3 = 0 FOR KEY SHARE) x;
SELECT count(*) FROM (SELECT 1 FROM tl WHERE id % 3 = 1 FOR SHARE) x;
COMMIT;
SELECT same_as_heap('tz'), same_as_heap('tl');
SELECT fractam_verify('tz'), fractam_verify('tl'), fractam_verify('tz_id'),
       fractam_verify('tz_k');
SELECT ft_check('index', 'SELECT id, k FROM tz WHERE k BETWEEN 100 AND 120');

-- a point read through an index decodes only the part of the compressed
-- leaf that holds its row, and applies the changes of that part's rows:
-- every row read by id, one index fetch each, is heap's row
CREATE FUNCTION rows_by_id_differ(tbl regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	PERFORM set_config('enable_hashjoin', 'off', true),
	        set_config('enable_mergejoin', 'off', true),
	        set_config('enable_seqscan', 'off', true),
	        set_config('enable_bitmapscan', 'off', true);
	EXECUTE format('SELECT count(*) FROM th h LEFT JOIN %s z ON z.id = h.id
	                WHERE z.id IS NULL OR row(z.*)::text IS DISTINCT FROM row(h.*)::text',
	               tbl) INTO n;
	RETURN n;
END $$;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM th h LEFT JOIN tz z ON z.id = h.id
WHERE z.id IS NULL OR row(z.*)::text IS DISTINCT FROM row(h.*)::text;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT rows_by_id_differ('tz') AS tz_differ, rows_by_id_differ('tl') AS tl_differ;
SET fractam.decoded_leaf_cache = 0;
SELECT rows_by_id_differ('tz') AS tz_differ_uncached;
RESET fractam.decoded_leaf_cache;

-- one row after another in one leaf, each its own change: the change
-- area fills and the leaf is rewritten, the rows stay right
DO $$
BEGIN
	FOR i IN 1..120 LOOP
		UPDATE tz SET f = i WHERE id = 30000 + i * 3;
		UPDATE th SET f = i WHERE id = 30000 + i * 3;
		UPDATE tl SET f = i WHERE id = 30000 + i * 3;
	END LOOP;
END $$;
SELECT same_as_heap('tz'), same_as_heap('tl');
SELECT fractam_verify('tz'), fractam_verify('tl');

-- a sequential scan of a table with more pages than the decoded-leaf cache
-- has room for leaves decodes each compressed leaf straight into its copy,
-- past the cache (those the cache holds are copied from it): the same rows
-- with the cache off, and with room for 8 leaves, after index fetches put
-- parts of leaves into it
SELECT pg_relation_size('tz') > 8 * 8192 AS tz_larger_than_8_leaves;
SET fractam.decoded_leaf_cache = 0;
SELECT same_as_heap('tz') AS tz_uncached, same_as_heap('tl') AS tl_uncached;
SET fractam.decoded_leaf_cache = '256kB';
SELECT rows_by_id_differ('tz') AS tz_differ_small_cache;
SELECT same_as_heap('tz') AS tz_small_cache, same_as_heap('tl') AS tl_small_cache;
RESET fractam.decoded_leaf_cache;

-- VACUUM after all that (dead sets and freezing in compressed leaves: new
-- frames), then everything is compressed again
DELETE FROM tz WHERE id % 4 = 0;
DELETE FROM tl WHERE id % 4 = 0;
DELETE FROM th WHERE id % 4 = 0;
VACUUM tz;
VACUUM (FREEZE) tl;
VACUUM tz;
SELECT same_as_heap('tz'), same_as_heap('tl');
SELECT fractam_verify('tz'), fractam_verify('tl'), fractam_verify('tz_id');
SELECT age(relfrozenxid) < 100 AS frozen FROM pg_class WHERE relname = 'tl';
SELECT c.relname, s.compressed_leaf_pages * 2 > s.leaf_pages AS mostly_compressed
FROM pg_class c, fractam_stats(c.oid) s
WHERE c.relname IN ('tz', 'tl') ORDER BY c.relname;
SELECT ft_check('index', 'SELECT * FROM tz WHERE id BETWEEN 100 AND 20000');

-- without the decoded-leaf cache, each read decodes on its own
SET fractam.decoded_leaf_cache = 0;
UPDATE tz SET n = n + 1 WHERE id % 9 = 1;
UPDATE th SET n = n + 1 WHERE id % 9 = 1;
SELECT same_as_heap('tz');
SELECT ft_check('index', 'SELECT * FROM tz WHERE id BETWEEN 5000 AND 7000');
RESET fractam.decoded_leaf_cache;

-- rewrites: a new method applies to the leaves written from then on;
-- VACUUM FULL and CLUSTER write every leaf compressed with it but the last
-- (the append point, as VACUUM leaves it): a smaller file; the rows and
-- their order stay
ALTER TABLE tl SET (compression = 'zstd');
SELECT reloptions FROM pg_class WHERE relname = 'tl';
SELECT pg_relation_size('tl') AS tl_size_before \gset
CREATE TEMP TABLE tl_copy AS SELECT * FROM tl;
CREATE FUNCTION tl_same() RETURNS bool LANGUAGE sql AS $$
  SELECT count(*) = 0 FROM ((TABLE tl EXCEPT ALL TABLE tl_copy) UNION ALL
                            (TABLE tl_copy EXCEPT ALL TABLE tl)) d $$;
VACUUM FULL tl;
SELECT s.compressed_leaf_pages = s.leaf_pages - 1 AS rewritten_compressed,
       s.compression_ratio > 2 AS ratio_over_2,
       pg_relation_size('tl') * 2 < :tl_size_before AS file_halved
FROM fractam_stats('tl') s;
SELECT tl_same(), fractam_verify('tl'), fractam_verify('tl_id');
SELECT ctid, id FROM tl ORDER BY ctid LIMIT 2;
SELECT ft_check('index', 'SELECT * FROM tl WHERE id BETWEEN 2000 AND 2600');
-- the rewritten table takes new rows at its end and changes in its frames
INSERT INTO tl SELECT id + 200000, k, t, n, f FROM th WHERE id <= 500;
INSERT INTO tl_copy SELECT id + 200000, k, t, n, f FROM th WHERE id <= 500;
UPDATE tl SET k = k + 1 WHERE id % 101 = 0;
UPDATE tl_copy SET k = k + 1 WHERE id % 101 = 0;
SELECT tl_same(), fractam_verify('tl');
CREATE INDEX tl_k ON tl (k);
CLUSTER tl USING tl_k;
SELECT s.compressed_leaf_pages = s.leaf_pages - 1 AS clustered_compressed
FROM fractam_stats('tl') s;
SELECT tl_same(), fractam_verify('tl'), fractam_verify('tl_id');
SELECT count(*) AS out_of_order FROM
  (SELECT k < lag(k) OVER (ORDER BY ctid) AS back FROM tl) x WHERE back;
DROP INDEX tl_k;
DROP FUNCTION tl_same();
-- the uncompressed table is rewritten uncompressed
VACUUM FULL tp;
SELECT compressed_leaf_pages = 0 AS tp_uncompressed FROM fractam_stats('tp');
SELECT fractam_verify('tp');
-- leaves compressed before a RESET stay so; VACUUM rewrites them with
-- their own method when it freezes more than their change areas take (the
-- lock-only xmax of every other row: patches that differ from row to row)
BEGIN;
SELECT count(*) FROM (SELECT 1 FROM tl WHERE id % 2 = 0 FOR KEY SHARE) x;
COMMIT;
ALTER TABLE tl RESET (compression, compression_level);
SELECT reloptions FROM pg_class WHERE relname = 'tl';
CREATE TEMP TABLE tl_before AS SELECT * FROM tl;
VACUUM (FREEZE) tl;
SELECT count(*) = 0 AS unchanged
FROM ((TABLE tl_before EXCEPT ALL TABLE tl) UNION ALL (TABLE tl EXCEPT ALL TABLE tl_before)) d;
SELECT fractam_verify('tl');
SELECT compressed_leaf_pages > 0 AS still_compressed FROM fractam_stats('tl');
INSERT INTO tl SELECT id + 100000, k, t, n, f FROM th;
VACUUM tl;
SELECT fractam_verify('tl');
SELECT count(*) FROM tl;
TRUNCATE tz;
SELECT count(*) FROM tz;
SELECT leaf_pages, compressed_leaf_pages FROM fractam_stats('tz');
INSERT INTO tz SELECT * FROM th;
VACUUM tz;
SELECT same_as_heap('tz'), fractam_verify('tz');

-- COPY into a compressed table: when the right edge is full, its split
-- takes the batch's next rows along and leaves compressed pages behind
-- (fill to fit), the new append point uncompressed: the table is small
-- before any VACUUM.  Batches that bring less than two leaves' worth
-- (a COPY of 50 rows) seal the leaf uncompressed, as before.  An
-- uncompressed table's COPY fills its leaves as ever.
COPY (SELECT * FROM th ORDER BY id) TO '/tmp/fractam_table_compression.copy';
CREATE TABLE tcz (LIKE th) USING fractam WITH (compression = 'zstd', fanout = 8);
CREATE TABLE tcp (LIKE th) USING fractam;
CREATE INDEX tcz_id ON tcz USING fractam (id);
COPY tcz FROM '/tmp/fractam_table_compression.copy';
COPY tcp FROM '/tmp/fractam_table_compression.copy';
SELECT s.compressed_leaf_pages * 10 > s.leaf_pages * 8 AS mostly_compressed,
       s.compression_ratio > 2 AS ratio_over_2,
       pg_relation_size('tcz') * 2 < pg_relation_size('tcp') AS file_halved,
       s.leaf_items = (SELECT count(*) FROM th) AS all_rows
FROM fractam_stats('tcz') s;
SELECT compressed_leaf_pages = 0 AS tcp_uncompressed FROM fractam_stats('tcp');
SELECT same_as_heap('tcz'), fractam_verify('tcz'), fractam_verify('tcz_id');
SELECT rows_by_id_differ('tcz') AS tcz_differ;
SELECT ft_check('index', 'SELECT * FROM tcz WHERE id BETWEEN 1000 AND 9000');
-- a COPY rolled back, and changes in the transaction that loaded the rows
BEGIN;
COPY tcz FROM '/tmp/fractam_table_compression.copy';
SELECT count(*) = 2 * (SELECT count(*) FROM th) AS twice FROM tcz;
ROLLBACK;
SELECT same_as_heap('tcz');
-- VACUUM removes the aborted rows from the compressed leaves they filled
VACUUM tcz;
SELECT s.leaf_items = (SELECT count(*) FROM th) AS aborted_rows_removed
FROM fractam_stats('tcz') s;
SELECT same_as_heap('tcz'), fractam_verify('tcz'), fractam_verify('tcz_id');
BEGIN;
TRUNCATE tcz;
COPY tcz FROM '/tmp/fractam_table_compression.copy';
SELECT compressed_leaf_pages AS tcz_loaded FROM fractam_stats('tcz') \gset
UPDATE tcz SET k = k + 1 WHERE id % 7 = 0;
DELETE FROM tcz WHERE id % 11 = 0;
SELECT count(*) FROM (SELECT 1 FROM tcz WHERE id % 3 = 0 FOR SHARE) x;
COMMIT;
UPDATE th SET k = k + 1 WHERE id % 7 = 0;
DELETE FROM th WHERE id % 11 = 0;
-- (the new versions of the UPDATE fill uncompressed leaves, one at a time)
SELECT compressed_leaf_pages >= :tcz_loaded AS loaded_leaves_stay_compressed
FROM fractam_stats('tcz');
SELECT same_as_heap('tcz'), fractam_verify('tcz'), fractam_verify('tcz_id');
SELECT rows_by_id_differ('tcz') AS tcz_differ;
-- small batches: each leaf fills and seals uncompressed
CREATE TABLE tcs (LIKE th) USING fractam WITH (compression = 'lz4');
DO $$
BEGIN
	FOR i IN 0..59 LOOP
		EXECUTE format('COPY tcs FROM PROGRAM %L',
					   format('sed -n %s,%sp /tmp/fractam_table_compression.copy',
							  i * 50 + 1, i * 50 + 50));
	END LOOP;
END $$;
SELECT compressed_leaf_pages = 0 AS small_batches_uncompressed, leaf_items
FROM fractam_stats('tcs');
SELECT fractam_verify('tcs');
-- freezing the loaded rows writes their frames anew
VACUUM (FREEZE) tcz;
SELECT same_as_heap('tcz'), fractam_verify('tcz'), fractam_verify('tcz_id');
SELECT age(relfrozenxid) < 100 AS frozen FROM pg_class WHERE relname = 'tcz';
SELECT rows_by_id_differ('tcz') AS tcz_differ;
DROP TABLE tcz, tcp, tcs;

-- CREATE TABLE AS, SELECT INTO, a rewriting ALTER TABLE and a COPY that
-- inserts row by row (a volatile default) into a table created in the
-- transaction, without indexes: the rows are kept and stored a range of
-- row ids at a time (compressed or not), so they fill compressed leaves
-- as COPY's batches do; the table is read right after, in the same
-- transaction too
CREATE TABLE tca USING fractam WITH (compression = 'lz4') AS
  SELECT * FROM th ORDER BY id;
CREATE TABLE tcu USING fractam AS SELECT * FROM th ORDER BY id;
SELECT s.compressed_leaf_pages * 10 > s.leaf_pages * 9 AS mostly_compressed,
       pg_relation_size('tca') * 2 < pg_relation_size('tcu') AS file_halved,
       s.leaf_items = (SELECT count(*) FROM th) AS all_rows
FROM fractam_stats('tca') s;
SELECT same_as_heap('tca'), fractam_verify('tca');
SELECT same_as_heap('tcu'), fractam_verify('tcu');
SELECT ctid, id FROM tca ORDER BY ctid LIMIT 2;
BEGIN;
SET LOCAL fractam.default_compression = 'zstd';
SET LOCAL default_table_access_method = fractam;
SELECT * INTO tci FROM th;
SELECT count(*) = (SELECT count(*) FROM th) AS all_rows_in_transaction FROM tci;
UPDATE tci SET k = -k WHERE id % 5 = 0;
UPDATE tci SET k = -k WHERE id % 5 = 0;
COMMIT;
SELECT compressed_leaf_pages > 0 AS compressed FROM fractam_stats('tci');
SELECT same_as_heap('tci'), fractam_verify('tci');
ALTER TABLE tca ALTER COLUMN k TYPE bigint;
ALTER TABLE tca ALTER COLUMN k TYPE int;
SELECT s.compressed_leaf_pages * 10 > s.leaf_pages * 9 AS rewritten_compressed
FROM fractam_stats('tca') s;
SELECT same_as_heap('tca'), fractam_verify('tca');
-- an error caught in a subtransaction of the query keeps the rows so far;
-- an error of the statement, or a ROLLBACK, drops them with the table
CREATE FUNCTION tc_div(a bigint, b int) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	RETURN a / b;
EXCEPTION WHEN division_by_zero THEN
	RETURN a;
END $$;
CREATE TABLE tce USING fractam WITH (compression = 'zstd') AS
  SELECT tc_div(id, (id % 1000)::int) * 0 + id AS id, k, t, n, f FROM th ORDER BY id;
SELECT same_as_heap('tce'), fractam_verify('tce');
CREATE TABLE tcf USING fractam WITH (compression = 'zstd') AS
  SELECT id / (id - 30001) AS id, k, t, n, f FROM th ORDER BY id;
BEGIN;
CREATE TABLE tcf USING fractam WITH (compression = 'zstd') AS SELECT * FROM th;
ROLLBACK;
SELECT count(*) FROM pg_class WHERE relname = 'tcf';
CREATE TABLE tcf USING fractam WITH (compression = 'zstd') AS SELECT * FROM th;
SELECT same_as_heap('tcf');
COPY (SELECT * FROM th ORDER BY id) TO '/tmp/fractam_table_compression.copy';
BEGIN;
CREATE TABLE tcv (LIKE th, at timestamptz DEFAULT clock_timestamp())
  USING fractam WITH (compression = 'lz4');
COPY tcv (id, k, t, n, f) FROM '/tmp/fractam_table_compression.copy';
-- such a COPY has no finish_bulk_insert: its end stores the rows (the
-- tree's own count, which no scan flushes)
SELECT s.leaf_items = (SELECT count(*) FROM th) AS stored_by_the_copy
FROM fractam_stats('tcv') s;
SAVEPOINT s1;
TRUNCATE tcv;
ROLLBACK TO s1;
SELECT count(*) = (SELECT count(*) FROM th) AS all_rows_copied FROM tcv;
CREATE TABLE tcw (LIKE tcv) USING fractam WITH (compression = 'lz4');
COPY tcw (id, k, t, n, f) FROM '/tmp/fractam_table_compression.copy';
DROP TABLE tcw;
CREATE TABLE tcw USING fractam AS SELECT * FROM tcv;
SELECT count(*) = (SELECT count(*) FROM th) AS loaded_after_drop FROM tcw;
DROP TABLE tcw;
COMMIT;
ALTER TABLE tcv DROP COLUMN at;
SELECT compressed_leaf_pages > 0 AS compressed FROM fractam_stats('tcv');
SELECT same_as_heap('tcv'), fractam_verify('tcv');
DROP TABLE tca, tcu, tci, tce, tcf, tcv;
DROP FUNCTION tc_div(bigint, int);

-- rows inserted one at a time by many short transactions (the timeseries
-- load's way): the pages each merge behind the append point deletes are
-- reused by this backend's next transactions, so the file stays near the
-- compressed size; the same load into an uncompressed table for scale
CREATE TABLE tsr (LIKE th) USING fractam WITH (compression = 'zstd');
CREATE TABLE tsu (LIKE th) USING fractam;
CREATE PROCEDURE ts_load(tbl regclass) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 0..29 LOOP
		EXECUTE format('INSERT INTO %s SELECT * FROM th WHERE id > $1 AND id <= $2 ORDER BY id',
					   tbl) USING i * 2000, (i + 1) * 2000;
		COMMIT;
	END LOOP;
END $$;
CALL ts_load('tsr');
CALL ts_load('tsu');
SELECT pg_relation_size('tsr') * 2 < pg_relation_size('tsu') AS under_half,
       s.compressed_leaf_pages * 4 > s.leaf_pages * 3 AS mostly_compressed,
       s.free_pages * 4 < s.leaf_pages AS few_free_pages
FROM fractam_stats('tsr') s;
SELECT same_as_heap('tsr'), fractam_verify('tsr');
-- UPDATE's new versions are not compressed at the append point (rows just
-- updated are likely to change again); the old ones' changes go into the
-- change areas of their compressed leaves
CREATE TEMP TABLE tsr_before AS
SELECT leaf_pages - compressed_leaf_pages AS plain FROM fractam_stats('tsr');
UPDATE tsr SET k = k + 1 WHERE id <= 20000;
SELECT (s.leaf_pages - s.compressed_leaf_pages) - b.plain > 100 AS versions_uncompressed
FROM fractam_stats('tsr') s, tsr_before b;
SELECT (SELECT count(*) FROM tsr JOIN th USING (id) WHERE tsr.k = th.k + 1) =
       (SELECT count(*) FROM th WHERE id <= 20000) AS updated,
       (SELECT count(*) FROM tsr) = (SELECT count(*) FROM th) AS all_rows;
SELECT fractam_verify('tsr');
DROP TABLE tsr, tsu, tsr_before;
DROP PROCEDURE ts_load(regclass);

DROP TABLE tz, tl, tp, th;
DROP FUNCTION same_as_heap(regclass);

-- fractam.default_compression: fractam tables created without the option
-- take it, written into their parameters; other tables are left alone,
-- and fractam's parameters on a heap table are still refused
SET fractam.default_compression = 'lz4';
CREATE TABLE td1 (a int, t text) USING fractam;
CREATE TABLE td2 (a int) USING fractam WITH (compression = 'zstd');
CREATE TABLE td3 (a int) USING fractam WITH (fanout = 4);
CREATE TABLE td4 USING fractam AS SELECT 1 AS a;
CREATE TABLE td_heap (a int);
CREATE TABLE td_heap2 (a int) WITH (fillfactor = 50);
CREATE TABLE td_heap3 AS SELECT 1 AS a;
CREATE TABLE td_part (a int) PARTITION BY RANGE (a);
CREATE TABLE td_part1 PARTITION OF td_part FOR VALUES FROM (0) TO (10);
SET default_table_access_method = fractam;
CREATE TABLE td5 (a int);
CREATE TEMP TABLE td6 (a int);
RESET default_table_access_method;
CREATE TABLE td_bad (a int) WITH (fanout = 4);
RESET fractam.default_compression;
CREATE TABLE td7 (a int) USING fractam;
SELECT c.relname, a.amname, c.reloptions FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname LIKE 'td%' ORDER BY c.relname;
INSERT INTO td1 SELECT g, 'row ' || g FROM generate_series(1, 20000) g;
VACUUM td1;
SELECT compressed_leaf_pages > 10 AS compressed FROM fractam_stats('td1');
DROP TABLE td1, td2, td3, td4, td5, td6, td7, td_heap, td_heap2, td_heap3, td_part;

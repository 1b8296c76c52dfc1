-- Row ids far from zero: TID block numbers beyond the file's pages (past
-- 40 million row ids, more than 1 GB of heap pages) and near the limit.
-- Every consumer of TID blocks must stay right: bitmap heap scans (exact
-- and lossy, no prefetch of pages that are not there), BRIN, TID and
-- TID-range scans, TABLESAMPLE, ANALYZE, parallel scans, relation size.
SET fractam.debug_table_first_rowid = 40000000;
CREATE TABLE far (id int, v text) USING fractam;
RESET fractam.debug_table_first_rowid;
INSERT INTO far SELECT g, 'v' || g FROM generate_series(1, 3000) g;
UPDATE far SET v = v || '+' WHERE id % 10 = 0;
DELETE FROM far WHERE id % 100 = 1;
SELECT count(*), sum(id), min(ctid) >= '(137457,1)' AS past_40m FROM far;
-- the file is small; the TID blocks are past its first 1 GB segment
SELECT pg_relation_size('far') < 1024 * 1024 AS small_file,
       (SELECT max(ctid) FROM far) > '(131072,1)' AS tid_blocks_past_1gb;
SELECT rowids_used - 40000000 AS used_here, live_versions, dead_versions
FROM fractam_table_stats('far');
CREATE INDEX far_id ON far (id);
CREATE INDEX far_brin ON far USING brin (id) WITH (pages_per_range = 1);
VACUUM ANALYZE far;
-- relpages counts TID blocks, covering every row id stored
SELECT relpages BETWEEN 137457 AND 137600 AS relpages_in_tid_blocks
FROM pg_class WHERE relname = 'far';
SELECT fractam_verify('far');
SELECT count(*), sum(id) FROM far;		-- after VACUUM

-- bitmap heap scan, exact then lossy (a bitmap of TID blocks past 1 GB)
SET enable_seqscan = off;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM far WHERE id BETWEEN 100 AND 2500;
SELECT count(*), sum(id) FROM far WHERE id BETWEEN 100 AND 2500;
SET work_mem = '64kB';
SELECT count(*), sum(id) FROM far WHERE id BETWEEN 1 AND 3000 OR id = 5;
RESET work_mem;
-- BRIN
DROP INDEX far_id;
EXPLAIN (COSTS OFF) SELECT count(*) FROM far WHERE id BETWEEN 100 AND 200;
SELECT count(*), sum(id) FROM far WHERE id BETWEEN 100 AND 200;
RESET enable_seqscan;
RESET enable_indexscan;
-- TID and TID-range scans
SELECT id FROM far WHERE ctid = (SELECT ctid FROM far WHERE id = 777);
SELECT count(*) = (SELECT count(*) FROM far WHERE id > 0)
FROM far WHERE ctid >= '(137457,1)' AND ctid < '(200000,1)';
SELECT count(*) FROM far WHERE ctid < '(137457,1)';
-- TABLESAMPLE: every sampled row is a real one
SELECT count(*) > 0 AND count(*) < 3000, bool_and(v LIKE 'v%')
FROM far TABLESAMPLE SYSTEM (50) REPEATABLE (7);
SELECT count(*) > 0 FROM far TABLESAMPLE BERNOULLI (10) REPEATABLE (7);
-- parallel sequential scan over the pseudo-blocks
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT count(*), sum(id) FROM far;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE far;

-- near the limit: warnings as the row ids run out, then a clear error
SET fractam.debug_table_first_rowid = 1249835482000;
CREATE TABLE near_end (id int) USING fractam;
RESET fractam.debug_table_first_rowid;
SELECT rowids_used, rowids_left FROM fractam_table_stats('near_end');
INSERT INTO near_end SELECT generate_series(1, 500);
SELECT count(*), max(ctid) FROM near_end;
INSERT INTO near_end SELECT generate_series(1, 500);
SELECT count(*) FROM near_end;
SELECT rowids_left FROM fractam_table_stats('near_end');
-- VACUUM FULL renumbers from the start
VACUUM FULL near_end;
SELECT count(*), min(ctid), max(ctid) FROM near_end;
INSERT INTO near_end VALUES (0);
-- a rewrite whose new file starts near the end, with more rows than it
-- has row ids for, is refused
INSERT INTO near_end SELECT generate_series(1, 600);
SET fractam.debug_table_first_rowid = 1249835482000;
VACUUM FULL near_end;
RESET fractam.debug_table_first_rowid;
SELECT count(*), min(ctid) FROM near_end;
DROP TABLE near_end;

-- The size in TID blocks follows the last row id stored, which planning
-- reads from the rightmost leaf it last found (one page per query): right
-- as that leaf splits and new leaves take the right edge, and after the
-- last rows are deleted and vacuumed away.
SET fractam.debug_table_first_rowid = 40000000;
CREATE TABLE edge (id int, v text) USING fractam WITH (autovacuum_enabled = off);
RESET fractam.debug_table_first_rowid;
-- (ANALYZE sets relpages from the table AM's size, the planner's source;
-- pg_relation_size reads the file)
CREATE FUNCTION edge_blocks(OUT tid_blocks bigint, OUT last_block bigint)
LANGUAGE plpgsql AS $$
BEGIN
	ANALYZE edge;
	SELECT relpages INTO tid_blocks FROM pg_class WHERE relname = 'edge';
	SELECT max((ctid::text::point)[0])::bigint + 1 INTO last_block FROM edge;
END $$;
INSERT INTO edge SELECT g, 'e' FROM generate_series(1, 10) g;
SELECT tid_blocks = last_block AS same, tid_blocks FROM edge_blocks();
INSERT INTO edge SELECT g, repeat('e', 40) FROM generate_series(11, 6000) g;
SELECT tid_blocks = last_block AS same, tid_blocks FROM edge_blocks();
INSERT INTO edge SELECT g, repeat('f', 40) FROM generate_series(6001, 9000) g;
SELECT tid_blocks = last_block AS same, tid_blocks FROM edge_blocks();
SELECT tid_blocks AS before_delete FROM edge_blocks() \gset
DELETE FROM edge WHERE id > 3000;
VACUUM edge;
SELECT tid_blocks = last_block AS same, tid_blocks < :before_delete AS shrank
FROM edge_blocks();
SELECT fractam_verify('edge');
DROP TABLE edge;
DROP FUNCTION edge_blocks();

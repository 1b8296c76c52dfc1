-- The visibility map of fractam tables: VACUUM marks pseudo-blocks whose
-- versions are visible to all, index-only scans then skip the table
-- ("Heap Fetches: 0"), and every insert, update and delete clears the bit
-- of the pseudo-block it changes, so an index-only scan never answers from
-- a stale bit.  relallvisible feeds the planner as for heap.
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TABLE vm (id int PRIMARY KEY, grp int, pad text) USING fractam;
CREATE INDEX vm_grp ON vm (grp);
CREATE INDEX vm_grp_f ON vm USING fractam (grp, id);
INSERT INTO vm SELECT g, g % 10, repeat('x', 50) FROM generate_series(1, 2000) g;

-- before VACUUM: no map yet, the scan visits the table
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM vm WHERE grp = 3;
VACUUM vm;
-- relallvisible counts TID blocks (7 pseudo-blocks of 291 row ids)
SELECT relallvisible FROM pg_class WHERE relname = 'vm';
SELECT pg_relation_size('vm', 'vm') > 0 AS has_map;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM vm WHERE grp = 3;
SELECT count(*) FROM vm WHERE grp = 3;
-- through a btree index too
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM vm WHERE id BETWEEN 100 AND 300;

-- a delete, an update and an insert clear their pseudo-blocks' bits: the
-- index-only scans visit those blocks (and only those) and see the changes
DELETE FROM vm WHERE id = 13;
UPDATE vm SET grp = 4 WHERE id = 1003;
INSERT INTO vm VALUES (2001, 3, 'new');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM vm WHERE grp = 3;
SELECT count(*), sum(id) FROM vm WHERE grp = 3;
SELECT count(*), sum(id) FROM vm WHERE grp = 4;
-- the same answers without any index
SET enable_seqscan = on;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SELECT count(*), sum(id) FROM vm WHERE grp = 3;
SELECT count(*), sum(id) FROM vm WHERE grp = 4;
RESET enable_indexscan;
RESET enable_indexonlyscan;
SET enable_seqscan = off;
-- a rolled-back update leaves the block not all-visible until VACUUM
BEGIN;
UPDATE vm SET grp = 5 WHERE id = 500;
ROLLBACK;
SELECT count(*) FROM vm WHERE grp = 5;
VACUUM vm;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM vm WHERE grp = 3;
SELECT count(*), sum(id) FROM vm WHERE grp = 3;
-- a row lock leaves the bit (it changes no row's visibility)
BEGIN;
SELECT id FROM vm WHERE id = 20 FOR UPDATE;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM vm WHERE grp = 0;
COMMIT;
SELECT fractam_verify('vm');
DROP TABLE vm;
RESET enable_seqscan;
RESET enable_bitmapscan;

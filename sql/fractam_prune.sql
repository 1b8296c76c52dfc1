--
-- fractam_prune: a small fractam table updated over and over must not grow
-- by a version per update until VACUUM.  A full leaf drops the versions no
-- snapshot can see (table_prune.c) and keeps their row ids in dead sets,
-- so that VACUUM still cleans their index entries; queries through every
-- scan kind keep agreeing with sequential scans, pruned TIDs read as
-- nothing, and VACUUM leaves no dead row and no stale index entry.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
CREATE TABLE hot (id int, v int, pad text) USING fractam
	WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX hot_id ON hot USING fractam (id);
CREATE INDEX hot_v ON hot USING btree (v);
INSERT INTO hot SELECT i, 0, repeat('x', 100) FROM generate_series(1, 10) i;

-- one transaction per UPDATE (no snapshot outlives it): 3000 versions
CREATE PROCEDURE hot_updates(n int) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. n LOOP
		UPDATE hot SET v = v + 1 WHERE id = i % 10 + 1;
		COMMIT;
	END LOOP;
END $$;
CALL hot_updates(3000);

-- without pruning: ~3000 versions of ~150 bytes, 55 leaves and more
SELECT pg_relation_size('hot') / 8192 <= 8 AS hot_stays_small;
SELECT count(*), min(v), max(v), sum(v) FROM hot;
-- the pruned versions are dead rows until VACUUM (index entries remain),
-- also for ANALYZE, which autovacuum's dead-row count comes from
SELECT live_versions, dead_versions > 2500 AS pruned_are_dead
FROM fractam_table_stats('hot');
ANALYZE VERBOSE hot;
SELECT ft_check('index', 'SELECT id, v FROM hot WHERE id BETWEEN 3 AND 7');
SELECT ft_check('bitmap', 'SELECT id, v FROM hot WHERE v >= 300');
SELECT ft_check('index', 'SELECT id, v FROM hot WHERE v = 300');
-- a pruned version's TID reads as nothing
SELECT count(*) FROM hot WHERE ctid = '(0,11)';
SELECT count(*) FROM hot WHERE ctid BETWEEN '(0,1)' AND '(5,1)';
SELECT fractam_verify('hot');

VACUUM hot;
SELECT live_versions, dead_versions, recently_dead_versions
FROM fractam_table_stats('hot');
-- the indexes lost the entries of every pruned version
SELECT leaf_items <= 10 AS fractam_index_clean FROM fractam_stats('hot_id');
SELECT ft_check('index', 'SELECT id, v FROM hot WHERE id > 0');
SELECT ft_check('bitmap', 'SELECT id, v FROM hot WHERE v > 0');
SELECT fractam_verify('hot');
SELECT ft_verify_all('hot');

-- more updates after VACUUM reuse nothing stale and stay small
CALL hot_updates(2000);
SELECT pg_relation_size('hot') / 8192 <= 12 AS hot_stays_small;
SELECT count(*), min(v), max(v), sum(v) FROM hot;
SELECT ft_check('index', 'SELECT id, v FROM hot WHERE id BETWEEN 1 AND 10');
VACUUM hot;
SELECT live_versions, dead_versions FROM fractam_table_stats('hot');
SELECT fractam_verify('hot');

-- deletes are pruned too; a rolled-back update's versions are not lost
BEGIN;
UPDATE hot SET v = -1;
ROLLBACK;
DELETE FROM hot WHERE id > 5;
CALL hot_updates(1000);
SELECT count(*), min(v), max(v), sum(v) FROM hot;
SELECT ft_check('index', 'SELECT id, v FROM hot WHERE id BETWEEN 1 AND 10');
SELECT fractam_verify('hot');

DROP PROCEDURE hot_updates(int);
DROP TABLE hot;

--
-- fractam_vacuum: VACUUM must remove the index entries of dead rows wherever
-- they are (leaves or still in buffers), so that heap line pointers can be
-- reused safely: after VACUUM and re-insertion into the freed slots, scans
-- (including index-only scans, which trust the visibility map and the index)
-- must not return stale entries.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
-- buffer every insert below the right edge (no direct apply to cached leaves),
-- so that the buffering and flush paths are exercised
SET fractam.direct_apply = off;

CREATE TABLE va (id int, k int, t text) WITH (autovacuum_enabled = off);
CREATE INDEX va_k ON va USING fractam (k) WITH (fanout = 4);
CREATE INDEX va_t ON va USING fractam (t) WITH (fanout = 3);
-- rows inserted after the build: their entries start in the buffers
INSERT INTO va SELECT i, i, 'old' || i FROM generate_series(1, 20000) i;
DELETE FROM va WHERE id % 2 = 0;
VACUUM va;
SELECT ft_verify_all('va');
-- reuse the freed line pointers with different keys
INSERT INTO va SELECT i, 100000 + i, 'new' || i FROM generate_series(1, 10000) i;
SELECT count(*) > 5000 AS slots_reused FROM va
WHERE k > 100000 AND (ctid::text::point)[0] < (SELECT max((ctid::text::point)[0]) FROM va WHERE k <= 20000);
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('old keys',    'index',  'SELECT id, k FROM va WHERE k <= 20000', false),
	('old evens',   'index',  'SELECT id, k FROM va WHERE k = 2 OR k = 4 OR k = 19998', false),
	('new keys',    'index',  'SELECT id, k FROM va WHERE k > 100000', false),
	('ord',         'index',  'SELECT k FROM va ORDER BY k', true),
	('bitmap old',  'bitmap', 'SELECT id FROM va WHERE k BETWEEN 1000 AND 3000', false),
	('text old',    'index',  'SELECT id, t FROM va WHERE t >= ''old'' AND t < ''olde''', false),
	('text new',    'bitmap', 'SELECT id, t FROM va WHERE t LIKE ''new%'' AND t > ''new''', false)
) v(label, mode, q, ord);
VACUUM va;
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('ios old',     'ios', 'SELECT k FROM va WHERE k <= 20000', false),
	('ios evens',   'ios', 'SELECT k FROM va WHERE k IN (2, 4, 6, 19998)', false),
	('ios all',     'ios', 'SELECT k FROM va ORDER BY k', true),
	('ios text',    'ios', 'SELECT t FROM va WHERE t < ''old2''', false)
) v(label, mode, q, ord);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT k FROM va WHERE k <= 20000;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- delete everything, vacuum, and the index answers nothing
DELETE FROM va;
VACUUM va;
SELECT ft_verify_all('va');
SELECT ft_check('index', 'SELECT k FROM va WHERE k > 0');
SELECT ft_check('ios', 'SELECT k FROM va ORDER BY k DESC LIMIT 10', true);
-- and fills up again
INSERT INTO va SELECT i, i % 1000, 'again' || i FROM generate_series(1, 20000) i;
SELECT ft_check('index', 'SELECT id FROM va WHERE k = 999');
SELECT ft_verify_all('va');

-- updates: old versions become dead, HOT and non-HOT
UPDATE va SET t = t || 'u' WHERE id % 3 = 0;
UPDATE va SET k = k + 1000 WHERE id % 3 = 1;
VACUUM va;
SELECT ft_verify_all('va');
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('k moved', 'index', 'SELECT id FROM va WHERE k >= 1000', false),
	('k stay',  'index', 'SELECT id FROM va WHERE k = 500', false),
	('t',       'index', 'SELECT id FROM va WHERE t > ''again1999''  AND t < ''again2''', false)
) v(label, mode, q, ord);

-- VACUUM variants
DELETE FROM va WHERE id % 10 = 0;
VACUUM (INDEX_CLEANUP off) va;
SELECT ft_verify_all('va');
SELECT ft_check('index', 'SELECT id FROM va WHERE k = 10');
VACUUM (INDEX_CLEANUP on, FREEZE) va;
SELECT ft_verify_all('va');
SELECT ft_check('index', 'SELECT id FROM va WHERE k = 10');
VACUUM (PARALLEL 2) va;
VACUUM ANALYZE va;
SELECT ft_verify_all('va');
-- in a transaction that rolls back, the deleted rows come back
BEGIN;
DELETE FROM va WHERE k < 100;
ROLLBACK;
VACUUM va;
SELECT ft_check('index', 'SELECT id FROM va WHERE k < 100');
SELECT ft_verify_all('va');

DROP TABLE va;

-- VACUUM of a table with nothing to remove (autovacuum of an insert-only
-- table) skips index vacuuming; the cleanup call must then not read the
-- index either (it would evict the inserters' working set)
CREATE TABLE vi (k int);
CREATE INDEX vi_k ON vi USING fractam (k) WITH (fanout = 4);
INSERT INTO vi SELECT (i * 7919) % 20011 FROM generate_series(1, 20000) i;
SELECT pg_stat_force_next_flush();
SELECT idx_blks_read + idx_blks_hit AS vi_before
FROM pg_statio_all_indexes WHERE indexrelid = 'vi_k'::regclass \gset
VACUUM vi;
SELECT pg_stat_force_next_flush();
SELECT idx_blks_read + idx_blks_hit - :vi_before AS index_pages_read_by_vacuum
FROM pg_statio_all_indexes WHERE indexrelid = 'vi_k'::regclass;
-- with dead rows it does read it, and removes their entries
DELETE FROM vi WHERE k < 1000;
SELECT ft_wait_for_old_snapshots();
VACUUM vi;
SELECT pg_stat_force_next_flush();
SELECT idx_blks_read + idx_blks_hit - :vi_before > 0 AS index_read_by_vacuum
FROM pg_statio_all_indexes WHERE indexrelid = 'vi_k'::regclass;
SELECT leaf_items + buffered_messages AS entries FROM fractam_stats('vi_k');
SELECT ft_verify_all('vi');
DROP TABLE vi;

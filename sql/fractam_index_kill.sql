--
-- fractam_index_kill: entries whose rows an index scan found dead to everyone
-- (the executor's kill_prior_tuple) are removed from the index when the scan
-- ends (nbtree marks them LP_DEAD instead; fractam leaves have no hint bits).
-- A queue whose consumers read the head through the index must not read the
-- consumed rows' entries again and again until VACUUM.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

CREATE TABLE kq_f (id int, payload text) USING fractam
  WITH (autovacuum_enabled = off);
CREATE INDEX kq_f_id ON kq_f USING fractam (id);
CREATE TABLE kq_h (id int, payload text) USING heap
  WITH (autovacuum_enabled = off);
CREATE INDEX kq_h_id ON kq_h USING fractam (id);
INSERT INTO kq_f SELECT g, md5(g::text) FROM generate_series(1, 10000) g;
INSERT INTO kq_h SELECT g, md5(g::text) FROM generate_series(1, 10000) g;
DELETE FROM kq_f WHERE id <= 4000;
DELETE FROM kq_h WHERE id <= 4000;
SELECT leaf_items + buffered_messages AS entries_before FROM fractam_stats('kq_f_id');

-- the head of the queue through the index: the scan passes 4000 dead rows
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM kq_f WHERE id > 0 ORDER BY id LIMIT 1;
SELECT id FROM kq_f WHERE id > 0 ORDER BY id LIMIT 1;
SELECT id FROM kq_h WHERE id > 0 ORDER BY id LIMIT 1;
-- their entries are gone from both indexes
SELECT leaf_items + buffered_messages AS entries_after FROM fractam_stats('kq_f_id');
SELECT leaf_items + buffered_messages AS entries_after FROM fractam_stats('kq_h_id');
SELECT fractam_verify('kq_f_id'), fractam_verify('kq_h_id');

-- a consumer loop: take the 100 oldest, delete them, read the head again
DO $$
DECLARE
	head int;
BEGIN
	FOR i IN 1 .. 30 LOOP
		DELETE FROM kq_f WHERE id IN (SELECT id FROM kq_f WHERE id > 0 ORDER BY id LIMIT 100);
		COMMIT;
		SELECT id INTO head FROM kq_f WHERE id > 0 ORDER BY id LIMIT 1;
		COMMIT;
	END LOOP;
END $$;
SELECT min(id), count(*) FROM kq_f;
-- 3000 more rows consumed, and the index holds about what is left
SELECT leaf_items + buffered_messages < 3200 AS index_follows_queue
FROM fractam_stats('kq_f_id');
-- results through the index are those of a sequential scan
SELECT count(*), sum(id) FROM kq_f WHERE id > 0;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*), sum(id) FROM kq_f;

-- rows deleted by a transaction still running are not dead to everyone:
-- a scan passing them removes nothing, and after the ROLLBACK every row is
-- found through the index again
BEGIN;
DELETE FROM kq_f WHERE id <= 8000;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT id FROM kq_f WHERE id > 0 ORDER BY id LIMIT 1;
ROLLBACK;
SELECT count(*), min(id) FROM kq_f WHERE id > 0;
SELECT fractam_verify('kq_f_id');

-- a backward scan kills its dead entries in descending order: they are
-- removed all the same
DELETE FROM kq_f WHERE id > 9900;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id FROM kq_f WHERE id > 0 ORDER BY id DESC LIMIT 1;
SELECT count(*) AS dead_entries_left FROM (
  SELECT leaf_items + buffered_messages - (SELECT count(*) FROM kq_f) AS n
  FROM fractam_stats('kq_f_id')) s WHERE n > 0;

-- the removal looks for each entry in the leaf the scan saw it in; where
-- that leaf split in the meantime (a cursor held open across inserts into
-- its range), the entries that moved are found with a descent
CREATE TABLE kc (id int, pad text) WITH (autovacuum_enabled = off);
CREATE INDEX kc_id ON kc USING fractam (id, pad);
INSERT INTO kc SELECT g * 100, repeat('p', 100) FROM generate_series(1, 200) g;
DELETE FROM kc WHERE id BETWEEN 3000 AND 17000;
SELECT leaf_items + buffered_messages AS entries_before FROM fractam_stats('kc_id');
BEGIN;
DECLARE c CURSOR FOR SELECT id FROM kc WHERE id > 2000 ORDER BY id;
FETCH 10 FROM c;
INSERT INTO kc SELECT 2000 + g, repeat('q', 100) FROM generate_series(1, 15000, 7) g;
CLOSE c;
COMMIT;
SELECT leaf_items + buffered_messages - (SELECT count(*) FROM kc) AS dead_entries_left
FROM fractam_stats('kc_id');
SELECT ft_check('index', 'SELECT id, pad FROM kc WHERE id > 2500 AND id < 18000');
SELECT fractam_verify('kc_id');
RESET enable_seqscan;
RESET enable_bitmapscan;

DROP TABLE kq_f, kq_h, kc;

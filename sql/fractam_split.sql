--
-- fractam_split: leaf splits must be balanced.  Random inserts into a
-- bulk-built index split full leaves; if a split left one page full and
-- moved only the new entry right, every later insert into the full page
-- would split again and the index would fill with nearly empty leaves.
-- But keys appended at many points at once, like (sensor, time), must not
-- leave every leaf half empty: there a split puts the new entry at the end
-- of the left page ("split after new item").
--
CREATE TABLE sp (a int);
INSERT INTO sp SELECT (i * 7919) % 200003 FROM generate_series(1, 100000) i;
CREATE INDEX sp_a ON sp USING fractam (a) WITH (fillfactor = 100);
-- direct apply (cached leaves) and buffered flushes both split leaves
INSERT INTO sp SELECT (i * 104729) % 200003 FROM generate_series(1, 20000) i;
SET fractam.direct_apply = off;
INSERT INTO sp SELECT (i::int8 * 15485863 % 200003)::int FROM generate_series(1, 20000) i;
RESET fractam.direct_apply;
SELECT fractam_verify('sp_a');
-- an int4 entry takes 20 bytes, so a full leaf holds ~400: after splits
-- the average must stay well above a third of that
SELECT leaf_items + buffered_messages = 140000 AS all_entries,
       leaf_items::float8 / leaf_pages > 150 AS leaves_not_sparse
FROM fractam_stats('sp_a');
-- an insert into a just-split leaf must not split it again
SELECT splits AS before FROM fractam_stats('sp_a') \gset
INSERT INTO sp VALUES (1), (3), (5);
SELECT splits - :before <= 1 AS at_most_one_split FROM fractam_stats('sp_a');
DROP TABLE sp;

-- 50 sensors, each appended to 2000 times (5 leaves), one time step after
-- the other: every insert is the last of its sensor's run, with the next
-- sensor after it (balanced splits: ~215 entries per leaf, btree ~320)
CREATE TABLE sp2 (sensor int, t int);
CREATE INDEX sp2_st ON sp2 USING fractam (sensor, t);
INSERT INTO sp2 SELECT s, t FROM generate_series(1, 2000) t, generate_series(1, 50) s ORDER BY t, s;
SELECT fractam_verify('sp2_st');
-- a (int4, int4) entry takes 20 bytes, a leaf holds ~400
SELECT leaf_items + buffered_messages = 100000 AS all_entries,
       leaf_items::float8 / leaf_pages > 300 AS leaves_filled
FROM fractam_stats('sp2_st');
SELECT count(*) FROM sp2 WHERE sensor = 25 AND t > 1990;
-- the same load into a non-unique index with one column: equal keys grow
-- by heap TID
CREATE TABLE sp3 (sensor int);
CREATE INDEX sp3_s ON sp3 USING fractam (sensor);
INSERT INTO sp3 SELECT s FROM generate_series(1, 2000) t, generate_series(1, 50) s ORDER BY t, s;
SELECT fractam_verify('sp3_s');
SELECT leaf_items::float8 / leaf_pages > 300 AS leaves_filled
FROM fractam_stats('sp3_s');
DROP TABLE sp2, sp3;

-- Internal splits with long keys.  Keys of a sixth of a page leave room
-- for only a few pivots per node.  A split that counted the moving
-- separator once (and the first pivot, which has no key, like the others)
-- put three of four children left and one right; such one-child halves
-- stacked into chains that added levels without fanout, and a level-2 node
-- could be left unable to take the pivot of its child's split: "no room
-- for a new pivot".  Random keys, then a buffered load concentrated on one
-- key range (its level-1 node fills with messages while it routes leaves).
CREATE TABLE lk (k int, pad text);
ALTER TABLE lk ALTER pad SET STORAGE plain;
CREATE INDEX lk_k ON lk USING fractam (k, pad) WITH (fanout = 4);
CREATE FUNCTION lk_pad(g int, n int) RETURNS text LANGUAGE sql AS
$$ SELECT string_agg(md5(g::text || 'p' || i), '') FROM generate_series(1, n) i $$;
INSERT INTO lk SELECT (i * 7919) % 100003, lk_pad(i, 48) FROM generate_series(1, 3000) i;
SET fractam.direct_apply = off;
INSERT INTO lk SELECT 50000 + i % 100, lk_pad(i, 42) FROM generate_series(3001, 7000) i;
INSERT INTO lk SELECT (i * 7919) % 100003, lk_pad(i, 45) FROM generate_series(7001, 9000) i;
RESET fractam.direct_apply;
SELECT fractam_verify('lk_k');
-- every entry there; with 9000 entries and 2 to 4 children per internal
-- node the tree keeps about 9 levels (it had 17, and 40 and more with
-- keys of 2 kB)
SELECT leaf_items + buffered_messages AS entries, height <= 11 AS not_degenerate
FROM fractam_stats('lk_k');
SET enable_seqscan = off;
SELECT count(*) FROM lk WHERE k >= 50000 AND k < 50100;
RESET enable_seqscan;
SELECT count(*) FROM lk WHERE k >= 50000 AND k < 50100;
-- keys over a fifth of a page are refused (at btree's third of a page the
-- tree degenerated), as btree refuses those over a third
DO $$
BEGIN
	INSERT INTO lk VALUES (1, lk_pad(1, 70));
	RAISE NOTICE 'key of 2240 bytes: accepted';
EXCEPTION WHEN program_limit_exceeded THEN
	RAISE NOTICE 'key of 2240 bytes: %', SQLERRM;
END $$;
DROP TABLE lk;
DROP FUNCTION lk_pad(int, int);

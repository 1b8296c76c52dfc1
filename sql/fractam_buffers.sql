--
-- Shared-buffer use of direct inserts.  An insert into a leaf that is in
-- shared buffers pins it through the buffer it was seen in
-- (ReadRecentBuffer); every such insert must count as a use of the buffer,
-- as ReadBuffer's would, or a leaf taking inserts all the time would be
-- evicted as if idle (each time forcing a WAL flush to write it out).
--
CREATE EXTENSION pg_buffercache;
CREATE EXTENSION pageinspect;
CREATE EXTENSION pg_prewarm;
CREATE TABLE fb (a int);
INSERT INTO fb SELECT g FROM generate_series(1, 50000) g;
-- (uncompressed: the test counts the leaves' buffers)
CREATE INDEX fb_a ON fb USING fractam (a) WITH (compression = 'none');
-- read every page of the index into shared buffers (a usage count of 2 at most)
SELECT pg_prewarm('fb_a', 'buffer') > 100 AS prewarmed;
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE fb_hits AS
SELECT idx_blks_hit FROM pg_statio_user_indexes WHERE indexrelname = 'fb_a';
-- twenty single-row inserts into one leaf
DO $$
BEGIN
	FOR i IN 1..20 LOOP
		INSERT INTO fb VALUES (25000);
	END LOOP;
END $$;
-- the leaf that took them must have a high usage count (each pin counted);
-- every other leaf was only read (built, then pg_prewarm)
SELECT count(*) FILTER (WHERE b.usagecount >= 4) AS hot_leaves,
	   count(*) FILTER (WHERE b.usagecount <= 2) > 100 AS cold_leaves
FROM pg_buffercache b
WHERE b.relfilenode = pg_relation_filenode('fb_a')
  AND b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND b.relblocknumber <> 0
  -- leaf pages: FT_PAGE_LEAF in ft_flags, 28 bytes into the special space
  -- (pd_special: bytes 16-17 of the page header)
  AND (SELECT get_byte(p, get_byte(p, 16) + 256 * get_byte(p, 17) + 28) & 2 = 2
	   FROM get_raw_page('fb_a', b.relblocknumber::int) p);
-- The buffer nodes above that leaf were read through the buffers this
-- backend remembered them in (ReadRecentBuffer again, see ft_buffer.c):
-- the tree has two levels of them below its routing page, and each insert
-- passes one of each.
SELECT height FROM fractam_stats('fb_a');
-- reads through remembered buffers count in the index's statistics, as
-- ReadBuffer's hits do: a leaf and two nodes per insert
SELECT pg_stat_force_next_flush();
SELECT s.idx_blks_hit - h.idx_blks_hit >= 60 AS reads_counted
FROM pg_statio_user_indexes s, fb_hits h WHERE s.indexrelname = 'fb_a';
-- they went to the leaf, not into a buffer
SELECT buffered_messages FROM fractam_stats('fb_a');
SELECT count(*) FROM fb WHERE a = 25000;
SELECT fractam_verify('fb_a');
DROP TABLE fb;
DROP EXTENSION pg_buffercache;
DROP EXTENSION pageinspect;
DROP EXTENSION pg_prewarm;

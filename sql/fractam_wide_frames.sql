--
-- fractam_wide_frames: compressed leaves whose entries take more than one
-- 32 kB decoded page (frame layouts FT_FRAME_LAYOUT_WIDE_*: up to 128 kB of
-- a table's rows or an index's entries on one 8 kB page).  Point reads and
-- scans decode such a leaf part by part, writers change its entries through
-- the part that holds them, and whole-leaf readers (flushes, direct
-- inserts, VACUUM, fractam_verify) decode it into a wide view.  Every answer
-- must be heap's, and every index path the sequential scan's.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

-- very regular rows (a timeseries: 50 sensors, one row a second each)
CREATE TABLE wh (id bigint, s int, ts timestamptz, v float8, note text);
INSERT INTO wh
SELECT g, g % 50, '2026-01-01'::timestamptz + (g / 50) * interval '1 s',
       (g % 100) / 4.0, 'n' || (g % 7)
FROM generate_series(1, 60000) g;
CREATE TABLE wt (LIKE wh) USING fractam WITH (compression = 'zstd');
CREATE UNIQUE INDEX wt_key ON wt USING fractam (s, ts) WITH (compression = 'zstd');
CREATE INDEX wt_id ON wt USING fractam (id) WITH (compression = 'lz4');
CREATE INDEX wt_note ON wt USING fractam (note) WITH (compression = 'zstd');
INSERT INTO wt SELECT * FROM wh ORDER BY id;
VACUUM wt;

CREATE FUNCTION same_as_wh() RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	SELECT count(*) INTO n FROM ((TABLE wh EXCEPT ALL TABLE wt) UNION ALL
	                             (TABLE wt EXCEPT ALL TABLE wh)) d;
	RETURN n = 0;
END $$;

-- the table's and an index's compressed leaves hold more than a decoded
-- page each, on average: their frames are wide
SELECT c.relname, s.compressed_leaf_pages > 0 AS compressed,
       s.uncompressed_bytes / greatest(s.compressed_leaf_pages, 1) > 32768 AS wide
FROM pg_class c, fractam_stats(c.oid) s
WHERE c.relname IN ('wt', 'wt_note') ORDER BY c.relname;
SELECT ft_check('index', 'SELECT * FROM wt WHERE note = ''n3''');
SELECT ft_check('ios', 'SELECT note FROM wt WHERE note BETWEEN ''n2'' AND ''n4'' ORDER BY note DESC', true);
SELECT same_as_wh(), ft_verify_all('wt'), fractam_verify('wt');

-- every scan kind, both directions, across the parts of wide leaves
SELECT ft_check('index', 'SELECT * FROM wt WHERE id BETWEEN 1000 AND 9000');
SELECT ft_check('index', 'SELECT * FROM wt WHERE id = 31337');
SELECT ft_check('index', 'SELECT id FROM wt WHERE id > 59000 ORDER BY id DESC', true);
SELECT ft_check('ios', 'SELECT s, ts FROM wt WHERE s = 7 ORDER BY ts', true);
SELECT ft_check('ios', 'SELECT s, ts FROM wt WHERE s BETWEEN 20 AND 22 ORDER BY s DESC, ts DESC', true);
SELECT ft_check('index', 'SELECT * FROM wt WHERE s = 33 AND ts = ''2026-01-01''::timestamptz + interval ''600 s''');
SELECT ft_check('bitmap', 'SELECT * FROM wt WHERE s = 12 AND ts < ''2026-01-01 00:05:00''::timestamptz');
SELECT count(*), sum(v), min(ts), max(ts) FROM wt;

-- deletes, updates and row locks of rows in wide leaves (their change areas)
BEGIN;
DELETE FROM wt WHERE id % 13 = 0;
UPDATE wt SET v = v + 1 WHERE id % 17 = 0;
SELECT count(*) FROM (SELECT 1 FROM wt WHERE id % 5 = 0 FOR SHARE) x;
SELECT count(*) FROM (SELECT 1 FROM wt WHERE id % 23 = 0 FOR UPDATE) x;
COMMIT;
DELETE FROM wh WHERE id % 13 = 0;
UPDATE wh SET v = v + 1 WHERE id % 17 = 0;
SELECT same_as_wh(), ft_verify_all('wt'), fractam_verify('wt');
SELECT ft_check('index', 'SELECT * FROM wt WHERE id BETWEEN 2000 AND 3000');
SELECT ft_check('ios', 'SELECT s, ts FROM wt WHERE s = 9 ORDER BY ts', true);

-- VACUUM and freezing rewrite or patch them
SELECT ft_wait_for_old_snapshots();
VACUUM wt;
VACUUM (FREEZE) wt;
SELECT same_as_wh(), ft_verify_all('wt'), fractam_verify('wt');
SELECT ft_check('index', 'SELECT * FROM wt WHERE id BETWEEN 40000 AND 41000');

-- direct inserts among the key's entries (half seconds are free) rewrite
-- its wide leaves, which stay compressed; uniqueness holds across them
INSERT INTO wt SELECT 100000 + g, 7, '2026-01-01'::timestamptz + g * interval '1 s' + interval '0.5 s', 1, 'x'
FROM generate_series(0, 1100, 3) g;
INSERT INTO wh SELECT 100000 + g, 7, '2026-01-01'::timestamptz + g * interval '1 s' + interval '0.5 s', 1, 'x'
FROM generate_series(0, 1100, 3) g;
INSERT INTO wt VALUES (200000, 8, '2026-01-01 00:10:00', 0, 'dup');
INSERT INTO wt VALUES (200000, 8, '2026-01-01 00:10:00', 0, 'dup')
ON CONFLICT DO NOTHING;
-- (the keys of the rows deleted above are free again)
INSERT INTO wt SELECT 300000 + g, 8, '2026-01-01'::timestamptz + g * interval '1 s', 0, 'c'
FROM generate_series(0, 1199) g ON CONFLICT DO NOTHING;
INSERT INTO wh SELECT 300000 + g, 8, '2026-01-01'::timestamptz + g * interval '1 s', 0, 'c'
FROM generate_series(0, 1199) g
WHERE NOT EXISTS (SELECT 1 FROM wh x
                  WHERE x.s = 8 AND x.ts = '2026-01-01'::timestamptz + g * interval '1 s');
SELECT same_as_wh(), ft_verify_all('wt');
SELECT ft_check('ios', 'SELECT s, ts FROM wt WHERE s = 7 ORDER BY ts', true);
SELECT ft_check('ios', 'SELECT s, ts FROM wt WHERE s IN (7, 8) ORDER BY s DESC, ts DESC', true);
SELECT ft_check('index', 'SELECT * FROM wt WHERE note = ''c''');

-- a wide leaf of an index compressed no more keeps its own method
ALTER INDEX wt_key SET (compression = 'none');
INSERT INTO wt SELECT 400000 + g, 9, '2026-01-01'::timestamptz + g * interval '1 s' + interval '0.25 s', 2, 'y'
FROM generate_series(0, 1100, 5) g;
INSERT INTO wh SELECT 400000 + g, 9, '2026-01-01'::timestamptz + g * interval '1 s' + interval '0.25 s', 2, 'y'
FROM generate_series(0, 1100, 5) g;
ALTER INDEX wt_key RESET (compression);
SELECT same_as_wh(), ft_verify_all('wt');
SELECT ft_check('ios', 'SELECT s, ts FROM wt WHERE s = 9 ORDER BY ts', true);

-- without the decoded-leaf cache, and with a tiny one, the same answers
SET fractam.decoded_leaf_cache = 0;
SELECT same_as_wh();
SELECT ft_check('index', 'SELECT * FROM wt WHERE id BETWEEN 1000 AND 9000');
UPDATE wt SET note = 'u' WHERE id BETWEEN 5000 AND 5100;
UPDATE wh SET note = 'u' WHERE id BETWEEN 5000 AND 5100;
SELECT same_as_wh(), fractam_verify('wt');
SET fractam.decoded_leaf_cache = '64kB';
SELECT ft_check('ios', 'SELECT s, ts FROM wt WHERE s = 7 ORDER BY ts DESC', true);
DELETE FROM wt WHERE id BETWEEN 20000 AND 20400;
DELETE FROM wh WHERE id BETWEEN 20000 AND 20400;
SELECT same_as_wh(), fractam_verify('wt');
RESET fractam.decoded_leaf_cache;

-- a full rewrite makes them again
VACUUM FULL wt;
SELECT c.relname, s.uncompressed_bytes / greatest(s.compressed_leaf_pages, 1) > 32768 AS wide
FROM pg_class c, fractam_stats(c.oid) s
WHERE c.relname IN ('wt') ORDER BY c.relname;
SELECT same_as_wh(), ft_verify_all('wt'), fractam_verify('wt');

DROP TABLE wt, wh;
DROP FUNCTION same_as_wh();

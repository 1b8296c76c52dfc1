--
-- fractam_flush: enough rows with fanout = 4 (and 2) to force many buffer
-- flushes, leaf splits, buffer-node splits and new roots; random, ascending,
-- descending and all-equal key streams; buffering off; fillfactor.
-- fractam_verify and the statistics are checked after every phase.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
-- buffer every insert below the right edge (no direct apply to cached leaves),
-- so that the buffering and flush paths are exercised
SET fractam.direct_apply = off;

-- shape summary: only facts that hold for any sound implementation
CREATE FUNCTION fl_stats(idx regclass, expected_entries bigint)
RETURNS TABLE (height_ok bool, pages_ok bool, entries_ok bool, flushed bool, split bool)
LANGUAGE sql AS $$
	SELECT s.height >= 2,
	       s.leaf_pages >= 1 AND s.buffer_pages >= 0 AND s.routing_pages >= 0
	         AND s.leaf_pages + s.buffer_pages + s.routing_pages
	             <= pg_relation_size(idx) / current_setting('block_size')::int,
	       s.leaf_items + s.buffered_messages = expected_entries,
	       s.flushes > 0,
	       s.splits > 0
	FROM fractam_stats(idx) s
$$;

CREATE TABLE fl (k int, pad text);
CREATE INDEX fl_k ON fl USING fractam (k) WITH (fanout = 4);
-- random order, in batches; verify after each
INSERT INTO fl SELECT (i * 7919) % 40009, 'p' FROM generate_series(1, 10000) i;
SELECT fractam_verify('fl_k');
SELECT * FROM fl_stats('fl_k', 10000);
INSERT INTO fl SELECT (i * 7919) % 40009, 'p' FROM generate_series(10001, 25000) i;
SELECT fractam_verify('fl_k');
INSERT INTO fl SELECT (i * 7919) % 40009, 'p' FROM generate_series(25001, 40000) i;
SELECT fractam_verify('fl_k');
SELECT * FROM fl_stats('fl_k', 40000);
-- a tree this tall has two buffer levels: messages enter level 2 and move
-- down to level 1 in batches, and both levels hold some right now
SELECT height >= 3 AS tall,
       upper_buffer_pages > 0 AND upper_buffer_pages < buffer_pages AS upper_level,
       moves > 0 AS moved, avg_move_size > 1 AS batched,
       upper_buffered_messages > 0 AS upper_holds_messages,
       buffered_messages > upper_buffered_messages AS lower_holds_messages
FROM fractam_stats('fl_k');
SELECT buffered_bytes >= 0 AS bytes_ok,
       (buffered_messages = 0) = (buffered_bytes = 0) AS bytes_match_messages
FROM fractam_stats('fl_k');
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('eq',     'index', 'SELECT k FROM fl WHERE k = 12345', false),
	('range',  'index', 'SELECT k FROM fl WHERE k BETWEEN 20000 AND 20500', false),
	('all',    'index', 'SELECT k FROM fl ORDER BY k', true),
	('desc',   'index', 'SELECT k FROM fl ORDER BY k DESC', true),
	('bitmap', 'bitmap', 'SELECT k FROM fl WHERE k < 1000 OR k > 39000', false)
) v(label, mode, q, ord);

-- ascending keys (right edge), then descending keys (left edge)
INSERT INTO fl SELECT 100000 + i, 'asc' FROM generate_series(1, 10000) i;
SELECT fractam_verify('fl_k');
INSERT INTO fl SELECT -i, 'desc' FROM generate_series(1, 10000) i;
SELECT fractam_verify('fl_k');
SELECT * FROM fl_stats('fl_k', 60000);
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('asc tail',  'index', 'SELECT k FROM fl WHERE k > 109900 ORDER BY k', true),
	('desc head', 'index', 'SELECT k FROM fl WHERE k < -9900 ORDER BY k DESC', true),
	('edges',     'index', 'SELECT k FROM fl WHERE k BETWEEN -5 AND 5', false),
	('all',       'index', 'SELECT k FROM fl ORDER BY k', true)
) v(label, mode, q, ord);

-- one key repeated many times: duplicates spread over many leaves
INSERT INTO fl SELECT 7, 'dup' FROM generate_series(1, 8000);
SELECT fractam_verify('fl_k');
SELECT * FROM fl_stats('fl_k', 68000);
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('dup eq',    'index',  'SELECT k, pad FROM fl WHERE k = 7', false),
	('dup count', 'bitmap', 'SELECT count(*) FROM fl WHERE k = 7', false),
	('around',    'index',  'SELECT k FROM fl WHERE k BETWEEN 6 AND 8 ORDER BY k', true),
	('around bw', 'index',  'SELECT k FROM fl WHERE k BETWEEN 6 AND 8 ORDER BY k DESC', true),
	('after dup', 'index',  'SELECT k FROM fl WHERE k > 7 ORDER BY k LIMIT 20', true),
	('before dup','index',  'SELECT k FROM fl WHERE k < 7 ORDER BY k DESC LIMIT 20', true)
) v(label, mode, q, ord);

-- deletes and updates go through the buffers as well
DELETE FROM fl WHERE k % 5 = 0;
UPDATE fl SET k = k + 1 WHERE k % 7 = 3;
SELECT fractam_verify('fl_k');
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('after dml', 'index', 'SELECT k FROM fl ORDER BY k', true),
	('range',     'index', 'SELECT k FROM fl WHERE k BETWEEN 1000 AND 3000', false)
) v(label, mode, q, ord);
VACUUM fl;
SELECT fractam_verify('fl_k');
SELECT ft_check('ios', 'SELECT k FROM fl ORDER BY k', true);

-- fanout = 2: the deepest tree
CREATE TABLE fl2 (k int);
CREATE INDEX fl2_k ON fl2 USING fractam (k) WITH (fanout = 2);
INSERT INTO fl2 SELECT (i * 7919) % 30011 FROM generate_series(1, 30000) i;
SELECT fractam_verify('fl2_k');
SELECT * FROM fl_stats('fl2_k', 30000);
SELECT ft_check('index', 'SELECT k FROM fl2 ORDER BY k', true);
SELECT ft_check('index', 'SELECT k FROM fl2 WHERE k >= 15000 ORDER BY k DESC LIMIT 1000', true);

-- fanout = 2 with fillfactor = 50: ascending inserts split leaves half full,
-- and buffer nodes with two children split early
CREATE TABLE fl4 (k int);
CREATE INDEX fl4_k ON fl4 USING fractam (k) WITH (fanout = 2, fillfactor = 50);
SET statement_timeout = '30s';
INSERT INTO fl4 SELECT generate_series(1, 5000);
INSERT INTO fl4 SELECT -generate_series(1, 2000);
SET statement_timeout = '180s';
SELECT fractam_verify('fl4_k');
SELECT ft_check('index', 'SELECT k FROM fl4 ORDER BY k', true);
DROP TABLE fl4;

-- buffering off: nothing stays in buffers
CREATE TABLE fl3 (k int);
CREATE INDEX fl3_k ON fl3 USING fractam (k) WITH (fanout = 4, buffering = off);
INSERT INTO fl3 SELECT (i * 7919) % 30011 FROM generate_series(1, 20000) i;
SELECT fractam_verify('fl3_k');
SELECT height >= 2 AS deep, buffered_messages, buffered_bytes, leaf_items
FROM fractam_stats('fl3_k');
SELECT ft_check('index', 'SELECT k FROM fl3 WHERE k BETWEEN 100 AND 900', false);

-- fillfactor applies to index builds: 10% full leaves need more pages
-- (fillfactor shapes uncompressed leaves; compressed ones are filled to fit)
CREATE INDEX fl3_ff10 ON fl3 USING fractam (k) WITH (fillfactor = 10, compression = 'none');
CREATE INDEX fl3_ff100 ON fl3 USING fractam (k) WITH (fillfactor = 100, compression = 'none');
SELECT (SELECT leaf_pages FROM fractam_stats('fl3_ff10'))
       > 3 * (SELECT leaf_pages FROM fractam_stats('fl3_ff100')) AS fillfactor_respected;
SELECT (SELECT leaf_items FROM fractam_stats('fl3_ff10')) AS ff10_items,
       (SELECT leaf_items FROM fractam_stats('fl3_ff100')) AS ff100_items;
SELECT ft_verify_all('fl3');
-- the fillfactor = 10 index still takes inserts
INSERT INTO fl3 SELECT i FROM generate_series(1, 3000) i;
SELECT ft_verify_all('fl3');

DROP TABLE fl, fl2, fl3;
DROP FUNCTION fl_stats(regclass, bigint);

--
-- fractam_scans: scans over a tree whose changes are partly still buffered
-- (small fanout, inserts/deletes/updates after the build): ordered LIMIT in
-- both directions, scroll cursors that change direction, bitmap AND/OR,
-- index-only scans after VACUUM, merge joins, rescans in nested loops.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
-- buffer every insert below the right edge (no direct apply to cached leaves),
-- so that the buffering and flush paths are exercised
SET fractam.direct_apply = off;

CREATE TABLE sc (id int, k int, t text);
INSERT INTO sc SELECT i, (i * 7919) % 30011, 't' || (i % 1000) FROM generate_series(1, 10000) i;
CREATE INDEX sc_k ON sc USING fractam (k) WITH (fanout = 4);
CREATE INDEX sc_t ON sc USING fractam (t) WITH (fanout = 3);
-- changes after the build go through the buffers
INSERT INTO sc SELECT i, (i * 7919) % 30011, 't' || (i % 1000) FROM generate_series(10001, 20000) i;
DELETE FROM sc WHERE id % 10 = 3;
UPDATE sc SET k = k + 1 WHERE id % 10 = 4;
INSERT INTO sc SELECT i, 15000, 'dup' FROM generate_series(20001, 20500) i;
INSERT INTO sc VALUES (30001, NULL, NULL), (30002, NULL, 'n'), (30003, -1, NULL);
SELECT ft_verify_all('sc');

SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('eq',          'index',  'SELECT id FROM sc WHERE k = 15000', false),
	('eq deleted',  'index',  'SELECT id FROM sc WHERE k = (3 * 7919) % 30011', false),
	('range',       'index',  'SELECT id, k FROM sc WHERE k > 1000 AND k < 1500', false),
	('asc limit',   'index',  'SELECT k FROM sc WHERE k > 14990 ORDER BY k LIMIT 600', true),
	('asc all',     'index',  'SELECT k FROM sc ORDER BY k', true),
	('desc limit',  'index',  'SELECT k FROM sc WHERE k < 15010 ORDER BY k DESC LIMIT 600', true),
	('desc all',    'index',  'SELECT k FROM sc ORDER BY k DESC', true),
	('desc nulls',  'index',  'SELECT k FROM sc ORDER BY k DESC NULLS FIRST LIMIT 5', true),
	('asc nulls',   'index',  'SELECT k FROM sc ORDER BY k NULLS LAST OFFSET 18490', true),
	('limit big',   'index',  'SELECT k FROM sc WHERE k >= 30000 ORDER BY k LIMIT 100', true),
	('empty range', 'index',  'SELECT k FROM sc WHERE k > 20 AND k < 10', false),
	('past end',    'index',  'SELECT k FROM sc WHERE k > 99999 ORDER BY k DESC', true),
	('text ord',    'index',  'SELECT t FROM sc WHERE t >= ''t99'' ORDER BY t LIMIT 300', true),
	('text desc',   'index',  'SELECT t FROM sc WHERE t < ''t1'' ORDER BY t DESC LIMIT 300', true),
	('bitmap or',   'bitmap', 'SELECT id FROM sc WHERE k < 100 OR k > 29900', false),
	('bitmap and',  'bitmap', 'SELECT id FROM sc WHERE k < 3000 AND t = ''t77''', false),
	('bitmap any',  'bitmap', 'SELECT id FROM sc WHERE t = ANY (ARRAY[''t1'', ''dup'', ''t999'', ''zz''])', false),
	('bitmap null', 'bitmap', 'SELECT id FROM sc WHERE k IS NULL OR t IS NULL', false)
) v(label, mode, q, ord);

-- a scroll cursor over an index scan that changes direction
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexonlyscan = off;
SET LOCAL enable_sort = off;
EXPLAIN (COSTS OFF) SELECT id, k FROM sc WHERE k BETWEEN 14995 AND 15005 ORDER BY k;
DECLARE c SCROLL CURSOR FOR
	SELECT k FROM sc WHERE k BETWEEN 14998 AND 15002 AND (k <> 15000 OR id < 20004) ORDER BY k;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH 5 FROM c;
FETCH BACKWARD 1 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 3 FROM c;
FETCH ABSOLUTE 1 FROM c;
FETCH PRIOR FROM c;
FETCH NEXT FROM c;
MOVE FORWARD ALL FROM c;
FETCH BACKWARD 2 FROM c;
CLOSE c;
COMMIT;
-- the same positions against a sorted seq scan
SELECT k FROM sc WHERE k BETWEEN 14998 AND 15002 AND (k <> 15000 OR id < 20004) ORDER BY k;

-- index-only scans: no heap fetches once the visibility map is set
VACUUM sc;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT k FROM sc WHERE k < 500;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT k FROM sc ORDER BY k DESC LIMIT 7;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('ios range', 'ios', 'SELECT k FROM sc WHERE k BETWEEN 7000 AND 9000', false),
	('ios ord',   'ios', 'SELECT k FROM sc ORDER BY k', true),
	('ios desc',  'ios', 'SELECT k FROM sc WHERE k < 100 ORDER BY k DESC', true),
	('ios text',  'ios', 'SELECT t FROM sc WHERE t > ''t5'' AND t < ''t6''', false),
	('ios null',  'ios', 'SELECT k FROM sc WHERE k IS NULL', false)
) v(label, mode, q, ord);
-- a row changed after VACUUM must come from the heap, not from a stale index entry
UPDATE sc SET k = 99999 WHERE id = 5;
DELETE FROM sc WHERE id = 6;
SELECT ft_check('ios', 'SELECT k FROM sc WHERE k = 99999 OR k = (6 * 7919) % 30011 OR k = (5 * 7919) % 30011');
SELECT ft_check('ios', 'SELECT k FROM sc WHERE k >= (5 * 7919) % 30011 - 10 AND k <= (5 * 7919) % 30011 + 10');

-- joins: merge join over two ordered fractam scans, nested loop rescans
CREATE TABLE sc2 (k int, v text);
INSERT INTO sc2 SELECT (i * 13) % 30011, 'v' || i FROM generate_series(1, 3000) i;
CREATE INDEX sc2_k ON sc2 USING fractam (k) WITH (fanout = 4);
INSERT INTO sc2 SELECT (i * 17) % 30011, 'w' || i FROM generate_series(1, 3000) i;
ANALYZE sc, sc2;
SELECT ft_check('merge', 'SELECT sc.id, sc2.v FROM sc JOIN sc2 ON sc.k = sc2.k');
SELECT ft_check('merge', 'SELECT sc.id, sc2.v FROM sc JOIN sc2 ON sc.k = sc2.k WHERE sc.k < 500 ORDER BY sc.k, sc.id, sc2.v', true);
SELECT ft_check('nestloop', 'SELECT sc.id, sc2.v FROM sc2 JOIN sc ON sc.k = sc2.k WHERE sc2.v LIKE ''v1%''');
SELECT ft_check('nestloop', 'SELECT s.k, (SELECT max(id) FROM sc WHERE sc.k = s.k) FROM sc2 s WHERE s.k < 2000');

SELECT ft_verify_all('sc');
SELECT ft_verify_all('sc2');
DROP TABLE sc, sc2;

-- A scan copies the buffer nodes it passes for their messages; a node
-- without messages is copied without its pivots, but with its high key,
-- which tells a forward scan where the copied node's range ends
-- (ft_copy_node_messages).  A built index buffers nothing; a few inserts
-- buffered into the middle of the key range leave most nodes without
-- messages, and scans that start in such a node must still find the
-- messages of the nodes after it.
CREATE TABLE se (id int, k int);
INSERT INTO se SELECT i, i * 2 FROM generate_series(1, 20000) i;
CREATE INDEX se_k ON se USING fractam (k) WITH (fanout = 4);
INSERT INTO se SELECT 100000 + i, 20001 + 2 * i FROM generate_series(0, 29) i;
SELECT buffered_messages + upper_buffered_messages AS buffered,
	   buffer_pages + upper_buffer_pages > 10 AS many_nodes
FROM fractam_stats('se_k');
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('asc across',     'index', 'SELECT k FROM se WHERE k > 100 ORDER BY k', true),
	('desc across',    'index', 'SELECT k FROM se WHERE k < 39000 ORDER BY k DESC', true),
	('ios across',     'ios',   'SELECT k FROM se WHERE k BETWEEN 19000 AND 21000', false),
	('point empty',    'index', 'SELECT id FROM se WHERE k = 5000', false),
	('point buffered', 'index', 'SELECT id FROM se WHERE k = 20031', false)
) v(label, mode, q, ord);
SELECT ft_verify_all('se');
DROP TABLE se;

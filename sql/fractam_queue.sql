--
-- fractam_queue: a queue (rows added at one end, the oldest deleted and
-- vacuumed away) must run in constant space, for a fractam table and for
-- fractam indexes: VACUUM frees the pages it empties -- leaves, and level-1
-- nodes with their last leaves (delete_empty_node) -- and new pages come from
-- the free space map before the file grows.  Queries must keep agreeing with
-- sequential scans, and fractam_verify must pass, while the tree's left edge
-- is removed under it; so must a range deleted in the middle of an index and
-- filled again.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
-- small nodes: many level-1 and level-2 nodes for few rows
CREATE TABLE qt (id bigserial, k int, payload text) USING fractam
	WITH (autovacuum_enabled = off);
CREATE INDEX qt_id ON qt USING fractam (id) WITH (fanout = 4);
CREATE INDEX qt_k ON qt USING btree (k);
INSERT INTO qt (k, payload) SELECT i, repeat('p', 200) FROM generate_series(1, 6000) i;
VACUUM qt;

CREATE TABLE queue_sizes (round int, tbl bigint, idx bigint, tbl_buffers bigint);
-- each round: the oldest 2000 rows go, VACUUM, 2000 new ones come
SELECT stmt FROM generate_series(1, 15) r, LATERAL (VALUES
	(1, 'DELETE FROM qt WHERE id < (SELECT min(id) FROM qt) + 2000'),
	(2, 'VACUUM qt'),
	(3, format('INSERT INTO qt (k, payload) SELECT i, repeat(''p'', 200)
		FROM generate_series(%s, %s) i', r * 2000 + 4001, r * 2000 + 6000)),
	(4, format('INSERT INTO queue_sizes SELECT %s, pg_relation_size(''qt''),
		pg_relation_size(''qt_id''), (SELECT buffer_pages FROM fractam_stats(''qt''))',
		r))) v(o, stmt)
ORDER BY r, o \gexec
SELECT count(*), min(k), max(k) FROM qt;
SELECT ft_verify_all('qt');
SELECT fractam_verify('qt');
-- constant space: the last round is no larger than the third
SELECT b.tbl <= a.tbl * 1.05 AS tbl_steady,
	   b.idx <= a.idx * 1.05 AS idx_steady,
	   b.tbl_buffers <= a.tbl_buffers + 6 AS tbl_nodes_steady
FROM queue_sizes a, queue_sizes b WHERE a.round = 3 AND b.round = 15;
-- without freeing, 15 rounds would hold 36000 rows' pages
SELECT (SELECT tbl FROM queue_sizes WHERE round = 15) <
	   3 * (SELECT tbl FROM queue_sizes WHERE round = 1) AS pages_reused;
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('id range',  'index',  'SELECT id, k FROM qt WHERE id BETWEEN 30000 AND 31000', false),
	('id all',    'ios',    'SELECT id FROM qt ORDER BY id', true),
	('id desc',   'index',  'SELECT id FROM qt ORDER BY id DESC', true),
	('id old',    'index',  'SELECT id FROM qt WHERE id < 30000', false),
	('k bitmap',  'bitmap', 'SELECT id, k FROM qt WHERE k BETWEEN 33000 AND 34000', false)
) v(label, mode, q, ord);
-- the rows took row ids VACUUM gave back (36,000 were numbered), each its own
SELECT rowids_used < 30000 AS rowids_reused, count(*) = count(DISTINCT ctid) AS distinct_ctids
FROM fractam_table_stats('qt'), qt GROUP BY rowids_used;

-- the same queue in a table and an index of small nodes, four levels high,
-- where whole level-2 nodes are emptied and go (delete_empty_upper): rows and
-- scans stay right, and the size stays too
CREATE TABLE qs (id bigserial, payload text) USING fractam
	WITH (fanout = 4, autovacuum_enabled = off);
CREATE INDEX qs_id ON qs USING fractam (id) WITH (fanout = 4);
INSERT INTO qs (payload) SELECT repeat('s', 300) FROM generate_series(1, 4000);
CREATE TABLE qs_sizes (round int, tbl bigint, idx bigint, nodes bigint);
SELECT stmt FROM generate_series(1, 10) r, LATERAL (VALUES
	(1, 'DELETE FROM qs WHERE id < (SELECT min(id) FROM qs) + 1500'),
	(2, 'VACUUM qs'),
	(3, 'INSERT INTO qs (payload) SELECT repeat(''s'', 300) FROM generate_series(1, 1500)'),
	(4, format('INSERT INTO qs_sizes SELECT %s, pg_relation_size(''qs''),
		pg_relation_size(''qs_id''), (SELECT buffer_pages FROM fractam_stats(''qs''))', r))
	) v(o, stmt)
ORDER BY r, o \gexec
SELECT s.height >= 4 AS four_levels, s.free_pages > 0 AS freed,
	   b.tbl <= a.tbl * 1.05 AS tbl_steady, b.idx <= a.idx * 1.05 AS idx_steady,
	   b.nodes <= a.nodes + 2 AS nodes_steady
FROM fractam_stats('qs') s, qs_sizes a, qs_sizes b WHERE a.round = 2 AND b.round = 10;
SELECT ft_verify_all('qs');
SELECT fractam_verify('qs');
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('all',       'ios',   'SELECT id FROM qs ORDER BY id', true),
	('range',     'index', 'SELECT id, payload FROM qs WHERE id BETWEEN (SELECT min(id) + 100 FROM qs) AND (SELECT min(id) + 600 FROM qs)', false)
) v(label, mode, q, ord);
SELECT count(*), min(id), max(id) FROM qs;

-- an index range emptied in the middle: its level-1 nodes go (their right
-- siblings take their ranges over), and keys inserted there again are found
CREATE TABLE qm (k int, v int) WITH (autovacuum_enabled = off);
CREATE INDEX qm_k ON qm USING fractam (k) WITH (fanout = 4);
INSERT INTO qm SELECT i, i FROM generate_series(1, 40000) i;
VACUUM qm;
SELECT (fractam_stats('qm_k')).height IS NOT NULL AS stats;
CREATE TEMP TABLE qm_before AS SELECT buffer_pages, free_pages FROM fractam_stats('qm_k');
DELETE FROM qm WHERE k BETWEEN 10000 AND 30000;
VACUUM qm;
SELECT s.buffer_pages < b.buffer_pages AS nodes_removed,
	   s.free_pages > b.free_pages AS pages_freed
FROM fractam_stats('qm_k') s, qm_before b;
SELECT fractam_verify('qm_k');
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('gap',       'index', 'SELECT k FROM qm WHERE k BETWEEN 9990 AND 30010', false),
	('all',       'ios',   'SELECT k FROM qm ORDER BY k', true),
	('all desc',  'ios',   'SELECT k FROM qm ORDER BY k DESC', true)
) v(label, mode, q, ord);
INSERT INTO qm SELECT i, -i FROM generate_series(15000, 25000) i;
SELECT label, ft_check(mode, q, ord) FROM (VALUES
	('refilled',  'index', 'SELECT k, v FROM qm WHERE k BETWEEN 9990 AND 30010', false),
	('all',       'ios',   'SELECT k FROM qm ORDER BY k', true)
) v(label, mode, q, ord);
SELECT fractam_verify('qm_k');
DROP TABLE qt, qs, qm, queue_sizes, qs_sizes;

--
-- fractam_routecache: each backend keeps copies of routing pages (levels
-- above the buffer nodes).  Copies go stale when the pages they were taken
-- from split; descents must still find the right place (moving right, and
-- dropping the stale copy), and copies must never survive a new tree in the
-- same relation (TRUNCATE, REINDEX, DROP + CREATE).
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
SET fractam.direct_apply = off;

-- wide keys make a tall tree with many routing pages (the wide column
-- first: pivots keep the key columns up to the first that differs between
-- two leaves, and each batch below inserts one pad, so that is k, and the
-- pivots are whole keys)
CREATE TABLE rc (k int, pad text);
CREATE INDEX rc_k ON rc USING fractam (pad, k) WITH (fanout = 2);
INSERT INTO rc SELECT (i * 7919) % 100003, repeat('a', 500) FROM generate_series(1, 30000) i;
SELECT height >= 4 AS tall, routing_pages >= 10 AS many_routing_pages
FROM fractam_stats('rc_k');
SELECT hits AS hits0, stale AS stale0, stores AS stores0
FROM fractam_routing_cache_stats() \gset
-- these inserts descend through copies while splitting the routing pages
-- they were copied from
INSERT INTO rc SELECT (i * 104729::int8) % 300007, repeat('b', 500) FROM generate_series(1, 30000) i;
SELECT hits > :hits0 AS copies_used, stale > :stale0 AS stale_copies_dropped,
       stores > :stores0 AS copies_taken
FROM fractam_routing_cache_stats();
SELECT fractam_verify('rc_k');
SELECT ft_check('index', 'SELECT k, left(pad, 1) FROM rc WHERE k BETWEEN 5000 AND 5600');
SELECT ft_check('index', 'SELECT k, left(pad, 1) FROM rc WHERE k >= 299000 ORDER BY pad DESC, k DESC', true);
-- every row found again through the index, one descent each
SELECT ft_check('nestloop', 'SELECT count(*) FROM rc r1 WHERE EXISTS (SELECT 1 FROM rc r2 WHERE r2.k = r1.k AND r2.pad = r1.pad)');

-- a cache of two pages: copies are evicted all the time
SET fractam.routing_cache_pages = 2;
INSERT INTO rc SELECT (i * 15485863::int8 % 300007)::int, repeat('c', 500) FROM generate_series(1, 20000) i;
SELECT cached_pages <= 2 AS bounded FROM fractam_routing_cache_stats();
SELECT fractam_verify('rc_k');
SELECT ft_check('index', 'SELECT k, left(pad, 1) FROM rc WHERE k BETWEEN 100000 AND 100900');
-- and none at all
SET fractam.routing_cache_pages = 0;
INSERT INTO rc SELECT i, repeat('d', 500) FROM generate_series(1, 300007, 97) i;
SELECT cached_pages = 0 AS empty FROM fractam_routing_cache_stats();
SELECT ft_check('index', 'SELECT k, left(pad, 1) FROM rc WHERE k BETWEEN 200000 AND 200900');
RESET fractam.routing_cache_pages;

-- TRUNCATE of a table created in the same transaction rebuilds its index
-- in place (same relfilenode): the copies of the old tree must be gone
BEGIN;
CREATE TABLE rt (k int, pad text);
CREATE INDEX rt_k ON rt USING fractam (pad, k) WITH (fanout = 2);
INSERT INTO rt SELECT (i * 7919) % 20011, repeat('e', 500) FROM generate_series(1, 20000) i;
SELECT ft_check('index', 'SELECT k FROM rt WHERE k BETWEEN 100 AND 140');
SELECT routing_pages >= 10 AS many_routing_pages FROM fractam_stats('rt_k');
SELECT cached_pages >= 10 AS cached FROM fractam_routing_cache_stats();
TRUNCATE rt;
-- the same inserts with shifted keys build a tree of the same shape in the
-- same blocks, so stale copies would be found and would misroute
INSERT INTO rt SELECT (i * 7919) % 20011 + 30000, repeat('e', 500) FROM generate_series(1, 20000) i;
SELECT fractam_verify('rt_k');
SELECT ft_check('index', 'SELECT k, left(pad, 1) FROM rt WHERE k BETWEEN 30100 AND 30140');
SELECT ft_check('index', 'SELECT k, left(pad, 1) FROM rt WHERE k > 49990 ORDER BY k', true);
-- every row found again through the index, one descent each
SELECT ft_check('nestloop', 'SELECT count(*) FROM rt r1 WHERE EXISTS (SELECT 1 FROM rt r2 WHERE r2.k = r1.k AND r2.pad = r1.pad)');
COMMIT;
-- TRUNCATE of an older table (new relfilenode), REINDEX, DROP + CREATE
TRUNCATE rt;
INSERT INTO rt SELECT (i * 7919) % 20011 + 50000, repeat('g', 500) FROM generate_series(1, 20000) i;
SELECT ft_check('index', 'SELECT k, left(pad, 1) FROM rt WHERE k BETWEEN 50100 AND 50200');
REINDEX INDEX rt_k;
INSERT INTO rt SELECT (i * 7919) % 20011 + 100000, repeat('h', 500) FROM generate_series(1, 20000) i;
SELECT fractam_verify('rt_k');
SELECT ft_check('index', 'SELECT k, left(pad, 1) FROM rt WHERE (pad = repeat(''h'', 500) AND k BETWEEN 100100 AND 100200) OR (pad = repeat(''g'', 500) AND k BETWEEN 50100 AND 50200)');
DROP INDEX rt_k;
CREATE INDEX rt_k ON rt USING fractam (pad, k) WITH (fanout = 2);
INSERT INTO rt SELECT (i * 7919) % 20011 - 100000, repeat('i', 500) FROM generate_series(1, 20000) i;
SELECT fractam_verify('rt_k');
SELECT ft_check('index', 'SELECT k, left(pad, 1) FROM rt WHERE (pad = repeat(''i'', 500) AND k BETWEEN -99900 AND -99800) OR (pad = repeat(''h'', 500) AND k BETWEEN 100100 AND 100200)');

DROP TABLE rc, rt;

--
-- fractam_leaf_hints: a backend remembers, per run of row ids, the leaf it
-- last found one in, and tries it before a descent.  Hints go stale when
-- leaves split, empty, are freed by VACUUM and reused for other row ids;
-- every fetch must still find exactly the right version.  Everything runs
-- in one session, so the hints of each step meet the changes of the next.
-- A heap twin fed the same statements gives the expected answers.
--
CREATE TABLE lh (id int, grp int, v text) USING fractam WITH (fanout = 4);
CREATE TABLE lh_heap (id int, grp int, v text) USING heap;
CREATE INDEX lh_id ON lh (id);
CREATE INDEX lh_heap_id ON lh_heap (id);
INSERT INTO lh SELECT g, g % 7, repeat('x', 20 + g % 50) FROM generate_series(1, 20000) g;
INSERT INTO lh_heap SELECT * FROM lh;
VACUUM ANALYZE lh, lh_heap;

-- fetch through the index in random order: every run gets a hint
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE FUNCTION lh_probe(tab regclass) RETURNS TABLE (n bigint, s bigint, l bigint)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT count(*), sum(id), sum(length(v)) FROM %s
		 WHERE id = ANY (SELECT (g * 7919) %% 25000 FROM generate_series(1, 25000) g)', tab);
END $$;
EXPLAIN (COSTS OFF) SELECT sum(length(v)) FROM lh WHERE id = ANY ('{1,2}');
SELECT (SELECT lh_probe('lh')) = (SELECT lh_probe('lh_heap')) AS same;

-- updates find their versions through the hints, and move them to the end
UPDATE lh SET v = v || 'u' WHERE id % 3 = 0;
UPDATE lh_heap SET v = v || 'u' WHERE id % 3 = 0;
SELECT (SELECT lh_probe('lh')) = (SELECT lh_probe('lh_heap')) AS same;

-- empty most leaves, let VACUUM free them, and fill the freed pages with
-- versions of other row ids
DELETE FROM lh WHERE id > 2000 AND id % 50 <> 0;
DELETE FROM lh_heap WHERE id > 2000 AND id % 50 <> 0;
VACUUM lh, lh_heap;
INSERT INTO lh SELECT g, g % 7, repeat('y', 10 + g % 40) FROM generate_series(20001, 30000) g;
INSERT INTO lh_heap SELECT g, g % 7, repeat('y', 10 + g % 40) FROM generate_series(20001, 30000) g;
SELECT (SELECT lh_probe('lh')) = (SELECT lh_probe('lh_heap')) AS same;
UPDATE lh SET grp = grp + 1 WHERE id % 50 = 0;
UPDATE lh_heap SET grp = grp + 1 WHERE id % 50 = 0;
DELETE FROM lh WHERE id % 11 = 0;
DELETE FROM lh_heap WHERE id % 11 = 0;
SELECT (SELECT lh_probe('lh')) = (SELECT lh_probe('lh_heap')) AS same;
SELECT count(*), sum(grp) FROM lh WHERE id BETWEEN 1 AND 30000;
SELECT count(*), sum(grp) FROM lh_heap WHERE id BETWEEN 1 AND 30000;

-- runs of ascending row ids (an ordered range through the index): each
-- fetch tries the entry after the previous one, then the leaf to the
-- right of the previous leaf; descending runs and runs whose row ids jump
-- (versions the updates above moved) fall back to a search
CREATE FUNCTION lh_range(tab regclass, dir text) RETURNS TABLE (n bigint, s bigint, l bigint, f text)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT count(*), sum(id), sum(length(v)), md5(string_agg(id::text || v, '','' ORDER BY ord))
		 FROM (SELECT id, v, row_number() OVER () AS ord FROM
			   (SELECT id, v FROM %s WHERE id BETWEEN 1 AND 30000 ORDER BY id %s) o) r', tab, dir);
END $$;
EXPLAIN (COSTS OFF) SELECT id, v FROM lh WHERE id BETWEEN 1 AND 30000 ORDER BY id;
SELECT (SELECT lh_range('lh', 'ASC')) = (SELECT lh_range('lh_heap', 'ASC')) AS same_ascending,
	   (SELECT lh_range('lh', 'DESC')) = (SELECT lh_range('lh_heap', 'DESC')) AS same_descending;
-- a scrollable cursor changes direction, and its own transaction adds
-- versions behind it that its snapshot must not see
BEGIN;
DECLARE c_lh SCROLL CURSOR FOR SELECT id, v FROM lh WHERE id BETWEEN 100 AND 25000 ORDER BY id;
DECLARE c_heap SCROLL CURSOR FOR SELECT id, v FROM lh_heap WHERE id BETWEEN 100 AND 25000 ORDER BY id;
MOVE 700 IN c_lh;
MOVE 700 IN c_heap;
UPDATE lh SET v = v || 'c' WHERE id BETWEEN 100 AND 25000;
UPDATE lh_heap SET v = v || 'c' WHERE id BETWEEN 100 AND 25000;
FETCH 3 FROM c_lh;
FETCH 3 FROM c_heap;
MOVE BACKWARD 400 IN c_lh;
MOVE BACKWARD 400 IN c_heap;
FETCH BACKWARD 2 FROM c_lh;
FETCH BACKWARD 2 FROM c_heap;
MOVE 5000 IN c_lh;
MOVE 5000 IN c_heap;
FETCH 2 FROM c_lh;
FETCH 2 FROM c_heap;
COMMIT;
SELECT (SELECT lh_range('lh', 'ASC')) = (SELECT lh_range('lh_heap', 'ASC')) AS same_after_update;
DROP FUNCTION lh_range(regclass, text);

-- a new file (TRUNCATE) starts without hints
TRUNCATE lh;
INSERT INTO lh SELECT g, 0, 'z' FROM generate_series(1, 3000) g;
SELECT count(*), sum(id) FROM lh WHERE id = ANY (SELECT (g * 7919) % 3500 FROM generate_series(1, 3500) g);
SELECT fractam_verify('lh');
DROP TABLE lh, lh_heap;
DROP FUNCTION lh_probe(regclass);

-- A descent tells the hints of every leaf under the level-1 node it passes,
-- so a session's first lookup of a row in another of those leaves reads
-- that leaf alone: counted in shared buffers (the btree index reads the
-- same number of pages for every key).  Row ids of the first and last
-- leaves, looked up first in a new session (a descent), then the other
-- way round; and in a session that fetched nothing else before.
CREATE TABLE lr (id int, v text) USING fractam;
INSERT INTO lr SELECT g, repeat('r', 30) FROM generate_series(1, 2000) g;
CREATE INDEX lr_id ON lr USING btree (id);
VACUUM ANALYZE lr;
SELECT height, leaf_pages, buffer_pages FROM fractam_stats('lr');
CREATE FUNCTION lr_buffers(k int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) '
				   'SELECT v FROM lr WHERE id = %s', k) INTO plan;
	RETURN (plan->0->'Plan'->>'Shared Hit Blocks')::int +
		(plan->0->'Plan'->>'Shared Read Blocks')::int;
END $$;
\c
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT lr_buffers(1990) AS last_leaf_cold \gset
SELECT lr_buffers(5) AS first_leaf_hinted \gset
\c
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT lr_buffers(5) AS first_leaf_cold \gset
SELECT lr_buffers(1990) AS last_leaf_hinted \gset
SELECT :first_leaf_hinted < :last_leaf_cold AS first_leaf_needs_no_descent,
	   :last_leaf_hinted < :first_leaf_cold AS last_leaf_needs_no_descent,
	   :last_leaf_cold - :first_leaf_hinted AS pages_saved;
SELECT v FROM lr WHERE id IN (5, 1990) ORDER BY id;
DROP FUNCTION lr_buffers(int);
DROP TABLE lr;

-- An index scan keeps the table leaf it fetched from pinned until its next
-- fetch leaves that leaf (as heap keeps its page), so a range of 300 rows
-- pins each leaf once: shared-buffer hits count the leaves and the index
-- pages, not the rows.
CREATE TABLE lk (id int, v text) USING fractam;
INSERT INTO lk SELECT g, repeat('k', 30) FROM generate_series(1, 5000) g;
CREATE INDEX lk_id ON lk USING btree (id);
VACUUM ANALYZE lk;
CREATE FUNCTION lk_buffers() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON)
		SELECT count(*), sum(length(v)) FROM lk WHERE id BETWEEN 1001 AND 1300 INTO plan;
	RETURN (plan->0->'Plan'->>'Shared Hit Blocks')::int +
		(plan->0->'Plan'->>'Shared Read Blocks')::int;
END $$;
SELECT count(*), sum(length(v)) FROM lk WHERE id BETWEEN 1001 AND 1300;
SELECT lk_buffers() BETWEEN 2 AND 30 AS leaves_pinned_once;
DROP FUNCTION lk_buffers();
DROP TABLE lk;
RESET enable_seqscan;
RESET enable_bitmapscan;

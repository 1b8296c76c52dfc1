--
-- fractam_unique: UNIQUE fractam indexes: violations (error text like
-- btree's), NULLs, NULLS NOT DISTINCT, dead and aborted duplicates, keys whose
-- insert message is still buffered, unique index builds, and INSERT ... ON
-- CONFLICT with a fractam unique index as the arbiter.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
-- buffer every insert below the right edge (no direct apply to cached leaves),
-- so that the buffering and flush paths are exercised
SET fractam.direct_apply = off;

CREATE TABLE un (k int, v text);
CREATE UNIQUE INDEX un_k ON un USING fractam (k) WITH (fanout = 4);
INSERT INTO un SELECT i, 'v' || i FROM generate_series(1, 5000) i;
SELECT fractam_verify('un_k');

-- violations
INSERT INTO un VALUES (42, 'dup');
INSERT INTO un VALUES (6000, 'a'), (6000, 'b');
INSERT INTO un SELECT i, 'x' FROM generate_series(4990, 5010) i;
UPDATE un SET k = 11 WHERE k = 10;
UPDATE un SET k = k + 1 WHERE k BETWEEN 100 AND 110;
SELECT count(*), min(k), max(k) FROM un;
-- NULLs are distinct by default
INSERT INTO un VALUES (NULL, 'n1'), (NULL, 'n2');
SELECT count(*) FROM un WHERE k IS NULL;
-- a deleted or updated-away key can be inserted again
DELETE FROM un WHERE k = 42;
INSERT INTO un VALUES (42, 'again');
UPDATE un SET k = 100042 WHERE k = 43;
INSERT INTO un VALUES (43, 'again');
BEGIN;
DELETE FROM un WHERE k = 44;
INSERT INTO un VALUES (44, 'same xact');
COMMIT;
-- an aborted insert leaves no trace, a duplicate in the same transaction fails
BEGIN;
INSERT INTO un VALUES (7001, 'aborted');
ROLLBACK;
INSERT INTO un VALUES (7001, 'committed');
BEGIN;
INSERT INTO un VALUES (7002, 'first');
INSERT INTO un VALUES (7002, 'second');
ROLLBACK;
-- a subtransaction that inserted and rolled back
BEGIN;
SAVEPOINT s1;
INSERT INTO un VALUES (7003, 'sub');
ROLLBACK TO s1;
INSERT INTO un VALUES (7003, 'outer');
COMMIT;
SELECT k, v FROM un WHERE k IN (42, 43, 44, 7001, 7002, 7003, 100042) ORDER BY k;
SELECT fractam_verify('un_k');

-- duplicates of keys whose insert is still buffered high in the tree, and of
-- keys already flushed to leaves: every one must be caught
CREATE TABLE un2 (k int);
CREATE UNIQUE INDEX un2_k ON un2 USING fractam (k) WITH (fanout = 2);
INSERT INTO un2 SELECT (i * 7919) % 20011 FROM generate_series(1, 20000) i;
SELECT buffered_messages + leaf_items AS entries, flushes > 0 AS flushed
FROM fractam_stats('un2_k');
CREATE FUNCTION try_dups(tbl regclass, keys int[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	k int;
	caught int := 0;
	missed int := 0;
BEGIN
	FOREACH k IN ARRAY keys LOOP
		BEGIN
			EXECUTE format('INSERT INTO %s VALUES ($1)', tbl) USING k;
			missed := missed + 1;
		EXCEPTION WHEN unique_violation THEN
			caught := caught + 1;
		END;
	END LOOP;
	RETURN format('caught %s, missed %s', caught, missed);
END $$;
SELECT try_dups('un2', ARRAY(SELECT (i * 7919) % 20011 FROM generate_series(1, 20000, 37) i));
SELECT try_dups('un2', ARRAY(SELECT (i * 7919) % 20011 FROM generate_series(19900, 20000) i));
SELECT count(*) FROM un2;
SELECT ft_check('index', 'SELECT k FROM un2 WHERE k BETWEEN 100 AND 200');
SELECT fractam_verify('un2_k');

-- NULLS NOT DISTINCT
CREATE TABLE un3 (a int, b int);
CREATE UNIQUE INDEX un3_ab ON un3 USING fractam (a, b) NULLS NOT DISTINCT;
INSERT INTO un3 VALUES (1, NULL), (NULL, 1), (NULL, NULL), (1, 1);
INSERT INTO un3 VALUES (1, NULL);
INSERT INTO un3 VALUES (NULL, NULL);
INSERT INTO un3 VALUES (2, NULL);
SELECT count(*) FROM un3;

-- multi-column and INCLUDE
CREATE TABLE un4 (a int, b text, c int);
CREATE UNIQUE INDEX un4_ab ON un4 USING fractam (a, b) INCLUDE (c);
INSERT INTO un4 SELECT i % 100, 'b' || (i / 100), i FROM generate_series(0, 2999) i;
INSERT INTO un4 VALUES (5, 'b5', -1);
INSERT INTO un4 VALUES (5, 'b30', -1);
INSERT INTO un4 VALUES (5, NULL, -1), (5, NULL, -2);
SELECT count(*) FROM un4;

-- building a unique index: duplicates fail, dead duplicates do not
CREATE TABLE un5 (k int);
INSERT INTO un5 SELECT i FROM generate_series(1, 1000) i;
INSERT INTO un5 VALUES (500);
CREATE UNIQUE INDEX un5_k ON un5 USING fractam (k);
SELECT count(*) FROM pg_class WHERE relname = 'un5_k';
DELETE FROM un5 WHERE ctid = (SELECT max(ctid) FROM un5 WHERE k = 500);
CREATE UNIQUE INDEX un5_k ON un5 USING fractam (k);
INSERT INTO un5 VALUES (500);
INSERT INTO un5 VALUES (1001);
SELECT fractam_verify('un5_k');

-- INSERT ... ON CONFLICT with the fractam unique index as arbiter
CREATE TABLE oc (k int, v text, n int DEFAULT 0);
CREATE UNIQUE INDEX oc_k ON oc USING fractam (k) WITH (fanout = 4);
INSERT INTO oc SELECT i, 'v' || i FROM generate_series(1, 3000) i;
EXPLAIN (COSTS OFF) INSERT INTO oc VALUES (1, 'x') ON CONFLICT (k) DO NOTHING;
EXPLAIN (COSTS OFF) INSERT INTO oc VALUES (1, 'x') ON CONFLICT (k) DO UPDATE SET n = oc.n + 1;
WITH ins AS (
	INSERT INTO oc SELECT i, 'new' FROM generate_series(2990, 3010) i
	ON CONFLICT (k) DO NOTHING RETURNING k)
SELECT count(*), min(k), max(k) FROM ins;
WITH ups AS (
	INSERT INTO oc SELECT i, 'upd' FROM generate_series(2995, 3015) i
	ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = oc.n + 1 RETURNING k, v, n)
SELECT v, n, count(*) FROM ups GROUP BY v, n ORDER BY v, n;
-- conditional update: WHERE on the conflicting row
INSERT INTO oc VALUES (10, 'cond') ON CONFLICT (k) DO UPDATE SET v = excluded.v WHERE oc.n > 0;
INSERT INTO oc VALUES (2995, 'cond') ON CONFLICT (k) DO UPDATE SET v = excluded.v WHERE oc.n > 0;
SELECT k, v, n FROM oc WHERE k IN (10, 2995) ORDER BY k;
-- the same key twice in one command
INSERT INTO oc VALUES (20, 'a'), (20, 'b') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO oc VALUES (5000, 'a'), (5000, 'b') ON CONFLICT (k) DO NOTHING;
SELECT k, v FROM oc WHERE k IN (20, 5000) ORDER BY k;
-- no arbiter index for a non-unique column
INSERT INTO oc VALUES (1, 'x') ON CONFLICT (v) DO NOTHING;
-- a deleted key is not a conflict
DELETE FROM oc WHERE k = 30;
INSERT INTO oc VALUES (30, 'reinserted') ON CONFLICT (k) DO UPDATE SET v = 'conflict';
SELECT k, v FROM oc WHERE k = 30;
SELECT count(*), count(DISTINCT k) FROM oc;
SELECT fractam_verify('oc_k');
SELECT ft_check('index', 'SELECT k, v, n FROM oc WHERE k BETWEEN 2980 AND 3020');

-- partial unique index as arbiter, with an inference WHERE clause
CREATE TABLE ocp (k int, active bool);
CREATE UNIQUE INDEX ocp_k ON ocp USING fractam (k) WHERE active;
INSERT INTO ocp VALUES (1, true), (1, false), (1, false);
INSERT INTO ocp VALUES (1, true) ON CONFLICT (k) WHERE active DO NOTHING;
INSERT INTO ocp VALUES (1, true) ON CONFLICT (k) WHERE active DO UPDATE SET active = false;
INSERT INTO ocp VALUES (1, true);
SELECT active, count(*) FROM ocp GROUP BY active ORDER BY active;

-- multi-column arbiter
CREATE TABLE ocm (a int, b text, v int);
CREATE UNIQUE INDEX ocm_ab ON ocm USING fractam (a, b);
INSERT INTO ocm VALUES (1, 'x', 1), (1, 'y', 1);
INSERT INTO ocm VALUES (1, 'x', 5), (2, 'x', 5) ON CONFLICT (a, b) DO UPDATE SET v = ocm.v + excluded.v;
SELECT * FROM ocm ORDER BY a, b;

SELECT ft_verify_all('un') + ft_verify_all('un3') + ft_verify_all('un4')
       + ft_verify_all('ocp') + ft_verify_all('ocm') AS verified;
DROP TABLE un, un2, un3, un4, un5, oc, ocp, ocm;
DROP FUNCTION try_dups(regclass, int[]);

-- A session's first read through a unique fractam index does not look up
-- the hash opclasses of its key (only unique inserts need them, for their
-- key locks): it reads about as many pages as the same read through a
-- btree index.  (Finding them scanned pg_opclass: some 50 catalog pages
-- more, counted in the scan's buffers.)  Then unique inserts look them up.
CREATE TABLE ufirst (a int, b int, t text);
CREATE UNIQUE INDEX ufirst_a ON ufirst USING fractam (a, t);
CREATE UNIQUE INDEX ufirst_b ON ufirst USING btree (b, t);
INSERT INTO ufirst SELECT g, g, 'k' || g FROM generate_series(1, 1000) g;
VACUUM ANALYZE ufirst;
CREATE FUNCTION ufirst_buffers(col text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) '
				   'SELECT a FROM ufirst WHERE %s = 500 AND t = ''k500''', col) INTO plan;
	RETURN (plan->0->'Plan'->>'Shared Hit Blocks')::int +
		(plan->0->'Plan'->>'Shared Read Blocks')::int;
END $$;
\c
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT ufirst_buffers('b') AS btree_first \gset
\c
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT ufirst_buffers('a') AS fractam_first \gset
SELECT :fractam_first <= :btree_first + 20 AS first_read_reads_no_catalogs;
INSERT INTO ufirst VALUES (500, 5000, 'k500');
INSERT INTO ufirst VALUES (1001, 1001, 'k1001');
SELECT count(*), ft_verify_all('ufirst') AS verified FROM ufirst;
DROP TABLE ufirst;
DROP FUNCTION ufirst_buffers(text);

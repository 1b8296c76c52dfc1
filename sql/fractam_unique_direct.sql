--
-- fractam_unique_direct: unique inserts decided on the insert's own descent
-- (ft_insert_unique: the leaf is cached and nothing is buffered above it, so
-- its neighbours tell whether the key exists), and the search they fall back
-- to.  A differential test against btree: the same random inserts, updates,
-- deletes and VACUUMs on a small key domain (so every key has many dead
-- versions, spread over several leaves, some removed by VACUUM) must fail and
-- succeed exactly as they do with a btree unique index.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

-- wide entries (INCLUDE) make few entries per leaf: runs of one key's
-- versions cross leaf boundaries
CREATE TABLE ud_b (a int, b int, pad text, n int);
CREATE TABLE ud_f (a int, b int, pad text, n int);
CREATE UNIQUE INDEX ud_b_ab ON ud_b USING btree (a, b) INCLUDE (pad);
CREATE UNIQUE INDEX ud_f_ab ON ud_f USING fractam (a, b) INCLUDE (pad) WITH (fanout = 4);
-- a second index on n makes updates of n non-HOT: each adds a new version
CREATE INDEX ud_b_n ON ud_b (n);
CREATE INDEX ud_f_n ON ud_f (n);

-- One random operation on both tables; returns whether the outcomes differ.
CREATE FUNCTION ud_step(op int, a int, b int, a2 int, b2 int) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE
	ok_b bool := true;
	ok_f bool := true;
	pad text := repeat(md5(a::text || ',' || b::text), 4);
	sql text;
BEGIN
	sql := CASE op
		WHEN 0 THEN 'INSERT INTO %I VALUES ($1, $2, $5, 0)'
		WHEN 1 THEN 'UPDATE %I SET n = n + 1 WHERE a = $1 AND b = $2'
		WHEN 2 THEN 'UPDATE %I SET a = $3, b = $4 WHERE a = $1 AND b = $2'
		WHEN 3 THEN 'DELETE FROM %I WHERE a = $1 AND b = $2'
		ELSE 'INSERT INTO %I VALUES ($1, $2, $5, 0) ON CONFLICT (a, b) DO UPDATE SET n = %I.n + 1'
	END;
	BEGIN
		EXECUTE format(sql, 'ud_b', 'ud_b') USING a, b, a2, b2, pad;
	EXCEPTION WHEN unique_violation THEN
		ok_b := false;
	END;
	BEGIN
		EXECUTE format(sql, 'ud_f', 'ud_f') USING a, b, a2, b2, pad;
	EXCEPTION WHEN unique_violation THEN
		ok_f := false;
	END;
	RETURN ok_b IS DISTINCT FROM ok_f;
END $$;

-- n random operations on keys (0..9, 0..keys/10-1); returns a summary that
-- must read "0 mismatches" and show that both paths and violations occurred
CREATE FUNCTION ud_round(seed float8, n int, keys int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	mism int := 0;
	i int;
	op int;
	viol_before bigint;
BEGIN
	PERFORM setseed(seed);
	FOR i IN 1 .. n LOOP
		op := CASE WHEN random() < 0.4 THEN 0
				   WHEN random() < 0.4 THEN 1
				   WHEN random() < 0.3 THEN 2
				   WHEN random() < 0.5 THEN 3
				   ELSE 4 END;
		IF ud_step(op, (random() * 9)::int, (random() * (keys / 10 - 1))::int,
				   (random() * 9)::int, (random() * (keys / 10 - 1))::int) THEN
			mism := mism + 1;
		END IF;
	END LOOP;
	RETURN format('%s mismatches', mism);
END $$;

-- rows must agree too
CREATE FUNCTION ud_same() RETURNS text
LANGUAGE sql AS $$
	SELECT CASE WHEN count(*) = 0 THEN 'same rows'
				ELSE count(*) || ' rows differ' END
	FROM ((SELECT a, b, n FROM ud_b EXCEPT ALL SELECT a, b, n FROM ud_f)
		  UNION ALL
		  (SELECT a, b, n FROM ud_f EXCEPT ALL SELECT a, b, n FROM ud_b)) d
$$;

SELECT in_descent AS in_descent_0, searched AS searched_0
FROM fractam_unique_stats() \gset

-- cached leaves, many keys: most inserts are decided on the way down
SELECT ud_round(0.05, 3000, 5000);
SELECT ud_round(0.1, 3000, 200);
SELECT ud_same();
VACUUM ud_b, ud_f;
SELECT ud_round(0.2, 3000, 200);
SELECT ud_same();
-- few keys, many versions each
SELECT ud_round(0.3, 3000, 30);
SELECT ud_same();
VACUUM ud_b, ud_f;
SELECT ud_round(0.4, 3000, 30);
VACUUM ud_f;
SELECT ud_round(0.5, 2000, 30);
SELECT ud_same();
-- buffered inserts: the tree cannot decide, the key is searched
SET fractam.direct_apply = off;
SELECT ud_round(0.6, 3000, 200);
VACUUM ud_f;
SELECT ud_round(0.7, 3000, 30);
RESET fractam.direct_apply;
SELECT ud_round(0.8, 3000, 30);
SELECT ud_same();
SELECT fractam_verify('ud_f_ab');

-- both paths were taken, many times
SELECT in_descent - :in_descent_0 > 500 AS many_in_descent,
	   searched - :searched_0 > 1000 AS many_searched
FROM fractam_unique_stats();
SELECT (SELECT count(*) FROM ud_f) > 50 AS has_rows,
	   (SELECT leaf_pages FROM fractam_stats('ud_f_ab')) > 8 AS several_leaves;

-- ascending keys take the right-edge fast path, and a duplicate of the
-- last key is still caught there
CREATE TABLE ua (k int);
CREATE UNIQUE INDEX ua_k ON ua USING fractam (k);
INSERT INTO ua SELECT generate_series(1, 20000);
SELECT in_descent AS in_descent_1 FROM fractam_unique_stats() \gset
INSERT INTO ua SELECT generate_series(20001, 25000);
SELECT in_descent - :in_descent_1 AS decided_in_descent FROM fractam_unique_stats();
INSERT INTO ua VALUES (25000);
INSERT INTO ua VALUES (1);
INSERT INTO ua VALUES (12345);
DELETE FROM ua WHERE k = 25000;
INSERT INTO ua VALUES (25000);
SELECT count(*), max(k) FROM ua;
SELECT fractam_verify('ua_k');

-- types without a hash operator class (varbit, money): the key lock hashes
-- the value's bytes, which their operator classes declare equal for equal
-- values; duplicates are still caught
CREATE TABLE uv (b varbit, m money);
CREATE UNIQUE INDEX uv_b ON uv USING fractam (b);
CREATE UNIQUE INDEX uv_m ON uv USING fractam (m);
INSERT INTO uv SELECT i::bit(12)::varbit, i::money FROM generate_series(1, 3000) i;
INSERT INTO uv VALUES (B'000000000111', 99999);
INSERT INTO uv VALUES (B'1', 7);
INSERT INTO uv VALUES (B'1', 7.001);
SELECT count(*) FROM uv;

DROP TABLE ud_b, ud_f, ua, uv;
DROP FUNCTION ud_round(float8, int, int);
DROP FUNCTION ud_step(int, int, int, int, int);
DROP FUNCTION ud_same();

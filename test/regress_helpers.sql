-- Helpers for the fractam pg_regress tests.  Each sql/*.sql includes this file
-- with  \set ECHO none / \i test/regress_helpers.sql / \set ECHO all
-- (pg_regress runs psql in the top directory of the tree).
--
-- ft_check(mode, query [, ordered]) returns one line:
--     "<scan nodes of the plan> | rows=N ok"
-- after running QUERY twice: once with the planner forced onto index paths
-- (MODE, see ft_force) and once with every index path disabled (sequential
-- scan + sort: the reference).  "ok" means both runs returned the same rows
-- (the same multiset; with ORDERED, the same sequence).  The scan nodes name
-- every index the plan uses; an index that is not a fractam index is flagged
-- "[amname]", so the expected output also proves which index answered.
SET client_min_messages = warning;
-- a hung statement fails the test instead of stalling the whole suite
SET statement_timeout = '180s';

-- Force the planner onto one kind of scan for the current transaction.
--   index  : plain Index Scan          ios    : Index Only Scan allowed
--   bitmap : Bitmap Index/Heap Scan    any    : anything but a Seq Scan
--   merge  : like any, joins by merge join over ordered index scans
--   nestloop: like index, joins by nested loops with inner index scans
--   ref    : sequential scans only (the reference)
CREATE OR REPLACE FUNCTION ft_force(mode text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	seq bool := false; idx bool := true; ios bool := true; bmp bool := true;
	hash bool := true; nest bool := true; srt bool := true;
	mrg bool := true; mat bool := true;
BEGIN
	CASE mode
		WHEN 'index' THEN ios := false; bmp := false;
		WHEN 'ios' THEN bmp := false;
		WHEN 'bitmap' THEN idx := false; ios := false;
		WHEN 'any' THEN NULL;
		WHEN 'merge' THEN hash := false; nest := false; srt := false; bmp := false;
		WHEN 'nestloop' THEN hash := false; mrg := false; mat := false; bmp := false; ios := false;
		WHEN 'ref' THEN seq := true; idx := false; ios := false; bmp := false;
		ELSE RAISE EXCEPTION 'ft_force: unknown mode %', mode;
	END CASE;
	PERFORM set_config('enable_seqscan', seq::text, true);
	PERFORM set_config('enable_indexscan', idx::text, true);
	PERFORM set_config('enable_indexonlyscan', ios::text, true);
	PERFORM set_config('enable_bitmapscan', bmp::text, true);
	PERFORM set_config('enable_hashjoin', hash::text, true);
	PERFORM set_config('enable_nestloop', nest::text, true);
	PERFORM set_config('enable_sort', srt::text, true);
	PERFORM set_config('enable_incremental_sort', 'on', true);
	PERFORM set_config('enable_mergejoin', mrg::text, true);
	PERFORM set_config('enable_material', mat::text, true);
	PERFORM set_config('max_parallel_workers_per_gather', '0', true);
END $$;

-- The scan and join nodes of the plan of QUERY under the current settings,
-- sorted (so that the order the planner puts join inputs in does not matter).
CREATE OR REPLACE FUNCTION ft_plan(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	m text[];
	am name;
	res text[] := '{}';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		m := regexp_match(line, '((?:Index Only Scan|Index Scan|Bitmap Index Scan)(?: Backward)?) (?:using|on) ([^ ]+)');
		IF m IS NOT NULL THEN
			SELECT a.amname INTO am
			FROM pg_class c JOIN pg_am a ON a.oid = c.relam
			WHERE c.oid = to_regclass(m[2]);
			res := res || (m[1] || ' ' || m[2] ||
				CASE WHEN am = 'fractam_index' THEN '' ELSE ' [' || coalesce(am, '?') || ']' END);
		ELSE
			m := regexp_match(line, '^\s*(?:->\s*)?(Seq Scan|Merge Join|Hash Join|Nested Loop)');
			IF m IS NOT NULL THEN
				res := res || m[1];
			END IF;
		END IF;
	END LOOP;
	RETURN array_to_string(ARRAY(SELECT DISTINCT x COLLATE "C" FROM unnest(res) x ORDER BY 1), '; ');
END $$;

-- The rows of QUERY (as text) under the current settings, in output order.
CREATE OR REPLACE FUNCTION ft_rows(query text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	res text[] := '{}';
BEGIN
	FOR r IN EXECUTE query LOOP
		res := res || r::text;
	END LOOP;
	RETURN res;
END $$;

CREATE OR REPLACE FUNCTION ft_check(mode text, query text, ordered bool DEFAULT false)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	plan text;
	got text[];
	ref text[];
	verdict text;
BEGIN
	PERFORM ft_force(mode);
	plan := ft_plan(query);
	got := ft_rows(query);
	PERFORM ft_force('ref');
	ref := ft_rows(query);
	PERFORM ft_force(mode);
	IF NOT ordered THEN
		got := ARRAY(SELECT x FROM unnest(got) x ORDER BY x COLLATE "C");
		ref := ARRAY(SELECT x FROM unnest(ref) x ORDER BY x COLLATE "C");
	END IF;
	IF got = ref THEN
		verdict := 'ok';
	ELSE
		verdict := format('MISMATCH: got %s rows, expected %s; missing %s, extra %s',
			cardinality(got), cardinality(ref),
			(SELECT count(*) FROM (SELECT unnest(ref) EXCEPT ALL SELECT unnest(got)) s),
			(SELECT count(*) FROM (SELECT unnest(got) EXCEPT ALL SELECT unnest(ref)) s));
		IF ordered AND cardinality(got) = cardinality(ref) THEN
			verdict := verdict || ' (order differs)';
		END IF;
	END IF;
	RETURN plan || ' | rows=' || cardinality(ref) || ' ' || verdict;
END $$;

-- fractam_verify on every fractam index of a table; returns the number checked.
CREATE OR REPLACE FUNCTION ft_verify_all(tbl regclass) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	i regclass;
	n int := 0;
BEGIN
	FOR i IN
		SELECT x.indexrelid::regclass
		FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
		JOIN pg_am a ON a.oid = c.relam
		WHERE x.indrelid = tbl AND a.amname = 'fractam_index'
		ORDER BY c.relname
	LOOP
		PERFORM fractam_verify(i);
		n := n + 1;
	END LOOP;
	RETURN n;
END $$;

-- Wait until no other session has a snapshot older than this point, so
-- that VACUUM can remove what was deleted before (autovacuum's ANALYZE of
-- another table holds one; the wait gives up after 30 s).
CREATE OR REPLACE FUNCTION ft_wait_for_old_snapshots() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_current_xact_id();
	FOR i IN 1..600 LOOP
		PERFORM pg_stat_clear_snapshot();
		EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_stat_activity
							  WHERE pid <> pg_backend_pid()
								AND backend_xmin IS NOT NULL);
		PERFORM pg_sleep(0.05);
	END LOOP;
END $$;

RESET client_min_messages;

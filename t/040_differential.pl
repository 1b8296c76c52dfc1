# Randomized differential test: fractam against btree.
#
# Two heap tables get exactly the same rows and the same random inserts,
# deletes, updates and VACUUMs (the random values are drawn once per round
# into a temporary table, then applied to both):
#   d_ft  with fractam indexes (small fanouts, so the trees get deep),
#   d_bt  with the same btree indexes.
# In total well over 1,000,000 entries are inserted into the fractam indexes.
# After every round each fractam index is verified, and a few hundred random
# queries (equality, ranges, ordered LIMIT in both directions, IS NULL,
# = ANY, multi-column, index-only) run on both tables with the same planner
# settings (sequential scans off); the answers must be identical, and the
# plans must use the intended indexes.  The seed is fixed and printed;
# FRACTAM_TEST_SEED overrides it.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seed = $ENV{FRACTAM_TEST_SEED} // 7301;
my $rounds = $ENV{FRACTAM_DIFF_ROUNDS} // 10;
my $rows_per_round = $ENV{FRACTAM_DIFF_ROWS} // 40000;
my $queries_per_round = $ENV{FRACTAM_DIFF_QUERIES} // 1000;
my $fanout_a = $ENV{FRACTAM_DIFF_FANOUT} // 2;
diag("seed $seed, $rounds rounds of $rows_per_round inserts and $queries_per_round query pairs");

my $node = ft_node('diff');
$node->init;
$node->ft_configure("autovacuum = off", "max_wal_size = 2GB", "shared_buffers = 256MB");
$node->start;

$node->safe_psql('postgres', qq{
	CREATE EXTENSION fractam;
	CREATE SEQUENCE ids;
	CREATE TABLE d_ft (id bigint, a int, b text, c float8) WITH (autovacuum_enabled = off);
	CREATE TABLE d_bt (id bigint, a int, b text, c float8) WITH (autovacuum_enabled = off);
	CREATE UNIQUE INDEX ft_id ON d_ft USING fractam (id) WITH (fanout = 8);
	CREATE INDEX ft_a ON d_ft USING fractam (a) WITH (fanout = $fanout_a);
	CREATE INDEX ft_bc ON d_ft USING fractam (b, c DESC) WITH (fanout = 4);
	CREATE UNIQUE INDEX bt_id ON d_bt USING btree (id);
	CREATE INDEX bt_a ON d_bt USING btree (a);
	CREATE INDEX bt_bc ON d_bt USING btree (b, c DESC);
});

# The query generator and comparer, run inside the server.  {T} stands for
# the table; every query returns one text value.
$node->safe_psql('postgres', <<'EOSQL');
CREATE FUNCTION diff_queries(nq int, qseed float8,
	OUT executed int, OUT mismatches int, OUT plan_misses int, OUT nonempty int,
	OUT details text)
LANGUAGE plpgsql AS $f$
DECLARE
	kind int; q text; mode text; rf text; rb text; x int; y int; n int; s text;
	plan_ft text; plan_bt text; line text;
	checked bool[] := array_fill(false, ARRAY[14]);
	agg_ids constant text := 'SELECT count(*) || '':'' || coalesce(sum(id), 0) || '':'' || coalesce(md5(string_agg(id::text, '','' ORDER BY id)), '''') FROM (%s OFFSET 0) s';
	agg_seq constant text := 'SELECT count(*) || '':'' || coalesce(md5(string_agg(v, '','')), '''') FROM (%s) s';
BEGIN
	PERFORM setseed(qseed);
	executed := 0; mismatches := 0; plan_misses := 0; nonempty := 0; details := '';
	FOR i IN 1 .. nq LOOP
		kind := 1 + floor(random() * 14)::int;
		x := floor(random() * 105000)::int - 2000;
		y := x + floor(random() * 4000)::int;
		n := 1 + floor(random() * 400)::int;
		s := substr('0123456789abcdef', 1 + floor(random() * 16)::int, 1)
			|| substr('0123456789abcdef', 1 + floor(random() * 16)::int, 1);
		mode := 'index';
		CASE kind
			WHEN 1 THEN q := format(agg_ids, format('SELECT id FROM {T} WHERE a = %s', x));
			WHEN 2 THEN q := format(agg_ids, format('SELECT id FROM {T} WHERE a BETWEEN %s AND %s', x, y));
			WHEN 3 THEN q := format(agg_ids, format('SELECT id FROM {T} WHERE a >= %s AND a < %s', x, y)); mode := 'bitmap';
			WHEN 4 THEN q := format(agg_seq, format('SELECT a::text AS v FROM {T} WHERE a > %s ORDER BY a LIMIT %s', x, n));
			WHEN 5 THEN q := format(agg_seq, format('SELECT a::text AS v FROM {T} WHERE a < %s ORDER BY a DESC LIMIT %s', y, n));
			WHEN 6 THEN q := format(agg_seq, format('SELECT coalesce(a::text, ''N'') AS v FROM {T} ORDER BY a DESC LIMIT %s', n));
			WHEN 7 THEN q := format(agg_ids, 'SELECT id FROM {T} WHERE a IS NULL');
			WHEN 8 THEN q := format(agg_ids, format('SELECT id FROM {T} WHERE b IS NULL AND c < %s', x / 100));
			WHEN 9 THEN q := format(agg_ids, format('SELECT id FROM {T} WHERE b = %L AND c > %s', s, (x % 1000) / 10.0));
			WHEN 10 THEN q := format(agg_seq, format('SELECT b || ''/'' || c AS v FROM {T} WHERE b >= %L ORDER BY b, c DESC LIMIT %s', s, n));
			WHEN 11 THEN q := format(agg_seq, format('SELECT coalesce(b, ''N'') || ''/'' || coalesce(c::text, ''N'') AS v FROM {T} WHERE b < %L ORDER BY b DESC, c LIMIT %s', s, n));
			WHEN 12 THEN q := format(agg_ids, format('SELECT id FROM {T} WHERE id BETWEEN %s AND %s', x * 5, x * 5 + n));
			WHEN 13 THEN q := format(agg_ids, format('SELECT id FROM {T} WHERE a = ANY (ARRAY[%s, %s, %s, NULL])', x, y, x + 1)); mode := 'bitmap';
			WHEN 14 THEN q := format('SELECT count(*) || '':'' || coalesce(sum(a), 0) FROM (SELECT a FROM {T} WHERE a BETWEEN %s AND %s OFFSET 0) s', x, y); mode := 'ios';
		END CASE;
		PERFORM set_config('enable_seqscan', 'off', true);
		PERFORM set_config('enable_sort', 'on', true);
		PERFORM set_config('max_parallel_workers_per_gather', '0', true);
		PERFORM set_config('enable_indexscan', (mode <> 'bitmap')::text, true);
		PERFORM set_config('enable_indexonlyscan', (mode = 'ios')::text, true);
		PERFORM set_config('enable_bitmapscan', (mode = 'bitmap')::text, true);
		IF NOT checked[kind] THEN
			-- the first query of each kind: both plans must scan the intended index
			checked[kind] := true;
			plan_ft := ''; plan_bt := '';
			FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || replace(q, '{T}', 'd_ft') LOOP
				plan_ft := plan_ft || line || E'\n';
			END LOOP;
			FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || replace(q, '{T}', 'd_bt') LOOP
				plan_bt := plan_bt || line || E'\n';
			END LOOP;
			IF plan_ft !~ '(Index Scan|Index Only Scan|Bitmap Index Scan)( Backward)? (using|on) ft_'
			   OR plan_ft ~ 'Seq Scan'
			   OR (mode = 'ios' AND plan_ft !~ 'Index Only Scan')
			   OR plan_bt !~ '(Index Scan|Index Only Scan|Bitmap Index Scan)( Backward)? (using|on) bt_'
			   OR plan_bt ~ 'Seq Scan' THEN
				plan_misses := plan_misses + 1;
				details := details || format(E'kind %s: unexpected plan for %s\n%s%s', kind, q, plan_ft, plan_bt);
			END IF;
		END IF;
		EXECUTE replace(q, '{T}', 'd_ft') INTO rf;
		EXECUTE replace(q, '{T}', 'd_bt') INTO rb;
		executed := executed + 1;
		IF rb !~ '^0:' AND rb <> '' THEN
			nonempty := nonempty + 1;
		END IF;
		IF i <= 2 THEN
			RAISE NOTICE 'sample query (kind %, %): % => %', kind, mode, replace(q, '{T}', 'd_ft'), rf;
		END IF;
		IF rf IS DISTINCT FROM rb THEN
			mismatches := mismatches + 1;
			IF mismatches <= 5 THEN
				details := details || format(E'kind %s mode %s: %s\n  fractam: %s\n  btree:   %s\n', kind, mode, q, rf, rb);
			END IF;
		END IF;
	END LOOP;
END
$f$;
EOSQL

my $fractam_entries = 0;
my $total_queries = 0;
for my $round (1 .. $rounds)
{
	my $direct = $round % 2 ? 'off' : 'on';
	my $rseed = (($seed * 7919 + $round * 104729) % 1000003) / 1000003.0;
	my $out = $node->safe_psql('postgres', qq{
		SET fractam.direct_apply = $direct;
		SELECT setseed($rseed);
		CREATE TEMP TABLE batch AS
		SELECT nextval('ids') AS id,
		       CASE WHEN random() < 0.03 THEN NULL ELSE floor(random() * 100000)::int END AS a,
		       CASE WHEN random() < 0.02 THEN NULL ELSE left(md5(random()::text), 1 + floor(random() * 6)::int) END AS b,
		       CASE WHEN random() < 0.02 THEN NULL ELSE round((random() * 1000)::numeric, 1)::float8 END AS c
		FROM generate_series(1, $rows_per_round);
		-- a run of ascending and of equal keys now and then
		INSERT INTO batch SELECT nextval('ids'), 100000 + $round * 1000 + g, 'asc', g FROM generate_series(1, 500) g;
		INSERT INTO batch SELECT nextval('ids'), 4242, 'same', $round FROM generate_series(1, 300) g;
		INSERT INTO d_ft SELECT * FROM batch;
		INSERT INTO d_bt SELECT * FROM batch;
		CREATE TEMP TABLE victims AS
		SELECT id FROM d_bt WHERE random() < 0.12;
		DELETE FROM d_ft WHERE id IN (SELECT id FROM victims);
		DELETE FROM d_bt WHERE id IN (SELECT id FROM victims);
		CREATE TEMP TABLE movers AS
		SELECT id, CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 100000)::int END AS a,
		       left(md5(random()::text), 3) AS b
		FROM d_bt WHERE random() < 0.05;
		UPDATE d_ft t SET a = m.a, b = m.b FROM movers m WHERE t.id = m.id;
		UPDATE d_bt t SET a = m.a, b = m.b FROM movers m WHERE t.id = m.id;
		SELECT (SELECT count(*) FROM batch) || ' ' || (SELECT count(*) FROM victims) || ' ' || (SELECT count(*) FROM movers);
	});
	my ($ins, $del, $upd) = (split /\n/, $out)[-1] =~ /(\d+) (\d+) (\d+)/;
	# three fractam indexes: each inserted row and each non-HOT update adds an entry to each
	$fractam_entries += 3 * ($ins + $upd);
	if ($round % 3 != 0)
	{
		$node->safe_psql('postgres', 'VACUUM d_ft; VACUUM d_bt;');
	}
	my @bad = ft_verify_all($node);
	is(join("\n", @bad), '', "round $round: fractam_verify passes");
	is($node->safe_psql('postgres', 'SELECT (SELECT count(*) FROM d_ft) = (SELECT count(*) FROM d_bt)'),
		't', "round $round: same number of rows");
	my $res = $node->safe_psql('postgres',
		"SELECT executed || '|' || mismatches || '|' || plan_misses || '|' || nonempty || '|' || details FROM diff_queries($queries_per_round, $rseed)");
	my ($executed, $mismatches, $plan_misses, $nonempty, $details) = split /\|/, $res, 5;
	cmp_ok($nonempty, '>', $executed / 3, "round $round: most queries return rows ($nonempty of $executed)");
	$total_queries += $executed;
	is($mismatches, 0, "round $round: $executed random queries answer the same through fractam and btree")
	  or diag($details);
	is($plan_misses, 0, "round $round: the queries use the intended indexes")
	  or diag($details);
	note "round $round: +$ins rows, -$del rows, $upd updated; fractam entries inserted so far: $fractam_entries";
}
cmp_ok($fractam_entries, '>=', 1_000_000, "at least 1,000,000 fractam index entries inserted ($fractam_entries)");
cmp_ok($total_queries, '>=', 2000, "thousands of random queries compared ($total_queries)");

# a last full comparison of every index with the heap
for my $chk (['ft_id', 'id', '0'], ['ft_a', 'a', '-1'], ['ft_bc', 'b', "''"])
{
	my ($ok, $desc) = ft_index_matches_heap($node, 'postgres', 'd_ft', @$chk);
	ok($ok, $desc);
}
is(join("\n", ft_log_problems($node)), '', 'no PANIC or crash in the log');
$node->stop;
done_testing();

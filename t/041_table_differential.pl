# Randomized differential test of fractam tables, uncompressed and
# compressed, against heap.
#
# Four tables get exactly the same rows and the same random DML (drawn once
# per round into tables, then applied to each):
#   t_heap  heap with btree indexes (the reference),
#   t_none  a fractam table with fractam indexes, uncompressed,
#   t_lz4   the same, table and indexes WITH (compression = 'lz4'),
#   t_zstd  the same with zstd.
# Each round inserts a batch (COPY-like INSERT ... SELECT), deletes and
# updates random rows (indexed and unindexed columns), locks rows, rolls a
# delete and a subtransaction's update back, and VACUUMs two rounds in three:
# VACUUM compresses the leaves of t_lz4 and t_zstd, so the later rounds'
# deletes, updates and row locks go into their change areas, and some of
# their leaves are rewritten.  After every round each fractam relation
# verifies, and random queries of every scan kind (sequential, index, bitmap,
# index-only, ordered LIMIT both ways, row fetches by ctid and TID ranges)
# give each fractam table the same answer as heap (TID queries are compared
# with a sequential scan of the same table: TIDs differ between the AMs).
# The seed is fixed and printed; FRACTAM_TEST_SEED overrides it.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seed = $ENV{FRACTAM_TEST_SEED} // 4111;
my $rounds = $ENV{FRACTAM_TDIFF_ROUNDS} // 6;
my $rows_per_round = $ENV{FRACTAM_TDIFF_ROWS} // 15000;
my $queries_per_round = $ENV{FRACTAM_TDIFF_QUERIES} // 200;
diag("seed $seed, $rounds rounds of $rows_per_round inserts and $queries_per_round queries");

my @fractam = qw(t_none t_lz4 t_zstd);
my %with = (t_none => '', t_lz4 => "WITH (compression = 'lz4')",
	t_zstd => "WITH (compression = 'zstd')");

my $node = ft_node('tdiff');
$node->init;
$node->ft_configure("autovacuum = off", "max_wal_size = 2GB", "shared_buffers = 256MB");
$node->start;

my $ddl = q{
	CREATE EXTENSION fractam;
	CREATE SEQUENCE ids;
	CREATE TABLE t_heap (id bigint, a int, b text, c float8, pad text);
	CREATE UNIQUE INDEX t_heap_id ON t_heap (id);
	CREATE INDEX t_heap_a ON t_heap (a);
	CREATE INDEX t_heap_bc ON t_heap (b, c DESC);
};
for my $t (@fractam)
{
	my $iw = $with{$t} eq '' ? 'WITH (fanout = 8)'
	  : $with{$t} =~ s/\)$/, fanout = 8)/r;
	$ddl .= qq{
	CREATE TABLE $t (id bigint, a int, b text, c float8, pad text) USING fractam $with{$t};
	CREATE UNIQUE INDEX ${t}_id ON $t USING fractam (id) $iw;
	CREATE INDEX ${t}_a ON $t USING fractam (a) $iw;
	CREATE INDEX ${t}_bc ON $t USING fractam (b, c DESC) $iw;
	};
}
$node->safe_psql('postgres', $ddl);

# The query generator and comparer, run inside the server.  {T} stands for
# the table; every query returns one text value.  Each fractam table's answer
# is compared with heap's; the first query of each kind checks the plans.
$node->safe_psql('postgres', <<'EOSQL');
CREATE FUNCTION tdiff_queries(nq int, qseed float8, tables text[],
	OUT executed int, OUT mismatches int, OUT plan_misses int, OUT nonempty int,
	OUT details text)
LANGUAGE plpgsql AS $f$
DECLARE
	kind int; q text; mode text; rh text; rf text; x int; y int; n int; s text;
	plan text; line text; want text; t text;
	nkinds constant int := 11;
	checked bool[] := array_fill(false, ARRAY[nkinds]);
	agg_ids constant text := 'SELECT count(*) || '':'' || coalesce(sum(id), 0) || '':'' || coalesce(md5(string_agg(id::text || ''/'' || coalesce(a::text, ''N'') || ''/'' || coalesce(b, ''N'') || ''/'' || coalesce(c::text, ''N'') || ''/'' || length(pad), '','' ORDER BY id)), '''') FROM (%s OFFSET 0) s';
	agg_seq constant text := 'SELECT count(*) || '':'' || coalesce(md5(string_agg(v, '','')), '''') FROM (%s) s';
BEGIN
	PERFORM setseed(qseed);
	executed := 0; mismatches := 0; plan_misses := 0; nonempty := 0; details := '';
	FOR i IN 1 .. nq LOOP
		kind := 1 + floor(random() * nkinds)::int;
		x := floor(random() * 105000)::int - 2000;
		y := x + floor(random() * 4000)::int;
		n := 1 + floor(random() * 300)::int;
		s := substr('0123456789abcdef', 1 + floor(random() * 16)::int, 1)
			|| substr('0123456789abcdef', 1 + floor(random() * 16)::int, 1);
		mode := 'index';
		want := '_';
		CASE kind
			WHEN 1 THEN q := format(agg_ids, format('SELECT * FROM {T} WHERE a = %s', x));
			WHEN 2 THEN q := format(agg_ids, format('SELECT * FROM {T} WHERE a BETWEEN %s AND %s', x, y));
			WHEN 3 THEN q := format(agg_ids, format('SELECT * FROM {T} WHERE a >= %s AND a < %s', x, y)); mode := 'bitmap';
			WHEN 4 THEN q := format(agg_seq, format('SELECT a::text AS v FROM {T} WHERE a > %s ORDER BY a LIMIT %s', x, n));
			WHEN 5 THEN q := format(agg_seq, format('SELECT b || ''/'' || c AS v FROM {T} WHERE b < %L ORDER BY b DESC, c LIMIT %s', s, n));
			WHEN 6 THEN q := format(agg_ids, format('SELECT * FROM {T} WHERE id BETWEEN %s AND %s', x * 2, x * 2 + n));
			WHEN 7 THEN q := format(agg_ids, format('SELECT * FROM {T} WHERE b = %L AND c > %s', s, (x % 1000) / 10.0));
			WHEN 8 THEN q := format('SELECT count(*) || '':'' || coalesce(sum(a), 0) FROM (SELECT a FROM {T} WHERE a BETWEEN %s AND %s OFFSET 0) s', x, y); mode := 'ios';
			WHEN 9 THEN q := format(agg_ids, format('SELECT * FROM {T} WHERE c < %s AND pad LIKE ''%%%s%%''', (x % 1000) / 10.0, s)); mode := 'seq'; want := '';
			WHEN 10 THEN q := format(agg_ids, format('SELECT * FROM {T} WHERE id %% 97 = %s', abs(x) % 97)); mode := 'seq'; want := '';
			WHEN 11 THEN q := 'SELECT count(*) || '':'' || coalesce(sum(id), 0) || '':'' || coalesce(sum(a), 0) || '':'' || coalesce(sum(length(pad)), 0) FROM {T}'; mode := 'seq'; want := '';
		END CASE;
		PERFORM set_config('enable_seqscan', (mode = 'seq')::text, true);
		PERFORM set_config('max_parallel_workers_per_gather', '0', true);
		PERFORM set_config('enable_indexscan', (mode = 'index' OR mode = 'ios')::text, true);
		PERFORM set_config('enable_indexonlyscan', (mode = 'ios')::text, true);
		PERFORM set_config('enable_bitmapscan', (mode = 'bitmap')::text, true);
		EXECUTE replace(q, '{T}', 't_heap') INTO rh;
		executed := executed + 1;
		IF rh !~ '^0:' AND rh <> '' THEN
			nonempty := nonempty + 1;
		END IF;
		FOREACH t IN ARRAY tables LOOP
			IF NOT checked[kind] THEN
				plan := '';
				FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || replace(q, '{T}', t) LOOP
					plan := plan || line || E'\n';
				END LOOP;
				IF (mode = 'seq' AND plan !~ 'Seq Scan on')
				   OR (mode <> 'seq' AND (plan !~ ('(Index Scan|Index Only Scan|Bitmap Index Scan)( Backward)? (using|on) ' || t || want)
										  OR plan ~ 'Seq Scan'))
				   OR (mode = 'ios' AND plan !~ 'Index Only Scan') THEN
					plan_misses := plan_misses + 1;
					details := details || format(E'kind %s: unexpected plan for %s\n%s', kind, replace(q, '{T}', t), plan);
				END IF;
			END IF;
			EXECUTE replace(q, '{T}', t) INTO rf;
			IF rf IS DISTINCT FROM rh THEN
				mismatches := mismatches + 1;
				IF mismatches <= 5 THEN
					details := details || format(E'kind %s mode %s: %s\n  %s: %s\n  heap: %s\n', kind, mode, q, t, rf, rh);
				END IF;
			END IF;
		END LOOP;
		checked[kind] := true;
	END LOOP;
END
$f$;

-- TID fetches and TID ranges of fractam table t against a sequential scan
-- of it with the same condition (TIDs are not heap's); returns mismatches
CREATE FUNCTION tdiff_tids(t text, nq int, qseed float8, OUT mismatches int, OUT nonempty int,
	OUT details text)
LANGUAGE plpgsql AS $f$
DECLARE
	q text; r1 text; r2 text; blocks int; x int; y int;
	agg constant text := 'SELECT count(*) || '':'' || coalesce(sum(id), 0) || '':'' || coalesce(md5(string_agg(ctid::text || ''='' || id, '','' ORDER BY ctid)), '''') FROM (%s OFFSET 0) s';
BEGIN
	PERFORM setseed(qseed);
	mismatches := 0; nonempty := 0; details := '';
	EXECUTE format('SELECT max((ctid::text::point)[0])::int + 1 FROM %I', t) INTO blocks;
	FOR i IN 1 .. nq LOOP
		x := floor(random() * (blocks + 2))::int;
		y := x + floor(random() * 4)::int;
		IF i % 2 = 0 THEN
			q := format(agg, format('SELECT ctid, id FROM %I WHERE ctid >= ''(%s,0)'' AND ctid < ''(%s,%s)''', t, x, y, 1 + floor(random() * 291)::int));
		ELSE
			q := format(agg, format('SELECT ctid, id FROM %I WHERE ctid = ANY (ARRAY[''(%s,%s)'', ''(%s,%s)'', ''(%s,1)'']::tid[])', t,
									x, 1 + floor(random() * 291)::int, y, 1 + floor(random() * 291)::int, x));
		END IF;
		PERFORM set_config('enable_seqscan', 'off', true);
		PERFORM set_config('enable_tidscan', 'on', true);
		EXECUTE q INTO r1;
		PERFORM set_config('enable_seqscan', 'on', true);
		PERFORM set_config('enable_tidscan', 'off', true);
		EXECUTE q INTO r2;
		IF r2 !~ '^0:' THEN
			nonempty := nonempty + 1;
		END IF;
		IF r1 IS DISTINCT FROM r2 THEN
			mismatches := mismatches + 1;
			IF mismatches <= 5 THEN
				details := details || format(E'%s\n  TID scan: %s\n  seq scan: %s\n', q, r1, r2);
			END IF;
		END IF;
	END LOOP;
END
$f$;
EOSQL

my @all = ('t_heap', @fractam);
sub each_table
{
	my ($sql) = @_;
	return join("\n", map { $sql =~ s/\{T\}/$_/gr } @all);
}

for my $round (1 .. $rounds)
{
	my $rseed = (($seed * 7919 + $round * 104729) % 1000003) / 1000003.0;
	my $out = $node->safe_psql('postgres', qq{
		SELECT setseed($rseed);
		CREATE TABLE batch AS
		SELECT nextval('ids') AS id,
		       CASE WHEN random() < 0.03 THEN NULL ELSE floor(random() * 100000)::int END AS a,
		       CASE WHEN random() < 0.02 THEN NULL ELSE left(md5(random()::text), 1 + floor(random() * 6)::int) END AS b,
		       CASE WHEN random() < 0.02 THEN NULL ELSE round((random() * 1000)::numeric, 1)::float8 END AS c,
		       repeat(md5(random()::text), floor(random() * 4)::int) || 'pad' AS pad
		FROM generate_series(1, $rows_per_round);
		-- now and then a row too wide for a leaf (TOASTed)
		INSERT INTO batch SELECT nextval('ids'), g, 'wide', g, repeat(md5(g::text || $round), 200)
		FROM generate_series(1, 5) g;
		@{[ each_table('INSERT INTO {T} SELECT * FROM batch;') ]}
		CREATE TABLE victims AS SELECT id FROM t_heap WHERE random() < 0.10;
		@{[ each_table('DELETE FROM {T} WHERE id IN (SELECT id FROM victims);') ]}
		CREATE TABLE movers AS
		SELECT id, CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 100000)::int END AS a,
		       left(md5(random()::text), 3) AS b, random() < 0.5 AS pad_only
		FROM t_heap WHERE random() < 0.05;
		@{[ each_table('UPDATE {T} t SET a = m.a, b = m.b FROM movers m WHERE t.id = m.id AND NOT m.pad_only;') ]}
		@{[ each_table(q{UPDATE {T} t SET pad = t.pad || 'u' FROM movers m WHERE t.id = m.id AND m.pad_only;}) ]}
		CREATE TABLE lockers AS SELECT id FROM t_heap WHERE random() < 0.03;
		SELECT setseed($rseed / 2);
		CREATE TABLE undone AS SELECT id FROM t_heap WHERE random() < 0.02;
		SELECT (SELECT count(*) FROM batch) || ' ' || (SELECT count(*) FROM victims) || ' ' || (SELECT count(*) FROM movers);
	});
	my ($ins, $del, $upd) = (split /\n/, $out)[-1] =~ /(\d+) (\d+) (\d+)/;
	# row locks (committed, so their lockers are gone), a rolled back
	# delete and a subtransaction's rolled back update
	$node->safe_psql('postgres', each_table(q{
		BEGIN;
		SELECT count(*) FROM (SELECT 1 FROM {T} WHERE id IN (SELECT id FROM lockers) FOR UPDATE) s;
		COMMIT;
		BEGIN;
		SELECT count(*) FROM (SELECT 1 FROM {T} WHERE id IN (SELECT id FROM lockers) FOR KEY SHARE) s;
		DELETE FROM {T} WHERE id IN (SELECT id FROM undone);
		ROLLBACK;
		BEGIN;
		UPDATE {T} SET c = -1 WHERE id IN (SELECT id FROM lockers);
		SAVEPOINT s;
		UPDATE {T} SET a = -a WHERE id IN (SELECT id FROM undone);
		ROLLBACK TO s;
		COMMIT;
	}));
	if ($round % 3 != 0)
	{
		$node->safe_psql('postgres', join(' ', map { "VACUUM $_;" } @all));
	}

	for my $t (@fractam)
	{
		my @bad;
		for my $rel ($t, "${t}_id", "${t}_a", "${t}_bc")
		{
			my ($ret, $o, $err) = $node->psql('postgres', "SELECT fractam_verify('$rel')");
			push @bad, "$rel: $err" if $ret != 0;
		}
		is(join("\n", @bad), '', "round $round: $t and its indexes verify");
	}
	is($node->safe_psql('postgres', 'SELECT ' . join(' || \' \' || ', map { "(SELECT count(*) FROM $_)" } @all)),
		join(' ', ($node->safe_psql('postgres', 'SELECT count(*) FROM t_heap')) x @all),
		"round $round: same number of rows");

	my $res = $node->safe_psql('postgres',
		"SELECT executed || '|' || mismatches || '|' || plan_misses || '|' || nonempty || '|' || details FROM tdiff_queries($queries_per_round, $rseed, ARRAY['t_none', 't_lz4', 't_zstd'])");
	my ($executed, $mismatches, $plan_misses, $nonempty, $details) = split /\|/, $res, 5;
	cmp_ok($nonempty, '>', $executed / 3, "round $round: most queries return rows ($nonempty of $executed)");
	is($mismatches, 0, "round $round: $executed random queries answer the same on heap and the fractam tables")
	  or diag($details);
	is($plan_misses, 0, "round $round: the queries use the intended scans")
	  or diag($details);
	for my $t (@fractam)
	{
		my $r = $node->safe_psql('postgres',
			"SELECT mismatches || '|' || nonempty || '|' || details FROM tdiff_tids('$t', 40, $rseed)");
		my ($m, $ne, $d) = split /\|/, $r, 3;
		cmp_ok($ne, '>', 10, "round $round: TID queries on $t return rows ($ne of 40)");
		is($m, 0, "round $round: TID fetches and TID ranges of $t agree with its sequential scan")
		  or diag($d);
	}
	$node->safe_psql('postgres', 'DROP TABLE batch, victims, movers, lockers, undone');
	note "round $round: +$ins rows, -$del rows, $upd updated";

	if ($round == 2)
	{
		# VACUUM has compressed t_lz4 and t_zstd (and not t_none): the later
		# rounds change compressed leaves
		for my $t (@fractam)
		{
			my $c = $node->safe_psql('postgres', "SELECT compressed_leaf_pages FROM fractam_stats('$t')");
			if ($t eq 't_none') { is($c, 0, "$t has no compressed leaves"); }
			else { cmp_ok($c, '>', 20, "VACUUM compressed $c leaves of $t"); }
		}
	}
}

# the compressed tables are smaller, and still compressed at the end
my $sizes = $node->safe_psql('postgres', q{
	SELECT (SELECT compressed_leaf_pages FROM fractam_stats('t_lz4')) > 20
	   AND (SELECT compressed_leaf_pages FROM fractam_stats('t_zstd')) > 20
	   AND pg_relation_size('t_zstd') < pg_relation_size('t_none')});
my $pages = $node->safe_psql('postgres', q{
	SELECT string_agg(format('%s: %s pages, %s leaves (%s compressed), %s free', t,
		pg_relation_size(t) / 8192, s.leaf_pages, s.compressed_leaf_pages, s.free_pages), '; ')
	FROM unnest(ARRAY['t_none', 't_lz4', 't_zstd']) t, fractam_stats(t::regclass) s});
note $pages;
is($sizes, 't', 'the compressed tables keep compressed leaves and are smaller')
  or diag($pages);
is(join("\n", ft_log_problems($node)), '', 'no PANIC or crash in the log');
$node->stop;
done_testing();

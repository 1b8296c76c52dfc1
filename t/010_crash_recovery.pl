# Crash recovery under concurrent load.
#
# Each round: four psql clients run transactions that insert (INSERT ...
# SELECT, and every third batch COPY FROM PROGRAM: multi_insert), delete and
# update rows of a heap table with fractam indexes (one of them UNIQUE, small
# fanouts, half the clients with direct apply off so messages sit in buffers),
# and one more client runs VACUUM and CHECKPOINT in a loop.  After a few
# seconds the postmaster and all of its children are killed with SIGKILL.
# A client prints "ACK n" after each COMMIT (or ROLLBACK) returned, so the
# transactions that were acknowledged are known.  After the restart:
#  - every row of an acknowledged commit is found through the fractam index,
#    and nothing of an acknowledged rollback or delete is;
#  - every fractam index returns exactly what a sequential scan returns;
#  - fractam_verify passes on every index;
#  - the unlogged table is empty (its init fork) and usable.
# Three rounds; rows of earlier rounds are checked again in later ones.
# FRACTAM_CRASH_TABLE_AM=fractam runs it all with fractam tables (then the
# table trees are verified too): t/011_table_crash_recovery.pl.
# FRACTAM_COMPRESSION=lz4|zstd creates every fractam index compressed
# (fractam.default_compression): t/012_compressed_crash_recovery.pl.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use IPC::Run;
use List::Util;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seed = $ENV{FRACTAM_TEST_SEED} // 20240611;
srand($seed);
diag("seed $seed (set FRACTAM_TEST_SEED to repeat another run)");

my $am = $ENV{FRACTAM_CRASH_TABLE_AM} // 'heap';
diag("tables USING $am");
my $compression = $ENV{FRACTAM_COMPRESSION} // 'none';
diag("index compression $compression");
# FRACTAM_TABLE_COMPRESSION=lz4|zstd: fractam tables WITH (compression),
# whose leaves VACUUM compresses
my ($using, $table_compression) = ft_table_using($am);
my $nclients = 4;
my $rounds = $ENV{FRACTAM_CRASH_ROUNDS} // 3;
my $batch = 200;

my $node = ft_node('crash');
$node->init;
$node->ft_configure(
	"max_wal_size = 256MB",
	"checkpoint_timeout = 30s",
	"autovacuum = off",
	"fractam.default_compression = '$compression'");
$node->start;

$node->safe_psql('postgres', qq{
	CREATE EXTENSION fractam;
	CREATE TABLE ct (id bigint, k int, t text, c int) USING $using;
	CREATE UNIQUE INDEX ct_id ON ct USING fractam (id) WITH (fanout = 8);
	CREATE INDEX ct_k ON ct USING fractam (k) WITH (fanout = 4);
	CREATE INDEX ct_t ON ct USING fractam (t) WITH (fanout = 3);
	CREATE INDEX ct_kt ON ct USING fractam (c, k DESC);
	CREATE UNLOGGED TABLE ul (id bigint, v int) USING $using;
	CREATE INDEX ul_id ON ul USING fractam (id) WITH (fanout = 4);
	CREATE TABLE acked (c int PRIMARY KEY, b int);
	CREATE TABLE hotc (c int, n int) USING $using;
	CREATE TABLE fq (id bigint, c int) USING $using;
	CREATE INDEX fq_id ON fq USING fractam (id);
	CREATE UNIQUE INDEX hotc_c ON hotc USING fractam (c);
});

my $tmp = PostgreSQL::Test::Utils::tempdir();

# the SQL script of client C (a global client number)
sub client_script
{
	my ($c, $direct_apply) = @_;
	my $s = "\\set ON_ERROR_STOP 1\n";
	$s .= "SET fractam.direct_apply = off;\n" unless $direct_apply;
	# a hot row per client, updated ten times per batch: full leaves of
	# dead versions, pruned (table_prune.c) while the crash comes
	$s .= "INSERT INTO hotc (c, n) VALUES ($c, 0);\n";
	for my $b (0 .. 4999)
	{
		my $base = $c * 10_000_000 + $b * 1000;
		$s .= "BEGIN;\n";
		if ($b % 3 == 1)
		{
			# COPY: multi_insert (k and t stay NULL)
			my $end = $base + $batch - 1;
			$s .= "COPY ct (id, c) FROM PROGRAM 'seq -f %.0f,$c $base $end' WITH (FORMAT csv);\n";
		}
		else
		{
			$s .= "INSERT INTO ct SELECT $base + j, ((${base}::bigint + j) * 7919) % 100003, md5(($base + j)::text), $c FROM generate_series(0, " . ($batch - 1) . ") j;\n";
		}
		if ($b >= 3)
		{
			my $b3 = $base - 3000;
			$s .= "DELETE FROM ct WHERE id BETWEEN $b3 AND $b3 + 999 AND id % 5 = 0;\n";
		}
		if ($b >= 2)
		{
			my $b2 = $base - 2000;
			$s .= "UPDATE ct SET k = k + 1, t = t || 'u' WHERE id BETWEEN $b2 AND $b2 + 999 AND id % 5 = 1;\n";
		}
		$s .= "UPDATE hotc SET n = n + 1 WHERE c = $c;\n" x 10;
		$s .= "INSERT INTO ul SELECT $base + j, j FROM generate_series(0, 49) j;\n";
		# a queue: whole batches appended and removed two batches later,
		# so VACUUM empties whole pseudo-blocks and their row ids are
		# reused while the crashes come
		$s .= "INSERT INTO fq SELECT $base + j, $c FROM generate_series(0, 299) j;\n";
		if ($b >= 2)
		{
			my $b2 = $base - 2000;
			$s .= "DELETE FROM fq WHERE id BETWEEN $b2 AND $b2 + 999;\n";
		}
		$s .= ($b % 10 == 9) ? "ROLLBACK;\n" : "COMMIT;\n";
		$s .= "\\echo ACK $b\n";
	}
	return $s;
}

my $maint = "\\set ON_ERROR_STOP 1\n";
for my $i (1 .. 2000)
{
	$maint .= "VACUUM fq;\nVACUUM ct;\nSELECT pg_sleep(0.2);\n";
	$maint .= "CHECKPOINT;\n" if $i % 5 == 0;
}
PostgreSQL::Test::Utils::append_to_file("$tmp/maint.sql", $maint);

my $psql = $node->installed_command('psql');
my %acked;    # global client number => last acknowledged batch
my $hot_versions = 0;    # hot-row updates acknowledged, all rounds
my $queue_reused = 0;    # queue rows below an earlier row, all rounds

for my $round (1 .. $rounds)
{
	my @h;
	my @clients;
	for my $i (1 .. $nclients)
	{
		my $c = $round * 10 + $i;
		push @clients, $c;
		PostgreSQL::Test::Utils::append_to_file("$tmp/c$c.sql", client_script($c, $i % 2));
		push @h, IPC::Run::start(
			[ $psql, '-X', '-q', '-d', $node->connstr('postgres'), '-f', "$tmp/c$c.sql" ],
			'<', \undef, '>', "$tmp/c$c.out", '2>', "$tmp/c$c.err",
			IPC::Run::timeout(300));
	}
	push @h, IPC::Run::start(
		[ $psql, '-X', '-q', '-d', $node->connstr('postgres'), '-f', "$tmp/maint.sql" ],
		'<', \undef, '>', "$tmp/maint$round.out", '2>', "$tmp/maint$round.err",
		IPC::Run::timeout(300));

	my $secs = 4 + int(rand(5));
	note "round $round: load for $secs s";
	sleep $secs;
	my $log_offset = -s $node->logfile;
	ft_crash($node);
	for my $h (@h)
	{
		eval { $h->finish; };
	}

	for my $c (@clients)
	{
		my $out = slurp_file("$tmp/c$c.out");
		my @acks = $out =~ /^ACK (\d+)$/mg;
		$acked{$c} = @acks ? $acks[-1] : -1;
		my $err = slurp_file("$tmp/c$c.err");
		# a client may only have failed because the server went away
		my @other = grep { !/server closed the connection|unexpected postmaster exit|connection to server|terminated abnormally|before or while processing|connection not open|no connection to the server|Failed\.|^\s*$|^psql:.*(FATAL|ERROR): +the database system is/ } split /\n/, $err;
		is(join("\n", @other), '', "round $round client $c: no error but the crash");
	}
	note "round $round acknowledged batches: "
	  . join(', ', map { "$_=$acked{$_}" } @clients);
	cmp_ok((grep { $acked{$_} >= 5 } @clients), '>=', 1,
		"round $round: clients got work done before the crash");

	$node->start;
	like(slurp_file($node->logfile, $log_offset), qr/redo starts at/, "round $round: crash recovery ran");
	my @problems = ft_log_problems($node, $log_offset);
	is(join("\n", @problems), '', "round $round: no PANIC, assertion failure or bad page in the log");

	# what must and must not be there
	$node->safe_psql('postgres', 'TRUNCATE acked; INSERT INTO acked VALUES '
		  . join(', ', map { "($_, $acked{$_})" } sort keys %acked));
	my $sets = q{
		CREATE TEMP TABLE must_present AS
		SELECT a.c::bigint * 10000000 + x * 1000 + j AS id
		FROM acked a, generate_series(0, a.b) x, generate_series(0, 199) j
		WHERE x % 10 <> 9
		  AND NOT (j % 5 = 0 AND x + 3 <= a.b + 1 AND (x + 3) % 10 <> 9);
		CREATE TEMP TABLE must_absent AS
		SELECT a.c::bigint * 10000000 + x * 1000 + j AS id
		FROM acked a, generate_series(0, a.b) x, generate_series(0, 199) j
		WHERE x % 10 = 9
		   OR (j % 5 = 0 AND x + 3 <= a.b AND (x + 3) % 10 <> 9);
		SET enable_seqscan = off; SET enable_hashjoin = off; SET enable_mergejoin = off;
		SET enable_bitmapscan = off; SET enable_material = off;
	};
	my $present_q = 'SELECT count(*) FROM must_present p WHERE NOT EXISTS (SELECT 1 FROM ct WHERE ct.id = p.id)';
	my $absent_q = 'SELECT count(*) FROM must_absent p WHERE EXISTS (SELECT 1 FROM ct WHERE ct.id = p.id)';
	my $plan = $node->safe_psql('postgres', "$sets EXPLAIN (COSTS OFF) $present_q");
	like($plan, qr/Index (Only )?Scan using ct_id on ct/, "round $round: committed rows are looked up through ct_id")
	  or diag($plan);
	my $out = $node->safe_psql('postgres', "$sets SELECT (SELECT count(*) FROM must_present), ($present_q), (SELECT count(*) FROM must_absent), ($absent_q)");
	my ($npresent, $missing, $nabsent, $extra) = split /\|/, $out;
	cmp_ok($npresent, '>', 0, "round $round: $npresent acknowledged rows to look for");
	is($missing, 0, "round $round: every acknowledged row is found through the index");
	is($extra, 0, "round $round: no row of an acknowledged rollback or delete ($nabsent checked) is found");
	# rows of batches never started must not exist
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM ct JOIN acked a ON a.c = ct.c WHERE (ct.id % 10000000) / 1000 > a.b + 1}),
		'0', "round $round: no rows of batches that never ran");

	# each hot row counts ten per committed batch (the last, unacknowledged
	# one may have committed too), through the index as through a scan
	for my $c (grep { $acked{$_} >= 0 } @clients)
	{
		my $committed = grep { $_ % 10 != 9 } 0 .. $acked{$c};
		my $maybe = (($acked{$c} + 1) % 10 != 9) ? $committed + 1 : $committed;
		my $seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT n FROM hotc WHERE c = $c");
		my $idx = $node->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT n FROM hotc WHERE c = $c");
		ok(($seq == 10 * $committed || $seq == 10 * $maybe) && $idx eq $seq,
			"round $round client $c: hot row counts its committed batches ($seq, index $idx, acked $acked{$c})");
	}

	# the queue: each batch's 300 rows are all there or none; a committed
	# batch's rows go when the batch two later commits; through a
	# sequential scan and through the index alike; every row its own ctid
	for my $c (grep { $acked{$_} >= 0 } @clients)
	{
		my $a = $acked{$c};
		my $q = "SELECT (id % 10000000) / 1000, count(*) FROM fq WHERE id BETWEEN $c * 10000000 AND $c * 10000000 + 9999999 GROUP BY 1 ORDER BY 1";
		my $seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
		my $idx = $node->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $q");
		is($idx, $seq, "round $round client $c: queue rows through the index as through a scan");
		my %have = map { split /\|/ } split /\n/, $seq;
		my @wrong;
		for my $x (0 .. $a + 3)
		{
			my $n = $have{$x} // 0;
			my $committed = ($x % 10 != 9);
			my $deleter = $x + 2;
			my $deleted_for_sure = $deleter <= $a && $deleter % 10 != 9;
			my $maybe_deleted = $deleter == $a + 1 && $deleter % 10 != 9;
			my @ok;
			if ($x > $a + 1 || !$committed) { @ok = (0); }
			elsif ($x == $a + 1) { @ok = (0, 300); }
			elsif ($deleted_for_sure) { @ok = (0); }
			elsif ($maybe_deleted) { @ok = (0, 300); }
			else { @ok = (300); }
			push @wrong, "batch $x: $n rows (expected " . join(' or ', @ok) . ")"
			  unless grep { $_ == $n } @ok;
		}
		is(join("; ", @wrong), '', "round $round client $c: queue batches all there or gone as committed");
	}
	is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT ctid) FROM fq'),
		't', "round $round: every queue row has its own ctid");

	# every index agrees with the heap
	for my $chk (['ct_id', 'id', '0'], ['ct_k', 'k', '0'], ['ct_t', 't', "''"], ['ct_kt', 'c', '0'])
	{
		my ($ok, $desc) = ft_index_matches_heap($node, 'postgres', 'ct', $chk->[0], $chk->[1], $chk->[2]);
		ok($ok, "round $round: $desc");
	}
	my @bad = ft_verify_all($node);
	is(join("\n", @bad), '', "round $round: fractam_verify passes on every index");
	if ($am eq 'fractam')
	{
		is($node->safe_psql('postgres', "SELECT fractam_verify('ct'), fractam_verify('ul'), fractam_verify('hotc'), fractam_verify('fq')"),
			'|||', "round $round: fractam_verify passes on the tables");
		# row ids VACUUM gave back were reused: some client's later rows
		# sit below its earlier ones (a client's ranges from the counter
		# only ascend)
		$queue_reused += $node->safe_psql('postgres', q{
			SELECT count(*) FROM (SELECT ctid < lag(ctid) OVER (PARTITION BY c ORDER BY id) AS below FROM fq) s WHERE below});
		# full leaves were pruned: without it every version stays an item
		# (nothing vacuums hotc); pruned ones share dead-set items
		my $hot_items = $node->safe_psql('postgres', "SELECT leaf_items FROM fractam_stats('hotc')");
		$hot_versions += 10 * List::Util::sum(map { $acked{$_} + 1 } @clients);
		cmp_ok($hot_items, '<', 0.9 * $hot_versions,
			"round $round: hot table holds $hot_items items after at least $hot_versions updates (pruned)");
	}

	# the unlogged table was reset to empty and works
	is($node->safe_psql('postgres', 'SELECT count(*) FROM ul'), '0', "round $round: unlogged table is empty after the crash");
	$node->safe_psql('postgres', 'INSERT INTO ul SELECT i, i FROM generate_series(1, 3000) i');
	my ($ok, $desc) = ft_index_matches_heap($node, 'postgres', 'ul', 'ul_id', 'id', '0');
	ok($ok, "round $round: unlogged $desc");
	$node->safe_psql('postgres', 'TRUNCATE ul');
}

cmp_ok($queue_reused, '>', 0, "queue rows took row ids VACUUM gave back ($queue_reused)")
  if $am eq 'fractam';

# compressed runs: the tables and indexes really hold compressed leaves
if ($table_compression ne 'none')
{
	my $n = ft_compressed_leaves($node, 'r');
	cmp_ok($n, '>', 0, "tables $table_compression: $n compressed leaves");
}
if ($compression ne 'none')
{
	my $n = ft_compressed_leaves($node, 'i');
	cmp_ok($n, '>', 0, "$compression: $n compressed leaves");
}

$node->stop;
done_testing();

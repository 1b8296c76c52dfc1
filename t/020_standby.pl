# Streaming replication and hot standby.
#
# The primary runs with wal_consistency_checking = 'fractam': every fractam
# WAL record carries full images of its pages, and the standby's startup
# process compares each page it redoes with that image (after rm_mask).  A
# difference is FATAL ("inconsistent page found") and takes the standby down.
#
# While the primary runs inserts, deletes, updates, VACUUM, CREATE INDEX
# CONCURRENTLY, REINDEX CONCURRENTLY and TRUNCATE, queries on the standby
# (hot standby, during replay) must see, within one snapshot, the same rows
# through the fractam index as through a sequential scan.  After catch-up the
# standby must answer every query like the primary, through the fractam
# indexes, and verify; finally it is promoted and takes writes.
# FRACTAM_STANDBY_TABLE_AM=fractam runs it all with fractam tables:
# t/021_table_standby.pl.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $am = $ENV{FRACTAM_STANDBY_TABLE_AM} // 'heap';
diag("tables USING $am");
# FRACTAM_COMPRESSION=lz4|zstd: every fractam index compressed
# (t/022_compressed_standby.pl)
my $compression = $ENV{FRACTAM_COMPRESSION} // 'none';
diag("index compression $compression");
# FRACTAM_TABLE_COMPRESSION=lz4|zstd: fractam tables WITH (compression),
# whose leaves VACUUM compresses
my ($using, $table_compression) = ft_table_using($am);
my $seed = $ENV{FRACTAM_TEST_SEED} // 20240612;
srand($seed);
diag("seed $seed");

my $primary = ft_node('primary');
$primary->init(allows_streaming => 1);
$primary->ft_configure(
	"wal_consistency_checking = 'fractam'",
	"max_wal_size = 512MB",
	"wal_keep_size = 2GB",
	"autovacuum_naptime = 2s",
	"fractam.default_compression = '$compression'");
$primary->start;

# created before the base backup: the standby gets these pages by copy
$primary->safe_psql('postgres', qq{
	CREATE EXTENSION fractam;
	CREATE TABLE st (id bigint, k int, t text) USING $using;
	CREATE UNIQUE INDEX st_id ON st USING fractam (id) WITH (fanout = 8);
	CREATE INDEX st_k ON st USING fractam (k) WITH (fanout = 4);
	INSERT INTO st SELECT i, (i * 7919) % 100003, md5(i::text) FROM generate_series(1, 20000) i;
});
$primary->backup('b1');

my $standby = ft_node('standby');
$standby->init_from_backup($primary, 'b1', has_streaming => 1);
$standby->ft_configure(
	"hot_standby = on",
	"max_standby_streaming_delay = -1",
	"hot_standby_feedback = off");
$standby->start;

# created after: the standby builds these by replaying WAL
$primary->safe_psql('postgres', qq{
	CREATE INDEX st_t ON st USING fractam (t) WITH (fanout = 3);
	CREATE TABLE st2 (id int, v text) USING $using;
	INSERT INTO st2 SELECT i, 'v' || i FROM generate_series(1, 5000) i;
	CREATE INDEX st2_v ON st2 USING fractam (v);
	CREATE INDEX st2_id ON st2 USING fractam (id DESC) INCLUDE (v);
});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
ok(defined ft_plan_uses($standby, 'postgres', 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
		'SELECT id FROM st WHERE t > \'f\'', 'st_t'),
	'a replayed index build is used on the standby');

my $tmp = PostgreSQL::Test::Utils::tempdir();
my $psql = $primary->installed_command('psql');

# run psql -f NAME.sql on the primary; NAME.exit appears when it has ended
sub start_client
{
	my ($name) = @_;
	return IPC::Run::start(
		[ 'bash', '-c', "'$psql' -X -q -d \"\$1\" -f '$tmp/$name.sql' >'$tmp/$name.out' 2>'$tmp/$name.err'; echo \$? >'$tmp/$name.exit'",
		  'client', $primary->connstr('postgres') ],
		'<', \undef, IPC::Run::timeout(400));
}

# writers: inserts, deletes, updates in batches
my @h;
for my $c (1 .. 2)
{
	my $s = "\\set ON_ERROR_STOP 1\n";
	$s .= "SET fractam.direct_apply = off;\n" if $c == 2;
	for my $b (0 .. 149)
	{
		my $base = 1_000_000 * $c + $b * 1000;
		$s .= "BEGIN;\n";
		$s .= "INSERT INTO st SELECT $base + j, ((${base}::bigint + j) * 7919) % 100003, md5(($base + j)::text) FROM generate_series(0, 299) j;\n";
		$s .= "DELETE FROM st WHERE id BETWEEN $base - 2000 AND $base - 1001 AND id % 4 = 0;\n" if $b >= 2;
		$s .= "UPDATE st SET k = k + 7, t = t || 'x' WHERE id BETWEEN $base - 1000 AND $base - 1 AND id % 4 = 1;\n" if $b >= 1;
		$s .= ($b % 7 == 6) ? "ROLLBACK;\n" : "COMMIT;\n";
		$s .= "VACUUM st;\n" if $b % 40 == 39;
	}
	$s .= "\\echo DONE\n";
	PostgreSQL::Test::Utils::append_to_file("$tmp/w$c.sql", $s);
	push @h, start_client("w$c");
}
# DDL alongside
my $ddl = q{\set ON_ERROR_STOP 1
SELECT pg_sleep(1);
CREATE INDEX CONCURRENTLY st_kt ON st USING fractam (k, t) WITH (fanout = 4);
SELECT pg_sleep(1);
REINDEX INDEX CONCURRENTLY st_k;
TRUNCATE st2;
INSERT INTO st2 SELECT i, 'w' || i FROM generate_series(1, 8000) i;
REINDEX TABLE st2;
DELETE FROM st2 WHERE id % 3 = 0;
VACUUM st2;
DROP INDEX st2_v;
CREATE INDEX st2_v ON st2 USING fractam (v) WITH (fanout = 2, fillfactor = 50);
INSERT INTO st2 SELECT i, 'z' || i FROM generate_series(8001, 12000) i;
COPY st2 (id, v) FROM PROGRAM 'seq -f %.0f,copy-abcdefghijklmnopqrstuvwxyz0123456789 12001 40000' WITH (FORMAT csv);
\echo DONE
};
PostgreSQL::Test::Utils::append_to_file("$tmp/ddl.sql", $ddl);
push @h, start_client('ddl');

# hot standby reads during replay: one snapshot, index vs heap
my $force_index = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;';
my $force_seq = 'SET enable_seqscan = on; SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;';
my ($iterations, $mismatches, $errors) = (0, 0, 0);
my $done = sub {
	for my $f ('w1', 'w2', 'ddl')
	{
		return 0 unless -e "$tmp/$f.exit";
	}
	return 1;
};
my $deadline = time + 400;
while (!$done->() && time < $deadline)
{
	my $lo = int(rand(100000));
	my $hi = $lo + 2000;
	my $q1 = "SELECT count(*) || ':' || coalesce(sum(id), 0) FROM st WHERE k BETWEEN $lo AND $hi";
	my $q2 = "SELECT coalesce(string_agg(k::text, ',' ORDER BY n), '') FROM (SELECT k, row_number() OVER () n FROM (SELECT k FROM st WHERE k > $lo ORDER BY k LIMIT 50) s) s2";
	my $q3 = "SELECT count(*) || ':' || coalesce(sum(id), 0) FROM st WHERE id BETWEEN $lo * 20 AND $lo * 20 + 5000";
	my ($ret, $out, $err) = $standby->psql('postgres', qq{
		BEGIN ISOLATION LEVEL REPEATABLE READ;
		$force_index
		SELECT 'i1 ' || ($q1); SELECT 'i2 ' || ($q2); SELECT 'i3 ' || ($q3);
		$force_seq
		SELECT 's1 ' || ($q1); SELECT 's2 ' || ($q2); SELECT 's3 ' || ($q3);
		COMMIT;}, timeout => 120);
	$iterations++;
	if ($ret != 0)
	{
		$errors++;
		diag("standby query failed: $err") if $errors <= 5;
		next;
	}
	for my $n (1 .. 3)
	{
		my ($i) = $out =~ /^i$n (.*)$/m;
		my ($s) = $out =~ /^s$n (.*)$/m;
		if (!defined $i || !defined $s || $i ne $s)
		{
			$mismatches++;
			diag("hot standby mismatch q$n [$lo]: index " . ($i // '?') . " heap " . ($s // '?'))
			  if $mismatches <= 5;
		}
	}
}
for my $h (@h)
{
	eval { $h->finish; };
}
for my $f ("w1", "w2", "ddl")
{
	like(slurp_file("$tmp/$f.out"), qr/DONE/, "primary client $f completed");
	is(slurp_file("$tmp/$f.err"), '', "primary client $f: no errors");
}
cmp_ok($iterations, '>=', 5, "hot standby queries ran during replay ($iterations)");
is($errors, 0, 'no hot standby query failed');
is($mismatches, 0, 'hot standby: index scans and heap scans agree within a snapshot');
ok(defined ft_plan_uses($standby, 'postgres', $force_index,
		'SELECT count(*) FROM st WHERE k BETWEEN 1 AND 2', 'st_k'),
	'hot standby queries went through the fractam index');

# catch up, then the standby must answer like the primary
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'standby alive and in recovery');
is(join("\n", ft_log_problems($standby)), '', 'standby log: no inconsistent page, PANIC or crash');
is(join("\n", ft_log_problems($primary)), '', 'primary log: no PANIC or crash');

for my $chk (['st', 'st_id', 'id', '0'], ['st', 'st_k', 'k', '0'], ['st', 'st_t', 't', "''"],
	['st2', 'st2_v', 'v', "''"], ['st2', 'st2_id', 'id', '0'], ['drop st_k'], ['st', 'st_kt', 'k', '0'])
{
	my ($table, $index, $col, $lo) = @$chk;
	if ($table eq 'drop st_k')
	{
		# so that the planner has to use st_kt for k
		$primary->safe_psql('postgres', 'DROP INDEX st_k');
		$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
		next;
	}
	my ($okp, $descp) = ft_index_matches_heap($primary, 'postgres', $table, $index, $col, $lo);
	my ($oks, $descs) = ft_index_matches_heap($standby, 'postgres', $table, $index, $col, $lo);
	ok($okp, "primary: $descp");
	ok($oks, "standby: $descs");
	my ($dp) = $descp =~ /index \[(.*?)\]/;
	my ($ds) = $descs =~ /index \[(.*?)\]/;
	is($ds, $dp, "$index: the standby returns what the primary returns");
}
my @qs = (
	'SELECT k FROM st WHERE k BETWEEN 500 AND 900 ORDER BY k',
	'SELECT k FROM st ORDER BY k DESC LIMIT 500',
	'SELECT id FROM st WHERE id > 1100000 ORDER BY id LIMIT 300',
	'SELECT t FROM st WHERE t < \'1\' ORDER BY t DESC',
	'SELECT id, v FROM st2 WHERE id < 300 ORDER BY id DESC',
	'SELECT id, v FROM st2 WHERE id > 39000 ORDER BY id DESC');
for my $q (@qs)
{
	is($standby->safe_psql('postgres', "$force_index $q"),
		$primary->safe_psql('postgres', "$force_index $q"), "standby = primary: $q");
}
my @bad = ft_verify_all($standby);
is(join("\n", @bad), '', 'fractam_verify passes on the standby');
@bad = ft_verify_all($primary);
is(join("\n", @bad), '', 'fractam_verify passes on the primary');
if ($am eq 'fractam')
{
	for my $n ($standby, $primary)
	{
		is($n->safe_psql('postgres', "SELECT fractam_verify('st'), fractam_verify('st2')"),
			'|', $n->name . ': fractam_verify passes on the tables');
	}
}

# promotion: the standby becomes a primary and takes writes
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion timed out';
$standby->safe_psql('postgres', q{
	SET fractam.direct_apply = off;
	INSERT INTO st SELECT 5000000 + i, i % 1000, md5(i::text) FROM generate_series(1, 20000) i;
	DELETE FROM st WHERE id % 11 = 0;
	VACUUM st;
});
for my $chk (['st_id', 'id', '0'], ['st_kt', 'k', '0'], ['st_t', 't', "''"])
{
	my ($ok, $desc) = ft_index_matches_heap($standby, 'postgres', 'st', @$chk);
	ok($ok, "promoted: $desc");
}
@bad = ft_verify_all($standby);
is(join("\n", @bad), '', 'fractam_verify passes on the promoted standby');
is(join("\n", ft_log_problems($standby)), '', 'promoted standby log: no PANIC or crash');

# compressed runs: the tables and indexes really hold compressed leaves
if ($table_compression ne 'none')
{
	my $n = ft_compressed_leaves($standby, 'r');
	cmp_ok($n, '>', 0, "tables $table_compression: $n compressed leaves");
}
if ($compression ne 'none')
{
	my $n = ft_compressed_leaves($standby, 'i');
	cmp_ok($n, '>', 0, "$compression: $n compressed leaves");
}

$standby->stop;
$primary->stop;
done_testing();

# Crash recovery with wal_consistency_checking = 'fractam'.
#
# With the setting on, every fractam WAL record carries full images of the
# pages it touches; during crash recovery the startup process redoes the
# record and compares the result with the image (after rm_mask).  A difference
# is FATAL "inconsistent page found" and the server does not start.  The
# workload after the last checkpoint covers the tree's operations: inserts
# with direct apply and buffered, flushes, leaf and buffer-node splits, new
# roots (fanout 2), ascending and descending runs, duplicates, unique checks,
# deletes, VACUUM, index builds, REINDEX, CREATE INDEX CONCURRENTLY, TRUNCATE,
# unlogged and multi-column indexes, and two concurrent writers that are
# killed mid-transaction.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('wcc');
$node->init;
$node->ft_configure(
	"wal_consistency_checking = 'fractam'",
	"autovacuum = off",
	"max_wal_size = 8GB",
	"checkpoint_timeout = 1h");
$node->start;
is($node->safe_psql('postgres', 'SHOW wal_consistency_checking'), 'fractam', 'consistency checking on');

$node->safe_psql('postgres', q{
	CREATE EXTENSION fractam;
	CREATE TABLE w (id int, k int, t text);
	CREATE INDEX w_k ON w USING fractam (k) WITH (fanout = 2);
	CREATE UNIQUE INDEX w_id ON w USING fractam (id) WITH (fanout = 4);
	CREATE TABLE w2 (id int, a int, b text);
	INSERT INTO w2 SELECT i, i % 100, md5(i::text) FROM generate_series(1, 20000) i;
	CREATE UNLOGGED TABLE wu (id int, k int);
	CREATE INDEX wu_k ON wu USING fractam (k) WITH (fanout = 4);
	CHECKPOINT;
});
my $redo_lsn = $node->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()');

# everything below is redone, and checked, by crash recovery
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	SET fractam.direct_apply = off;
	-- buffered random inserts: flushes, splits, new roots
	INSERT INTO w SELECT i, (i * 7919) % 30011, md5(i::text) FROM generate_series(1, 15000) i;
	-- direct apply
	SET fractam.direct_apply = on;
	INSERT INTO w SELECT i, (i * 7919) % 30011, md5(i::text) FROM generate_series(15001, 20000) i;
	SET fractam.direct_apply = off;
	-- ascending and descending runs, duplicates
	INSERT INTO w SELECT 100000 + i, 100000 + i, 'asc' FROM generate_series(1, 5000) i;
	INSERT INTO w SELECT 200000 + i, -i, 'desc' FROM generate_series(1, 5000) i;
	INSERT INTO w SELECT 300000 + i, 77, 'dup' FROM generate_series(1, 5000) i;
	-- deletes and updates, then VACUUM
	DELETE FROM w WHERE id % 3 = 0;
	UPDATE w SET k = k + 1 WHERE id % 5 = 1;
	VACUUM w;
	-- unique violations leave aborted entries behind
	DO $$
	BEGIN
		FOR i IN 1 .. 200 LOOP
			BEGIN
				INSERT INTO w VALUES (i * 7 + 1, 0, 'dup');
			EXCEPTION WHEN unique_violation THEN NULL;
			END;
		END LOOP;
	END $$;
	-- builds over existing rows, REINDEX, TRUNCATE
	CREATE INDEX w2_a ON w2 USING fractam (a, b DESC) WITH (fanout = 4, fillfactor = 60);
	CREATE INDEX w2_b ON w2 USING fractam (b) INCLUDE (id);
	INSERT INTO w2 SELECT i, i % 100, md5(i::text) FROM generate_series(20001, 30000) i;
	REINDEX INDEX w2_b;
	DELETE FROM w2 WHERE a < 10;
	VACUUM w2;
	TRUNCATE w2;
	INSERT INTO w2 SELECT i, i % 50, md5(i::text) FROM generate_series(1, 8000) i;
	-- unlogged
	INSERT INTO wu SELECT i, i % 1000 FROM generate_series(1, 10000) i;
});
$node->safe_psql('postgres', 'CREATE INDEX CONCURRENTLY w_t ON w USING fractam (t) WITH (fanout = 3)');
$node->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY w_k');

# two concurrent writers, killed mid-transaction by the crash
my $tmp = PostgreSQL::Test::Utils::tempdir();
my $psql = $node->installed_command('psql');
my @h;
for my $c (1 .. 2)
{
	my $s = "\\set ON_ERROR_STOP 1\n";
	$s .= "SET fractam.direct_apply = off;\n" if $c == 1;
	for my $b (0 .. 999)
	{
		my $base = 1_000_000 * $c + $b * 100;
		$s .= "BEGIN;\nINSERT INTO w SELECT $base + j, ($base + j) % 30011, 'c$c' FROM generate_series(0, 99) j;\n";
		$s .= "DELETE FROM w WHERE id BETWEEN $base - 300 AND $base - 200 AND id % 2 = 0;\n" if $b >= 3;
		$s .= "COMMIT;\n";
	}
	PostgreSQL::Test::Utils::append_to_file("$tmp/c$c.sql", $s);
	push @h, IPC::Run::start(
		[ $psql, '-X', '-q', '-d', $node->connstr('postgres'), '-f', "$tmp/c$c.sql" ],
		'<', \undef, '>', "$tmp/c$c.out", '2>', "$tmp/c$c.err", IPC::Run::timeout(300));
}
sleep 4;
# the write position: WAL up to here is in the files (the insert position may
# already be in a segment the WAL writer has not created yet on a slow disk)
my $end_lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
ft_crash($node);
eval { $_->finish } for @h;

# the WAL to be replayed (from the last checkpoint's redo point) holds
# fractam records with page images
my ($stdout, $stderr);
IPC::Run::run([ $node->installed_command('pg_controldata'), $node->data_dir ], '>', \$stdout, '2>', \$stderr);
($redo_lsn) = $stdout =~ /^Latest checkpoint's REDO location:\s*(\S+)/m;
note "crash recovery starts at $redo_lsn";
my $waldump = $node->installed_command('pg_waldump');
IPC::Run::run([ $waldump, '--stats=rmgr', '-p', $node->data_dir . '/pg_wal',
		'-s', $redo_lsn, '-e', $end_lsn ], '>', \$stdout, '2>', \$stderr);
my ($rec, $fpi_bytes) = (0, 0);
for my $line (split /\n/, $stdout)
{
	# "Type  N (%)  Record size (%)  FPI size (%)  Combined size (%)";
	# custom resource managers are shown by number: "custom###"
	if ($line =~ /^\s*custom\d+\s+(\d+)\s+\([^)]*\)\s+\d+\s+\([^)]*\)\s+(\d+)/)
	{
		$rec += $1;
		$fpi_bytes += $2;
	}
}
note "fractam WAL records to replay: $rec, with $fpi_bytes bytes of page images";
cmp_ok($rec, '>', 1000, "there are fractam WAL records to replay ($rec)")
  or diag($stdout . $stderr);
cmp_ok($fpi_bytes, '>', 100 * $rec, 'they carry page images for the check');

ok($node->start(fail_ok => 1), 'crash recovery (with every fractam record checked) succeeded');
my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/redo starts at/, 'crash recovery ran');
unlike($log, qr/inconsistent page found/, 'no inconsistent page after redo');
is(join("\n", ft_log_problems($node, $log_offset)), '', 'no PANIC, assertion failure or bad page in the log');
if ($log =~ /(.*inconsistent page found.*\n(?:.*\n){0,3})/)
{
	diag("first inconsistency:\n$1");
}

SKIP:
{
	skip 'server did not start', 10 unless $node->safe_psql('postgres', 'SELECT 1') eq '1';
	for my $chk (['w', 'w_k', 'k', '-100000'], ['w', 'w_id', 'id', '0'], ['w', 'w_t', 't', "''"],
		['w2', 'w2_a', 'a', '0'], ['w2', 'w2_b', 'b', "''"])
	{
		my ($ok, $desc) = ft_index_matches_heap($node, 'postgres', @$chk);
		ok($ok, $desc);
	}
	my @bad = ft_verify_all($node);
	is(join("\n", @bad), '', 'fractam_verify passes on every index');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM wu'), '0', 'unlogged table reset to empty');
	$node->safe_psql('postgres', 'INSERT INTO wu SELECT i, i FROM generate_series(1, 5000) i');
	my ($ok, $desc) = ft_index_matches_heap($node, 'postgres', 'wu', 'wu_k', 'k', '0');
	ok($ok, "unlogged after crash: $desc");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM w WHERE id BETWEEN 1 AND 100'), '72',
		'committed rows of the scripted phase are all there');
}

$node->stop;
done_testing();

# VACUUM FULL and CLUSTER of fractam tables, compressed and not, survive a
# crash and reach a standby.
#
# The rewrite loads the table's new file bottom-up (ft_build.c), each page
# logged as a whole image; a compressed table's new leaves are all
# compressed but the last (the append point).  The primary (wal_consistency_checking = 'fractam', so the
# standby compares every replayed page) rewrites the tables, takes more
# rows, updates and deletes some, and is killed (kill -9) before any
# checkpoint: recovery must rebuild the new files from WAL alone.  Then
# every table holds what its heap copy holds, through sequential scans and
# its indexes, every tree verifies, and the standby answers the same.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = ft_node('primary');
$primary->init(allows_streaming => 1);
$primary->ft_configure(
	"wal_consistency_checking = 'fractam'",
	"autovacuum = off",
	"checkpoint_timeout = 1h",
	"max_wal_size = 4GB");
$primary->start;
# (every fractam record carries page images: the slot keeps the WAL)
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('rw')");
$primary->backup('b1');
my $standby = ft_node('standby');
$standby->init_from_backup($primary, 'b1', has_streaming => 1);
$standby->ft_configure("hot_standby = on", "primary_slot_name = 'rw'");
$standby->start;

my @tables = qw(rw_none rw_lz4 rw_zstd);
my %with = (rw_none => '', rw_lz4 => "WITH (compression = 'lz4')",
	rw_zstd => "WITH (compression = 'zstd')");
my $sql = "CREATE EXTENSION fractam;\n";
for my $t (@tables)
{
	$sql .= qq{
	CREATE TABLE $t (id int, k int, t text) USING fractam $with{$t};
	CREATE TABLE ${t}_copy (id int, k int, t text);
	CREATE INDEX ${t}_id ON $t USING fractam (id);
	CREATE INDEX ${t}_k ON $t (k);
	};
}
$primary->safe_psql('postgres', $sql);

# the same statements on each table and its heap copy
sub both
{
	my ($stmt) = @_;
	return join("\n", map { my $t = $_; map { $stmt =~ s/\{T\}/$_/gr } ($t, "${t}_copy") } @tables);
}

$primary->safe_psql('postgres', both(q{
	INSERT INTO {T} SELECT g, g % 311, 'row ' || g || repeat('y', g % 60) FROM generate_series(1, 20000) g;
	INSERT INTO {T} VALUES (0, 0, repeat('toast me ', 4000));
	DELETE FROM {T} WHERE id % 3 = 0;
	UPDATE {T} SET t = t || '!' WHERE id % 7 = 1;
}));
$primary->safe_psql('postgres', 'CHECKPOINT');

# the rewrites, then more changes, and a crash before any checkpoint
$primary->safe_psql('postgres', join("\n",
		(map { "VACUUM FULL $_;" } @tables),
		"CLUSTER rw_zstd USING rw_zstd_k;",
		"CLUSTER rw_none USING rw_none_k;"));
for my $t ('rw_lz4', 'rw_zstd')
{
	my ($c, $l) = split /\|/, $primary->safe_psql('postgres',
		"SELECT compressed_leaf_pages, leaf_pages FROM fractam_stats('$t')");
	cmp_ok($c, '>', 10, "$t: the rewrite wrote compressed leaves ($c)");
	is($c, $l - 1, "$t: the rewrite wrote every leaf compressed but the append point");
}
$primary->safe_psql('postgres', both(q{
	INSERT INTO {T} SELECT g, g % 311, 'new ' || g FROM generate_series(50001, 53000) g;
	UPDATE {T} SET k = k + 1000 WHERE id % 11 = 2;
	DELETE FROM {T} WHERE id % 13 = 5;
}));
my $lsn = $primary->lsn('insert');
$primary->wait_for_catchup($standby, 'replay', $lsn);
ft_crash($primary);
$primary->start;

sub same_rows
{
	my ($node, $t, $settings) = @_;
	return $node->safe_psql('postgres', qq{
		$settings
		SELECT count(*) FROM ((SELECT * FROM $t EXCEPT ALL SELECT * FROM ${t}_copy)
		                      UNION ALL
		                      (SELECT * FROM ${t}_copy EXCEPT ALL SELECT * FROM $t)) d});
}

# a query on the table (under settings) and on its heap copy
sub same_answer
{
	my ($node, $t, $settings, $what, $cond, $desc) = @_;
	is($node->safe_psql('postgres', "$settings SELECT $what FROM $t WHERE $cond"),
		$node->safe_psql('postgres', "SELECT $what FROM ${t}_copy WHERE $cond"), $desc);
}

for my $node ($primary, $standby)
{
	my $who = $node->name;
	for my $t (@tables)
	{
		is(same_rows($node, $t, ''), 0, "$who: $t holds what its heap copy holds");
		same_answer($node, $t, 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
			'count(*), sum(k)', 'id BETWEEN 1000 AND 15000', "$who: $t answers the same through its fractam index");
		same_answer($node, $t, 'SET enable_seqscan = off; SET enable_indexscan = off;',
			'count(*), sum(id)', 'k BETWEEN 1000 AND 1100',
			"$who: $t answers the same through a bitmap scan of its btree index");
		for my $rel ($t, "${t}_id")
		{
			my ($ret, $out, $err) = $node->psql('postgres', "SELECT fractam_verify('$rel')");
			is($ret, 0, "$who: $rel verifies") or diag($err);
		}
	}
}

# the recovered primary takes writes again, and the standby follows
$primary->safe_psql('postgres', both(q{
	INSERT INTO {T} SELECT g, g % 311, 'after ' || g FROM generate_series(60001, 61000) g;
	VACUUM {T};
}));
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
for my $t (@tables)
{
	is(same_rows($standby, $t, ''), 0, "standby after more writes: $t holds what its copy holds");
}
is(join("\n", ft_log_problems($primary)), '', 'primary log: no PANIC or crash but ours');
is(join("\n", ft_log_problems($standby)), '', 'standby log: no PANIC, no inconsistent page');
$standby->stop;
$primary->stop;
done_testing();

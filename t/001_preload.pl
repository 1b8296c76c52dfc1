# fractam refuses to load unless it is in shared_preload_libraries (its WAL
# resource manager must exist before recovery), and says so clearly; once
# preloaded, its resource manager is registered and can be checked by
# wal_consistency_checking.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('nopreload');
$node->init;
$node->append_conf('postgresql.conf', "lc_messages = 'C'\n");
$node->start;

my ($ret, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION fractam');
isnt($ret, 0, 'CREATE EXTENSION fails without shared_preload_libraries');
like($err, qr/shared_preload_libraries/, 'the error names shared_preload_libraries');
unlike($err, qr/server closed the connection|terminated/i, 'no backend crash');
($ret, $out, $err) = $node->psql('postgres', "LOAD 'fractam'");
isnt($ret, 0, 'LOAD fails without shared_preload_libraries');
like($err, qr/shared_preload_libraries/, 'LOAD error names shared_preload_libraries');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_am WHERE amname LIKE 'fractam%'"),
	'0', 'no access method was left behind');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server still up');
$node->stop;

# wal_consistency_checking cannot name the resource manager unless preloaded
$node->append_conf('postgresql.conf', "wal_consistency_checking = 'fractam'\n");
ok(!$node->start(fail_ok => 1), 'wal_consistency_checking = fractam is rejected without preload');

# preloaded
$node->ft_configure;
$node->start;
like(slurp_file($node->logfile), qr/registered custom resource manager "fractam" with ID \d+/,
	'the resource manager registers at startup');
is($node->safe_psql('postgres',
		"SELECT rm_name || ' ' || rm_builtin FROM pg_get_wal_resource_managers() WHERE rm_name = 'fractam'"),
	'fractam false', 'pg_get_wal_resource_managers lists fractam');
is($node->safe_psql('postgres', 'SHOW wal_consistency_checking'), 'fractam',
	'wal_consistency_checking = fractam accepted');
$node->safe_psql('postgres', 'CREATE EXTENSION fractam');
$node->safe_psql('postgres', q{
	CREATE TABLE t (a int);
	CREATE INDEX t_a ON t USING fractam (a);
	INSERT INTO t SELECT generate_series(1, 1000);
});
is($node->safe_psql('postgres',
		'SET enable_seqscan = off; SELECT count(*) FROM t WHERE a BETWEEN 10 AND 19'),
	'10', 'index works when preloaded');
ok(defined ft_plan_uses($node, 'postgres', 'SET enable_seqscan = off;',
		'SELECT * FROM t WHERE a = 5', 't_a'), 'the plan uses the fractam index');

# the extension cannot be dropped from under a restart: after restarting
# without preload, the server refuses to use fractam indexes cleanly
$node->stop;
$node->adjust_conf('postgresql.conf', 'wal_consistency_checking', "''");
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE a = 5');
isnt($ret, 0, 'using a fractam index without preload fails');
like($err, qr/shared_preload_libraries/, '... with a clear error');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server still up');
$node->stop;

done_testing();

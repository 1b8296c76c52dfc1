# Autovacuum of a fractam table works from the DML statistics and logs
# under log_autovacuum_min_duration as heap's does ("automatic vacuum of
# table ..."): a DBA watching the log must see fractam tables vacuumed
# (in session 13's FIFO benchmark the server log showed six automatic
# vacuums of the heap table and none of the fractam one, which was being
# vacuumed silently).  A table with autovacuum off gets no such line.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = ft_node('avlog');
$node->init;
$node->ft_configure(
	'autovacuum = on',
	'autovacuum_naptime = 1',
	'log_autovacuum_min_duration = 0',
	'autovacuum_vacuum_threshold = 100',
	'autovacuum_vacuum_scale_factor = 0',
	'autovacuum_analyze_threshold = 100',
	'autovacuum_analyze_scale_factor = 0');
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION fractam;
	CREATE TABLE av (id int, v text) USING fractam;
	CREATE INDEX av_id ON av USING fractam (id);
	CREATE TABLE av_off (id int, v text) USING fractam WITH (autovacuum_enabled = false);
	INSERT INTO av SELECT g, repeat('a', 40) FROM generate_series(1, 20000) g;
	INSERT INTO av_off SELECT g, repeat('a', 40) FROM generate_series(1, 20000) g;
	DELETE FROM av WHERE id <= 15000;
	DELETE FROM av_off WHERE id <= 15000;
});

my $found = 0;
my $log;
for (my $i = 0; $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
{
	$log = slurp_file($node->logfile);
	if ($log =~ /automatic vacuum of table "postgres\.public\.av": removed (\d+) dead row versions/
		&& $1 > 0)
	{
		$found = 1;
		last;
	}
	usleep(100_000);
}
ok($found, 'autovacuum of a fractam table is logged with what it removed') or diag($log);
like($log, qr/automatic vacuum of table "postgres\.public\.av":.*\n.*DETAIL:.*pages.*\n.*WAL usage: \d+ records.*\n.*system usage: CPU/,
	'the log line carries pages, WAL and system usage');
unlike($log, qr/automatic vacuum of table "postgres\.public\.av_off"/,
	'a table with autovacuum_enabled = false is not vacuumed');
is($node->safe_psql('postgres',
		"SELECT autovacuum_count > 0 AND n_dead_tup < 15000 FROM pg_stat_user_tables WHERE relname = 'av'"),
	't', 'pg_stat_user_tables counts the autovacuum, and the dead rows are gone');
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM av'), '5000|87502500',
	'the live rows remain');
is($node->safe_psql('postgres', "SELECT fractam_verify('av')"), '', 'the table verifies');
$node->stop;
done_testing();

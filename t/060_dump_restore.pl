# pg_dump and restore of fractam tables: rows, indexes and the table access
# method come back, and a partitioned table that passes fractam on to new
# partitions still does after the restore (its mark lives in
# pg_class.reloptions, which pg_dump dumps and the utility hook accepts).
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('dump');
$node->init;
$node->ft_configure;
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
	CREATE EXTENSION fractam;
	CREATE TABLE plain (id int PRIMARY KEY, v text) USING fractam
	  WITH (fanout = 8, autovacuum_enabled = false, compression = 'zstd',
	        compression_level = 3);
	CREATE INDEX plain_v ON plain USING fractam (v);
	INSERT INTO plain SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
	DELETE FROM plain WHERE id % 7 = 0;
	VACUUM plain;
	CREATE TABLE events (id int, day date) PARTITION BY RANGE (day) USING fractam;
	CREATE TABLE events_d1 PARTITION OF events
	  FOR VALUES FROM ('2026-01-01') TO ('2026-01-02');
	INSERT INTO events SELECT g, '2026-01-01' FROM generate_series(1, 100) g;
});

my $dump = $node->basedir . '/src.sql';
$node->command_ok([ 'pg_dump', '-d', $node->connstr('src'), '-f', $dump ],
	'pg_dump of a database with fractam tables');
like(slurp_file($dump), qr/fractam_partitions/, 'the dump keeps the partitioned table\'s mark');

$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('dst'), '-f', $dump ],
	'the dump restores');

my $am_of = q{SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = };
for my $rel ('plain', 'events_d1')
{
	is($node->safe_psql('dst', "$am_of '$rel'"), 'fractam', "$rel is a fractam table after restore");
}
is($node->safe_psql('dst', "$am_of 'plain_v'"), 'fractam_index', 'its fractam index too');
is($node->safe_psql('dst', "SELECT reloptions FROM pg_class WHERE relname = 'plain'"),
	'{autovacuum_enabled=false,fanout=8,compression=zstd,compression_level=3}',
	'the table\'s fractam and heap storage parameters are restored');
cmp_ok($node->safe_psql('src', "SELECT compressed_leaf_pages FROM fractam_stats('plain')"),
	'>', 0, 'the source table has compressed leaves');
for my $q ('SELECT count(*), sum(id), md5(string_agg(v, \',\' ORDER BY id)) FROM plain',
	'SELECT count(*), sum(id) FROM events')
{
	is($node->safe_psql('dst', $q), $node->safe_psql('src', $q), "same rows: $q");
}
is($node->safe_psql('dst', q{
	SET enable_seqscan = off;
	SELECT count(*) FROM plain WHERE v > '8'}),
	$node->safe_psql('src', q{SELECT count(*) FROM plain WHERE v > '8'}),
	'the restored fractam index answers like the source');
is($node->safe_psql('dst', 'SELECT fractam_verify(\'plain\'), fractam_verify(\'plain_v\')'),
	'|', 'verify passes on the restored table and index');

$node->safe_psql('dst', q{
	CREATE TABLE events_d2 PARTITION OF events
	  FOR VALUES FROM ('2026-01-02') TO ('2026-01-03')});
is($node->safe_psql('dst', "$am_of 'events_d2'"), 'fractam',
	'a partition created after the restore is a fractam table');

$node->stop;
done_testing();

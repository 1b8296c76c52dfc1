# VACUUM reads a fractam table's leaves and its fractam indexes' pages
# through its buffer ring, as heap's VACUUM and nbtree's do: a VACUUM of
# relations larger than shared buffers must not push out the pages the
# inserters work in.  (Session 14: in the FIFO benchmark at 5.7 times the
# memory limit, insert rates fell from ~30,000 to ~2,000 rows/s at the end
# of every autovacuum pass of the fractam table, whose walk had read every
# leaf of the table and of its four indexes into 96 MB of shared buffers.)
# The server is restarted so that shared buffers start empty; after VACUUM
# only about a ring of each relation may be there, and the rows, the index
# and fractam_verify must be right.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('vacring');
$node->init;
$node->ft_configure('shared_buffers = 64MB', 'autovacuum = off');
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION fractam;
	CREATE EXTENSION pg_buffercache;
	CREATE FUNCTION cached(rel regclass) RETURNS bigint LANGUAGE sql AS $$
		SELECT count(*) FROM pg_buffercache b
		WHERE b.relfilenode = pg_relation_filenode(rel)
		  AND b.reldatabase = (SELECT oid FROM pg_database
							   WHERE datname = current_database())
		  AND b.relforknumber = 0 $$;
	CREATE TABLE fv (id bigint, k int, pad text) USING fractam;
	CREATE INDEX fv_k ON fv USING fractam (k);
	INSERT INTO fv SELECT g, (g::bigint * 7919) % 100003, repeat('x', 80)
		FROM generate_series(1, 300000) g;
	CREATE TABLE hv (id bigint, k int, pad text) USING heap;
	CREATE INDEX hv_k ON hv (k);
	INSERT INTO hv SELECT * FROM fv;
	DELETE FROM fv WHERE id % 10 = 0;
	DELETE FROM hv WHERE id % 10 = 0;
	CHECKPOINT;
});
my ($tpages, $ipages) = split /\|/, $node->safe_psql('postgres',
	"SELECT pg_relation_size('fv') / 8192, pg_relation_size('fv_k') / 8192");
cmp_ok($tpages, '>', 2000, "the table has $tpages pages");
cmp_ok($ipages, '>', 500, "its index has $ipages pages");

$node->restart;
is($node->safe_psql('postgres', "SELECT cached('fv') + cached('fv_k')"),
	'0', 'shared buffers start without the table and its index');
$node->safe_psql('postgres', 'VACUUM hv; VACUUM fv');
my ($tcached, $icached, $hcached, $bcached) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT cached('fv'), cached('fv_k'), cached('hv'), cached('hv_k')");
note("after VACUUM: fractam table $tcached, fractam index $icached, "
	  . "heap $hcached, btree $bcached buffers");
# a ring is 32 buffers; the walk's descents and the nodes above the leaves
# (a few dozen pages) stay as with any reader
cmp_ok($tcached, '<', 200,
	"VACUUM left $tcached of the table's $tpages pages in shared buffers");
cmp_ok($icached, '<', 200,
	"VACUUM left $icached of the index's $ipages pages in shared buffers");

is($node->safe_psql('postgres',
		'SELECT count(*), sum(id), sum(k) FROM fv'),
	$node->safe_psql('postgres',
		'SELECT count(*), sum(id), sum(k) FROM hv'),
	'the table keeps the rows heap keeps');
is($node->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*), sum(id) FROM fv WHERE k BETWEEN 1000 AND 30000}),
	$node->safe_psql('postgres',
		'SELECT count(*), sum(id) FROM hv WHERE k BETWEEN 1000 AND 30000'),
	'the index keeps the entries btree keeps');
is($node->safe_psql('postgres',
		"SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'fv'"),
	'0', 'VACUUM removed the dead rows');
$node->safe_psql('postgres', "SELECT fractam_verify('fv'), fractam_verify('fv_k')");
pass('fractam_verify of the table and the index');

# ANALYZE samples every pseudo-block of so small a table, reading all its
# leaves: through ANALYZE's ring too
$node->restart;
$node->safe_psql('postgres', 'ANALYZE fv');
$tcached = $node->safe_psql('postgres', "SELECT cached('fv')");
cmp_ok($tcached, '<', 200,
	"ANALYZE left $tcached of the table's $tpages pages in shared buffers");
is($node->safe_psql('postgres',
		"SELECT reltuples FROM pg_class WHERE relname = 'fv'"),
	'270000', 'ANALYZE counted every live row');

# The cost-based delay: every page VACUUM reads costs at least
# vacuum_cost_page_hit (1), so with vacuum_cost_limit = 20 and
# vacuum_cost_delay = 20 ms it sleeps at least 1 ms per page read.  (An
# autovacuum that ignored autovacuum_vacuum_cost_delay took the disk from
# the FIFO benchmark's inserters.)
$node->safe_psql('postgres', q{
	CREATE TABLE fd (id bigint, pad text) USING fractam;
	INSERT INTO fd SELECT g, repeat('x', 80) FROM generate_series(1, 30000) g;
	DELETE FROM fd WHERE id % 10 = 0;
});
my $dpages = $node->safe_psql('postgres', "SELECT pg_relation_size('fd') / 8192");
my $ms = $node->safe_psql('postgres', q{
SET vacuum_cost_delay = '20ms';
SET vacuum_cost_limit = 20;
SELECT extract(epoch FROM clock_timestamp()) * 1000 AS t0 \gset
VACUUM fd;
SELECT round(extract(epoch FROM clock_timestamp()) * 1000 - :t0);
});
cmp_ok($ms, '>=', $dpages / 2,
	"VACUUM of $dpages pages under vacuum_cost_delay slept ($ms ms)");
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM fd'),
	'27000|405000000', 'the delayed VACUUM kept the live rows');

$node->stop;
done_testing();

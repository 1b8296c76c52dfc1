# Sessions that append to compressed fractam indexes merge the full leaves
# behind their append points into compressed ones as they go (ft_seal.c):
# at the end of each group of entries sharing leading key columns (the
# timeseries key (sensor, ts), unique, so its inserts are all direct) and
# at the right edge (ascending ids).  While two pgbench clients insert
# timeseries events for their own 200 sensors each, two more read single
# sensors through the key, forward and backward, and each read must see
# exactly the consecutive timestamps its snapshot holds: a merge that lost,
# doubled or misplaced entries under a concurrent scan fails a read.
# Afterwards every sensor's entries through the index equal the table's
# (sequential scan), both indexes hold compressed leaves, and fractam_verify
# passes; the heap table gets the same checks.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('sealrace');
$node->init;
$node->ft_configure('autovacuum = off', 'max_connections = 30');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION fractam');

for my $am ('heap', 'fractam')
{
	my $t = "s_$am";
	my $topts = $am eq 'fractam' ? "WITH (compression = 'zstd')" : '';
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t (sensor int NOT NULL, ts int NOT NULL, id bigint,
			v float8) USING $am $topts;
		CREATE UNIQUE INDEX ${t}_pk ON $t USING fractam (sensor, ts)
			WITH (compression = 'zstd');
		CREATE INDEX ${t}_id ON $t USING fractam (id) WITH (compression = 'lz4');
		CREATE SEQUENCE ${t}_ids;});

	my $dir = $node->basedir;
	open my $wfh, '>', "$dir/$t-w.sql" or die;
	print $wfh <<"EOS";
\\set ts :ts + 1
INSERT INTO $t SELECT s, :ts, nextval('${t}_ids'), random()
FROM generate_series(:client_id * 200, :client_id * 200 + 199) s;
EOS
	close $wfh;
	open my $rfh, '>', "$dir/$t-r.sql" or die;
	print $rfh <<"EOS";
\\set s random(0, 399)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT CASE WHEN
	(SELECT count(*) = coalesce(max(ts) - min(ts) + 1, 0) FROM $t WHERE sensor = :s)
	AND (SELECT coalesce(array_agg(ts), '{}') FROM
			(SELECT ts FROM $t WHERE sensor = :s ORDER BY ts DESC) b)
		= (SELECT coalesce(array_agg(ts ORDER BY ts DESC), '{}') FROM
			(SELECT ts FROM $t WHERE sensor = :s ORDER BY ts) a)
	THEN 1 ELSE 1 / (random() * 0)::int END;
EOS
	close $rfh;

	my ($wout, $werr, $rout, $rerr) = ('', '', '', '');
	my $writers = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '12', '-D', 'ts=1000',
			'-f', "$dir/$t-w.sql", '-h', $node->host, '-p', $node->port,
			'postgres' ],
		'>', \$wout, '2>', \$werr);
	my $readers = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '12',
			'-f', "$dir/$t-r.sql", '-h', $node->host, '-p', $node->port,
			'postgres' ],
		'>', \$rout, '2>', \$rerr);
	$writers->finish;
	is($?, 0, "$am table: the appenders ran") or diag($werr);
	$readers->finish;
	is($?, 0, "$am table: every read during the appends saw its sensor whole")
	  or diag($rerr);
	my ($nw) = $wout =~ /number of transactions actually processed: (\d+)/;
	my ($nr) = $rout =~ /number of transactions actually processed: (\d+)/;
	cmp_ok($nw // 0, '>', 1000, "$am table: " . ($nw // 0) . ' events of 200 rows');
	cmp_ok($nr // 0, '>', 50, "$am table: " . ($nr // 0) . ' reads');

	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_class c, fractam_stats(c.oid) s
		WHERE c.relname IN ('${t}_pk', '${t}_id')
		  AND s.compressed_leaf_pages * 4 > s.leaf_pages}),
		'2', "$am table: a quarter of both indexes' leaves or more compressed");
	# per sensor: count and sums of ts and id, from a sequential scan and
	# through each index
	is($node->safe_psql('postgres', qq{
		CREATE TEMP TABLE want AS
			SELECT sensor, count(*) n, sum(ts) sts, sum(id) sid FROM $t
			WHERE sensor + 0 >= 0 GROUP BY sensor;
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SET enable_hashagg = off; SET enable_sort = off;
		CREATE TEMP TABLE got_pk AS
			SELECT sensor, count(*) n, sum(ts) sts, sum(id) sid FROM $t
			WHERE sensor >= 0 GROUP BY sensor;
		CREATE TEMP TABLE got_id AS
			SELECT sensor, count(*) n, sum(ts) sts, sum(id) sid FROM
				(SELECT * FROM $t WHERE id > 0 ORDER BY id DESC) x
			GROUP BY sensor;
		SELECT (SELECT count(*) FROM want) = 400 AND
			   (SELECT count(*) FROM ((TABLE want EXCEPT TABLE got_pk)
				UNION ALL (TABLE got_pk EXCEPT TABLE want)) d) = 0 AND
			   (SELECT count(*) FROM ((TABLE want EXCEPT TABLE got_id)
				UNION ALL (TABLE got_id EXCEPT TABLE want)) d) = 0}),
		't', "$am table: both indexes return what the table holds");
	is(join("\n", ft_verify_all($node)), '', "$am table: fractam_verify passes");
}

is(join("\n", ft_log_problems($node)), '', 'no crash or failed check in the log');
$node->stop;
done_testing();

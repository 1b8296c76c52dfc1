# On-disk formats 3 and 4 stay readable: a fractam table and three fractam
# indexes written by the build that fixed each format (test/fixture/formatN:
# their main forks, every page's LSN zeroed; format 4's table holds row
# versions in all three forms: settled by a VACUUM FULL, full after a row
# lock, compact from inserts and updates) are put under tables and indexes of the
# same definition in a new cluster, which must read them (sequential and
# index scans, buffered index messages included) as the rows the
# generating SQL makes, pass fractam_verify, and take inserts, updates,
# deletes and VACUUM on top of them.  A table cannot be rebuilt by REINDEX,
# so every later build must pass this with the same files.  (The files are
# of a little-endian, 8-byte-aligned machine without data checksums, as
# the test cluster is; text keys sort under COLLATE "C".)
#
# FRACTAM_FIXTURE_WRITE=1 writes the newest format's fixture instead, into
# FRACTAM_FIXTURE_DIR (an absolute path; the test runs in a copy of the
# tree).  Only for a new format version: keep the old fixtures, add one.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use File::Copy;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my @rels = qw(fx fx_id fx_kt fx_t);

my $schema = q{
	CREATE EXTENSION IF NOT EXISTS fractam;
	CREATE TABLE fx (id int, k int, t text COLLATE "C", n numeric, ts timestamptz, b bool)
	  USING fractam WITH (fanout = 4, autovacuum_enabled = false);
	CREATE UNIQUE INDEX fx_id ON fx USING fractam (id) WITH (fanout = 4);
	CREATE INDEX fx_kt ON fx USING fractam (k, t);
	CREATE INDEX fx_t ON fx USING fractam (t) WITH (fanout = 4);
};

# row i as the generating SQL stores it (before updates)
my $row = q{i, (i * 7919) % 1000,
	CASE WHEN i % 50 = 0 THEN NULL ELSE md5(i::text) END, i / 7.0,
	'2026-01-01 00:00+00'::timestamptz + i * interval '1 minute', i % 3 = 0};

# what the fixture holds: rows 1..1500 (every fifth updated, every seventh
# deleted, then frozen) and rows 1501..1600 inserted after that, whose
# index entries stay buffered (direct apply off), frozen by a second VACUUM.
# Format 4's also went through a VACUUM FULL before the updates (its rows
# settled) and a row lock (the locked rows stay full).
my $generate = qq{
	SET fractam.direct_apply = off;
	INSERT INTO fx SELECT $row FROM generate_series(1, 1500) i;
	VACUUM FULL fx;
	SELECT count(*) FROM (SELECT 1 FROM fx WHERE id % 9 = 4 FOR SHARE) s;
	UPDATE fx SET k = k + 1, t = t || 'u' WHERE id % 5 = 1;
	DELETE FROM fx WHERE id % 7 = 0;
	VACUUM (FREEZE) fx;
	INSERT INTO fx SELECT $row FROM generate_series(1501, 1600) i;
	VACUUM (FREEZE) fx;
	CHECKPOINT;
};

# the same rows, computed directly
my $reference = qq{
	CREATE TABLE ref AS SELECT id,
	  CASE WHEN id % 5 = 1 AND id <= 1500 THEN k + 1 ELSE k END AS k,
	  CASE WHEN id % 5 = 1 AND id <= 1500 THEN t || 'u' ELSE t END AS t,
	  n, ts, b
	FROM (SELECT $row FROM generate_series(1, 1600) i) r(id, k, t, n, ts, b)
	WHERE NOT (id % 7 = 0 AND id <= 1500);
};

# copy a relation file, zeroing every page's LSN (the new cluster's WAL is
# shorter; a zero LSN also makes the first change log a full page image)
sub copy_zero_lsn
{
	my ($from, $to) = @_;
	open(my $in, '<:raw', $from) or die "$from: $!";
	open(my $out, '>:raw', $to) or die "$to: $!";
	my $page;
	while (read($in, $page, 8192) == 8192)
	{
		substr($page, 0, 8) = "\0" x 8;
		print $out $page;
	}
	close($in);
	close($out) or die "$to: $!";
}

sub check_fixture
{
my ($format, $fixdir) = @_;
my $node = ft_node("fixture$format");
$node->init;
$node->ft_configure('autovacuum = off');
$node->start;
$node->safe_psql('postgres', $schema);

my %path = map {
	$_ => $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$_')")
} @rels;

if ($ENV{FRACTAM_FIXTURE_WRITE})
{
	$node->safe_psql('postgres', $generate);
	# (VACUUM FULL gave the relations new files)
	%path = map {
		$_ => $node->data_dir . '/'
		  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$_')")
	} @rels;
	$node->stop;
	mkdir $fixdir;
	copy_zero_lsn($path{$_}, "$fixdir/$_") for @rels;
	pass("fixture written to $fixdir");
	return;
}

$node->stop;
for my $r (@rels)
{
	ok(-s "$fixdir/$r", "format $format: fixture file $r exists");
	copy("$fixdir/$r", $path{$r}) or die "copy $r: $!";
	unlink glob("$path{$r}_*");    # no free space map or visibility map
}
$node->start;
$node->safe_psql('postgres', $reference);

# rows, through a sequential scan and through each index
my $same_rows = sub {
	my ($what) = @_;
	is($node->safe_psql('postgres', q{
		SET enable_indexscan = off; SET enable_bitmapscan = off;
		SET enable_indexonlyscan = off;
		SELECT (SELECT count(*) FROM (TABLE fx EXCEPT ALL TABLE ref) a),
		       (SELECT count(*) FROM (TABLE ref EXCEPT ALL TABLE fx) b),
		       (SELECT count(*) FROM fx)}),
		'0|0|' . $node->safe_psql('postgres', 'SELECT count(*) FROM ref'),
		"$what: a sequential scan returns the reference rows");
	for my $q (
		[ 'fx_id', 'SELECT id, k FROM %s WHERE id BETWEEN 40 AND 1550 ORDER BY id' ],
		[ 'fx_kt', 'SELECT k, t FROM %s WHERE k BETWEEN 100 AND 400 ORDER BY k, t' ],
		[ 'fx_t', "SELECT t, id FROM %s WHERE t >= '8' ORDER BY t, id" ])
	{
		my ($idx, $sql) = @$q;
		my $set = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;';
		my $plan = $node->safe_psql('postgres', "$set EXPLAIN (COSTS OFF) " . sprintf($sql, 'fx'));
		like($plan, qr/using $idx on fx/, "$what: the query uses $idx") or diag($plan);
		is($node->safe_psql('postgres', "$set SELECT md5(string_agg(x::text, ',')) FROM ("
				  . sprintf($sql, 'fx') . ') x'),
			$node->safe_psql('postgres', "SELECT md5(string_agg(x::text, ',')) FROM ("
				  . sprintf($sql, 'ref') . ') x'),
			"$what: $idx returns the reference rows");
	}
	is($node->safe_psql('postgres', q{
		SELECT fractam_verify('fx'), fractam_verify('fx_id'),
		       fractam_verify('fx_kt'), fractam_verify('fx_t')}),
		'|||', "$what: fractam_verify passes");
};

$same_rows->("format $format fixture");
cmp_ok($node->safe_psql('postgres', q{SELECT buffered_messages FROM fractam_stats('fx_t')}),
	'>', 0, 'the fixture index holds buffered messages');
cmp_ok($node->safe_psql('postgres', q{SELECT height FROM fractam_stats('fx')}),
	'>=', 2, 'the fixture table has leaves under a level-1 node');
cmp_ok($node->safe_psql('postgres', q{SELECT height FROM fractam_stats('fx_t')}),
	'>=', 3, 'the fixture index has both buffer levels');
if ($format >= 4)
{
	is($node->safe_psql('postgres', q{
		SELECT full_versions > 0, compact_versions > 0, settled_versions > 0
		FROM fractam_table_stats('fx')}),
		't|t|t', 'the format 4 fixture table holds versions of all three forms');
}

# writes on top of the old pages
for my $t (qw(fx ref))
{
	$node->safe_psql('postgres', qq{
		INSERT INTO $t SELECT $row FROM generate_series(1601, 2400) i;
		UPDATE $t SET k = k + 2, b = NOT b WHERE id % 11 = 0;
		DELETE FROM $t WHERE id % 13 = 0;
	});
}
$same_rows->("format $format: after inserts, updates and deletes");
$node->safe_psql('postgres', 'VACUUM fx');
$same_rows->("format $format: after VACUUM");

# a page naming a codec this build does not know is refused, not misread
$node->stop;
{
	open(my $f, '+<:raw', $path{fx_t}) or die "$path{fx_t}: $!";
	my $page;
	my $blk = 0;
	while (read($f, $page, 8192) == 8192)
	{
		my $special = unpack('v', substr($page, 16, 2));
		my $flags = unpack('v', substr($page, $special + 28, 2));
		if (($flags & 2) && !($flags & 0x10))    # FT_PAGE_LEAF, not deleted
		{
			seek($f, $blk * 8192 + $special + 30, 0);    # ft_codec
			print $f chr(7);
			last;
		}
		$blk++;
	}
	close($f) or die;
}
$node->start;
my ($ret, $stdout, $stderr) = $node->psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM fx WHERE t >= '0'});
like($stderr, qr/has a page in a format this build of fractam cannot read at block \d+.*\n.*Codec 7/,
	"format $format: a page with an unknown codec is refused");

$node->stop;
}

if ($ENV{FRACTAM_FIXTURE_WRITE})
{
	check_fixture(4, $ENV{FRACTAM_FIXTURE_DIR});
	done_testing();
	exit 0;
}
check_fixture($_, "$FindBin::RealBin/../test/fixture/format$_") for (3, 4);
done_testing();

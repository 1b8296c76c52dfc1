# Corrupted compressed leaves are reported, never misread.
#
# A cluster without data checksums (so that PostgreSQL's own page check
# does not hide fractam's) holds a table with a zstd and an lz4 fractam
# index, and a zstd fractam table whose leaves VACUUM compressed and whose
# change areas then took a DELETE and row locks.  Each round, with the
# server stopped, one or a few bytes inside the frame of a random
# compressed leaf of one of the three are changed (a flipped bit or a
# random byte in the header, the dead bits, the compressed bytes or the
# used part of the change area; the frame cut short; the page's codec
# changed), and the server started again:
#  - fractam_verify reports the relation corrupted (ERRCODE_INDEX_CORRUPTED
#    for an index, ERRCODE_DATA_CORRUPTED for the table, naming it and the
#    block): every byte of a frame a reader uses is covered by one of its
#    two checksums;
#  - queries (through the indexes, and the table's sequential scan and index
#    fetches) either give the right answer (a leaf they do not read) or fail
#    with one of those errors, never a wrong answer;
#  - the server never crashes.
# The file is restored after each round.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use File::Copy;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seed = $ENV{FRACTAM_TEST_SEED} // 20261125;
srand($seed);
diag("seed $seed (set FRACTAM_TEST_SEED to repeat another run)");
my $rounds = $ENV{FRACTAM_FUZZ_ROUNDS} // 24;

my $node = ft_node('fuzz');
$node->init;						# no data checksums
$node->ft_configure("autovacuum = off");
$node->start;
is($node->safe_psql('postgres', 'SHOW data_checksums'), 'off', 'data checksums are off');

$node->safe_psql('postgres', q{
	CREATE EXTENSION fractam;
	CREATE TABLE fz (id int, k int, t text);
	INSERT INTO fz SELECT g, (g * 7919) % 20000, 'v' || (g % 500) FROM generate_series(1, 120000) g;
	CREATE INDEX fz_k ON fz USING fractam (k, id) WITH (compression = 'zstd');
	CREATE INDEX fz_t ON fz USING fractam (t, id) WITH (compression = 'lz4');
	CREATE TABLE fzc (id int, k int, t text) USING fractam WITH (compression = 'zstd');
	INSERT INTO fzc SELECT g, g % 97, 'row ' || g || repeat('x', g % 40) FROM generate_series(1, 60000) g;
	CREATE INDEX fzc_id ON fzc USING btree (id);
	VACUUM fzc;
	DELETE FROM fzc WHERE id % 50 = 0;
	SELECT count(*) FROM (SELECT 1 FROM fzc WHERE id % 7 = 0 FOR SHARE) s;
	CHECKPOINT;
});

my %query = (
	fz_k => 'SELECT count(*), sum(id) FROM fz WHERE k BETWEEN 100 AND 15000',
	fz_t => "SELECT count(*), sum(id) FROM fz WHERE t BETWEEN 'v1' AND 'v4'",
	fzc => 'SELECT count(*), sum(id), sum(length(t)) FROM fzc WHERE k < 50');
# the table is also read through its btree index (row fetches)
my %table_query = (fzc =>
	  'SELECT count(*), sum(k), sum(length(t)) FROM fzc WHERE id BETWEEN 5000 AND 40000');
my %expected;
my %table_expected;
for my $rel (sort keys %query)
{
	$expected{$rel} = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; $query{$rel}");
}
for my $rel (sort keys %table_query)
{
	$table_expected{$rel} = $node->safe_psql('postgres', $table_query{$rel});
	like($node->safe_psql('postgres',
			"SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN (COSTS OFF) $table_query{$rel}"),
		qr/fzc_id/, "$rel is read through its index by the fetch query");
}
my %code = (fz_k => 'XX002', fz_t => 'XX002', fzc => 'XX001');

# The compressed leaves of a relation file: [block, frame offset, frame
# length, special offset, line pointer offset, frame header fields]
sub compressed_leaves
{
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or die "open $path: $!";
	my @found;
	my $blk = 0;
	while (read($fh, my $page, 8192) == 8192)
	{
		my ($lower, $upper, $special) = unpack('v v v', substr($page, 12, 6));
		if ($blk > 0 && $special > 24 && $special <= 8192 - 40 && $lower >= 24)
		{
			my ($flags, $codec) = unpack('v C', substr($page, $special + 28, 3));
			my $nitems = ($lower - 24) / 4;
			if (($flags & 0x0002) && !($flags & 0x0010) && $codec != 0 && $nitems >= 1)
			{
				my $lp = unpack('V', substr($page, 24 + 4 * ($nitems - 1), 4));
				my $off = $lp & 0x7fff;
				my $len = ($lp >> 17) & 0x7fff;
				my ($rawlen, $complen, $fnitems, $ndead, $crc, $deadcrc, $chgcap, $chglen) =
				  unpack('x8 V V v v V V v v', substr($page, $off, 32));
				push @found, [ $blk, $off, $len, $special, 24 + 4 * ($nitems - 1),
					{ nitems => $fnitems, complen => $complen, chglen => $chglen } ];
			}
		}
		$blk++;
	}
	close($fh);
	return @found;
}

my %files;
for my $idx (sort keys %query)
{
	my $rel = $node->safe_psql('postgres', "SELECT pg_relation_filepath('$idx')");
	$files{$idx} = $node->data_dir . "/$rel";
}
$node->stop;
for my $idx (sort keys %query)
{
	copy($files{$idx}, "$files{$idx}.clean") or die "copy: $!";
	my @leaves = compressed_leaves($files{$idx});
	cmp_ok(scalar(@leaves), '>', 10, "$idx has compressed leaves to corrupt");
}
cmp_ok(scalar(grep { $_->[5]{chglen} > 0 } compressed_leaves($files{fzc})), '>', 10,
	'the table has compressed leaves with changes to corrupt');

my @kinds = qw(bitflip header deadbits data changes truncate codec);
for my $round (1 .. $rounds)
{
	my $idx = (sort keys %query)[ $round % 3 ];
	my @leaves = compressed_leaves($files{$idx});
	my ($blk, $off, $len, $special, $lpoff, $fh_) = @{ $leaves[ int(rand(@leaves)) ] };
	my $kind = $kinds[ int(rand(@kinds)) ];
	my $deadbytes = int(($fh_->{nitems} + 7) / 8);
	my $data = $off + 32 + $deadbytes;
	# what readers use: the unused part of a table frame's change area is not
	$len = 32 + $deadbytes + $fh_->{complen} + $fh_->{chglen};
	$kind = 'data' if $kind eq 'changes' && $fh_->{chglen} == 0;

	open(my $fh, '+<:raw', $files{$idx}) or die "open: $!";
	my $base = $blk * 8192;
	my $patch;
	my $where;
	if ($kind eq 'codec')
	{
		# the other compression method
		seek($fh, $base + $special + 30, 0);
		read($fh, my $c, 1);
		$where = $special + 30;
		$patch = chr(ord($c) == 1 ? 2 : 1);
	}
	elsif ($kind eq 'truncate')
	{
		# the frame's line pointer loses 1 to 64 bytes of its length
		seek($fh, $base + $lpoff, 0);
		read($fh, my $lpb, 4);
		my $lp = unpack('V', $lpb);
		my $newlen = (($lp >> 17) & 0x7fff) - 1 - int(rand(64));
		$lp = ($lp & 0x1ffff) | ($newlen << 17);
		$where = $lpoff;
		$patch = pack('V', $lp);
	}
	else
	{
		my $pos;
		if ($kind eq 'header') { $pos = $off + int(rand(32)); }
		elsif ($kind eq 'deadbits') { $pos = $off + 32 + int(rand(int($fh_->{nitems} / 8))); }
		elsif ($kind eq 'data') { $pos = $data + int(rand($fh_->{complen})); }
		elsif ($kind eq 'changes') { $pos = $data + $fh_->{complen} + int(rand($fh_->{chglen})); }
		else { $pos = $off + int(rand($len)); }
		seek($fh, $base + $pos, 0);
		read($fh, my $c, 1);
		$where = $pos;
		$patch = ($kind eq 'bitflip') ? chr(ord($c) ^ (1 << int(rand(8))))
		  : chr((ord($c) + 1 + int(rand(255))) % 256);
	}
	seek($fh, $base + $where, 0);
	print $fh $patch;
	close($fh);

	$node->start;
	my $desc = "round $round: $idx block $blk, $kind at byte $where";
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT fractam_verify('$idx')",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	ok($ret != 0 && $err =~ /$code{$idx}/ && $err =~ /\Q$idx\E/
		  && $err =~ /block $blk\b/, "$desc: verify reports it")
	  or diag($err);

	my @queries = map { [ $_, $query{$_}, $expected{$_} ] } sort keys %query;
	push @queries, map { [ "$_ fetch", $table_query{$_}, $table_expected{$_} ] }
	  sort keys %table_query;
	for my $q (@queries)
	{
		my ($name, $sql, $want) = @$q;
		my ($r, $o, $e) = $node->psql('postgres',
			"SET enable_seqscan = off; SET enable_bitmapscan = off; $sql",
			extra_params => [ '-v', 'VERBOSITY=verbose' ]);
		ok(($r == 0 && $o eq $want) || ($r != 0 && $e =~ /XX00[12]/),
			"$desc: $name right or refused") or diag("ret $r out $o err $e");
	}
	$node->stop;
	copy("$files{$idx}.clean", $files{$idx}) or die "copy: $!";
}

# A fractam table's row version whose header names no known form is
# reported with the table's name and the version's TID (ERRCODE_DATA_CORRUPTED),
# by a sequential scan and by a fetch through an index.
$node->start;
$node->safe_psql('postgres', q{
	CREATE TABLE fzt (id int, t text) USING fractam;
	INSERT INTO fzt SELECT g, 'row ' || g FROM generate_series(1, 20) g;
	CREATE INDEX fzt_id ON fzt USING btree (id);
	CHECKPOINT;
});
my $tfile = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('fzt')");
$node->stop;
{
	open(my $fh, '+<:raw', $tfile) or die "open $tfile: $!";
	my $blk = 0;
	my $done = 0;
	while (!$done && read($fh, my $page, 8192) == 8192)
	{
		my ($lower, $special) = unpack('v x2 v', substr($page, 12, 6));
		if ($blk > 0 && $special > 24 && $special <= 8192 - 40 && $lower >= 28)
		{
			my $flags = unpack('v', substr($page, $special + 28, 2));
			my $lp = unpack('V', substr($page, 24, 4));
			my $off = $lp & 0x7fff;
			# the root leaf's first item: row id 0 (TID (0,1)), compact form 1
			if (($flags & 0x0002) && substr($page, $off, 8) eq "\x01" . ("\0" x 7))
			{
				seek($fh, $blk * 8192 + $off, 0);
				print $fh "\x07";
				$done = 1;
			}
		}
		$blk++;
	}
	close($fh);
	ok($done, 'found the table row version (0,1) to corrupt');
}
$node->start;
for my $q ('SELECT count(*) FROM fzt',
	'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT t FROM fzt WHERE id = 1')
{
	my ($r, $o, $e) = $node->psql('postgres', $q, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	ok($r != 0 && $e =~ /XX001/ && $e =~ /row version \(0,1\) of table "fzt" is corrupted/
		  && $e =~ /unknown form 7/,
		"an unknown version form is reported with the table and TID: $q") or diag("ret $r out $o err $e");
}
is($node->safe_psql('postgres',
		'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT t FROM fzt WHERE id = 2'),
	'row 2', 'the other versions of the leaf are read');
$node->safe_psql('postgres', 'DROP TABLE fzt');
$node->stop;

$node->start;
is(join("\n", ft_log_problems($node)), '', 'server log: no PANIC or crash');
for my $idx (sort keys %query)
{
	my ($r, $o, $e) = $node->psql('postgres', "SELECT fractam_verify('$idx')");
	is($r, 0, "$idx verifies again once restored");
}
$node->stop;
done_testing();

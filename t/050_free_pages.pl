# Deleted index pages are found again after the free space map lost them.
# The FSM is not WAL-logged, so a crash (or, here, removing the FSM fork)
# can forget pages VACUUM freed; like nbtree, VACUUM offers every deleted
# page it did not reach in its walk to the FSM again, so they are reused
# instead of the index growing.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('freepages');
$node->init;
$node->ft_configure('autovacuum = off');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION fractam');
$node->safe_psql('postgres', q{
	CREATE TABLE fp (k int);
	CREATE INDEX fp_k ON fp USING fractam (k);
	INSERT INTO fp SELECT generate_series(1, 200000);
	DELETE FROM fp WHERE k BETWEEN 20000 AND 180000;
	VACUUM fp;
});
# the pages a VACUUM deletes go to the free space map once no snapshot can
# predate their deletion, as nbtree's: here, at the next VACUUM that
# removes index entries, after a new xid
$node->safe_psql('postgres', q{
	DELETE FROM fp WHERE k = 2;
	VACUUM (INDEX_CLEANUP on) fp;
});
my $freed = $node->safe_psql('postgres', 'SELECT free_pages FROM fractam_stats(\'fp_k\')');
cmp_ok($freed, '>=', 200, "VACUUM unlinked the emptied leaves ($freed pages)");

# lose the free space map
my $path = $node->safe_psql('postgres', "SELECT pg_relation_filepath('fp_k')");
$node->stop;
my $fsm = $node->data_dir . "/${path}_fsm";
ok(-e $fsm, 'the index has a free space map');
unlink $fsm or die "unlink $fsm: $!";
$node->start;

my $size_before = $node->safe_psql('postgres', "SELECT pg_relation_size('fp_k')");
# a VACUUM that deletes index entries walks the index and finds the pages
# (INDEX_CLEANUP on: one dead row would otherwise skip index vacuuming)
$node->safe_psql('postgres', q{
	DELETE FROM fp WHERE k = 1;
	VACUUM (INDEX_CLEANUP on) fp;
});
# half of the freed key range again: more than the emptied leaves VACUUM
# could not unlink (first and last children of their buffer nodes) can
# hold, fewer pages than were freed
$node->safe_psql('postgres',
	'INSERT INTO fp SELECT (i * 7919) % 160000 + 20000 FROM generate_series(1, 80000) i');
my $size_after = $node->safe_psql('postgres', "SELECT pg_relation_size('fp_k')");
is($size_after, $size_before, 'the reinserted entries went into recycled pages; the index did not grow');
my $reused = $node->safe_psql('postgres', 'SELECT free_pages FROM fractam_stats(\'fp_k\')');
cmp_ok($reused, '<', $freed, "recycled pages are in use again ($reused of $freed still free)");
is_deeply([ ft_verify_all($node) ], [], 'fractam_verify passes');
my ($ok, $desc) = ft_index_matches_heap($node, 'postgres', 'fp', 'fp_k', 'k', 0, 'ctid');
ok($ok, "index and heap agree: $desc");

$node->stop;
done_testing();

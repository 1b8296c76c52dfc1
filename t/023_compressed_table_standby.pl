# t/020_standby.pl with fractam tables WITH (compression = 'lz4'): the
# standby replays the merges of leaves into compressed ones, the records
# of their change areas and their rewrites (wal_consistency_checking on
# the primary compares each page after redo) and answers like the primary.
use strict;
use warnings FATAL => qw(all);
use FindBin;

$ENV{FRACTAM_STANDBY_TABLE_AM} = 'fractam';
$ENV{FRACTAM_TABLE_COMPRESSION} = 'lz4';
exec($^X, (map { "-I$_" } grep { !ref } @INC),
	"$FindBin::RealBin/020_standby.pl")
  or die "cannot run 020_standby.pl: $!";

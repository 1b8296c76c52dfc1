# t/010_crash_recovery.pl with fractam tables WITH (compression = 'zstd'):
# VACUUM, running in a loop beside the writers, merges their leaves into
# compressed ones, whose rows the writers then delete, update and lock
# (change areas, and rewrites of full ones) while the kill -9 comes; after
# each restart every acknowledged commit's rows are there, no rolled-back
# or deleted row is, every index agrees with a sequential scan, and every
# tree verifies (fractam_verify decodes every compressed leaf).
use strict;
use warnings FATAL => qw(all);
use FindBin;

$ENV{FRACTAM_CRASH_TABLE_AM} = 'fractam';
$ENV{FRACTAM_TABLE_COMPRESSION} = 'zstd';
exec($^X, (map { "-I$_" } grep { !ref } @INC),
	"$FindBin::RealBin/010_crash_recovery.pl")
  or die "cannot run 010_crash_recovery.pl: $!";

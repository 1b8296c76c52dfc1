# t/010_crash_recovery.pl with the tables themselves USING fractam: kill -9
# during concurrent INSERT/UPDATE/DELETE (and VACUUM, CHECKPOINT) on fractam
# tables with fractam indexes; after each of three restarts every
# acknowledged commit's rows are there, no rolled-back or deleted row is,
# every index agrees with a sequential scan, and the table and index trees
# verify.  (Run as its own perl process, with the same module path, so the
# test framework starts as it does for any test file.)
use strict;
use warnings FATAL => qw(all);
use FindBin;

$ENV{FRACTAM_CRASH_TABLE_AM} = 'fractam';
exec($^X, (map { "-I$_" } grep { !ref } @INC),
	"$FindBin::RealBin/010_crash_recovery.pl")
  or die "cannot run 010_crash_recovery.pl: $!";

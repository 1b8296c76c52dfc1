# t/010_crash_recovery.pl with every fractam index compressed (zstd, through
# fractam.default_compression): kill -9 during concurrent INSERT/UPDATE/
# DELETE, VACUUM and CHECKPOINT; after each of three restarts every
# acknowledged commit's rows are there, no rolled-back or deleted row is,
# every index agrees with a sequential scan, and every index verifies
# (fractam_verify decodes every compressed leaf).
use strict;
use warnings FATAL => qw(all);
use FindBin;

$ENV{FRACTAM_COMPRESSION} = 'zstd';
exec($^X, (map { "-I$_" } grep { !ref } @INC),
	"$FindBin::RealBin/010_crash_recovery.pl")
  or die "cannot run 010_crash_recovery.pl: $!";

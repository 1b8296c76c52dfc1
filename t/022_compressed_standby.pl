# t/020_standby.pl with every fractam index compressed (lz4, through
# fractam.default_compression): the standby replays compressed leaf images
# and dead-bit records (wal_consistency_checking on the primary) and answers
# like the primary.
use strict;
use warnings FATAL => qw(all);
use FindBin;

$ENV{FRACTAM_COMPRESSION} = 'lz4';
exec($^X, (map { "-I$_" } grep { !ref } @INC),
	"$FindBin::RealBin/020_standby.pl")
  or die "cannot run 020_standby.pl: $!";

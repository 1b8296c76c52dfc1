# t/020_standby.pl with the tables themselves USING fractam: the primary
# (wal_consistency_checking = 'fractam', so every table page change is
# compared after redo) runs DML, VACUUM, CREATE INDEX CONCURRENTLY, REINDEX
# CONCURRENTLY and TRUNCATE on fractam tables while hot-standby queries
# must see the same rows through the indexes as through sequential scans;
# after catch-up the standby answers like the primary and is promoted.
use strict;
use warnings FATAL => qw(all);
use FindBin;

$ENV{FRACTAM_STANDBY_TABLE_AM} = 'fractam';
exec($^X, (map { "-I$_" } grep { !ref } @INC),
	"$FindBin::RealBin/020_standby.pl")
  or die "cannot run 020_standby.pl: $!";

# Helpers for fractam's TAP tests (t/*.pl).
#
#   use FindBin;
#   use lib "$FindBin::RealBin/../test/perl";
#   use FractamTest;
#
# Nodes get ports from fractam's reserved test range (FT_PORT_MIN..FT_PORT_MAX,
# default 55110..55199) and shared_preload_libraries = 'fractam'.
package FractamTest;

use strict;
use Cwd ();
use warnings FATAL => qw(all);

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(ft_node ft_crash ft_fractam_indexes ft_verify_all
  ft_index_matches_heap ft_plan_uses ft_log_problems ft_wait_pids_gone
  ft_compressed_leaves ft_table_using);

my %ports_taken;

sub _free_port
{
	my $lo = $ENV{FT_PORT_MIN} // 55110;
	my $hi = $ENV{FT_PORT_MAX} // 55199;
	for my $port ($lo .. $hi)
	{
		next if $ports_taken{$port};
		next if -e "/tmp/.s.PGSQL.$port";
		next unless PostgreSQL::Test::Cluster::can_bind('127.0.0.1', $port);
		$ports_taken{$port} = 1;
		return $port;
	}
	BAIL_OUT("no free port in $lo..$hi");
}

# A new (not yet initialized) node with a port from the reserved range.
# ft_node(NAME)
sub ft_node
{
	my ($name) = @_;
	return PostgreSQL::Test::Cluster->new($name, port => _free_port());
}

# Configuration every fractam node needs; call after init / init_from_backup.
sub PostgreSQL::Test::Cluster::ft_configure
{
	my ($node, @extra) = @_;
	$node->append_conf('postgresql.conf', join("\n",
		"shared_preload_libraries = 'fractam'",
		"max_connections = 40",
		"log_min_messages = warning",
		"log_statement = none",
		"lc_messages = 'C'",
		# a hung statement fails its test instead of stalling the suite
		"statement_timeout = '300s'",
		@extra) . "\n");
	return $node;
}

# Postmaster children (read from /proc).
sub _children
{
	my ($ppid) = @_;
	my @kids;
	opendir(my $dh, '/proc') or return ();
	for my $p (grep { /^\d+$/ } readdir($dh))
	{
		open(my $fh, '<', "/proc/$p/stat") or next;
		my $stat = <$fh>;
		close $fh;
		next unless defined $stat;
		# pid (comm) state ppid ...: comm may contain spaces
		if ($stat =~ /\)\s+\S+\s+(\d+)/ && $1 == $ppid)
		{
			push @kids, $p;
		}
	}
	closedir $dh;
	return @kids;
}

sub ft_wait_pids_gone
{
	my ($timeout, @pids) = @_;
	my $deadline = time + $timeout;
	while (time < $deadline)
	{
		my @alive = grep { kill(0, $_) } @pids;
		return 1 unless @alive;
		usleep(100_000);
	}
	return 0;
}

# A crash: SIGKILL the postmaster and, at once, every one of its children, as
# a power failure would stop them (no shutdown checkpoint, nothing flushed by
# the server after the kill; WAL already written stays in the OS cache).
sub ft_crash
{
	my ($node) = @_;
	my $pm = $node->{_pid};
	die "node " . $node->name . " is not running" unless defined $pm;
	my @kids = _children($pm);
	note "crash: SIGKILL postmaster $pm and " . scalar(@kids) . " children";
	kill 'KILL', $pm, @kids;
	ft_wait_pids_gone(60, $pm, @kids)
	  or BAIL_OUT("processes of node " . $node->name . " survived SIGKILL");
	# children forked just before the kill were orphaned, not listed above;
	# every server process has the data directory as its working directory
	my $deadline = time + 60;
	while (my @late = _procs_in_dir($node->data_dir))
	{
		BAIL_OUT("processes of node " . $node->name . " survived SIGKILL")
		  if time > $deadline;
		kill 'KILL', @late;
		usleep(100_000);
	}
	$node->{_pid} = undef;
	return;
}

# Processes whose working directory is dir
sub _procs_in_dir
{
	my ($dir) = @_;
	my $real = Cwd::realpath($dir) // $dir;
	my @found;
	opendir(my $dh, '/proc') or return ();
	for my $p (grep { /^\d+$/ } readdir($dh))
	{
		my $cwd = readlink("/proc/$p/cwd");
		push @found, $p if defined $cwd && $cwd eq $real;
	}
	closedir $dh;
	return @found;
}

# Names of the fractam indexes in DB (default postgres); persistence 'p'/'u'/'t'
# filter optional.
sub ft_fractam_indexes
{
	my ($node, $db, $persistence) = @_;
	$db //= 'postgres';
	my $filter = defined $persistence ? "AND c.relpersistence = '$persistence'" : '';
	my $out = $node->safe_psql($db, qq{
		SELECT c.oid::regclass FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		WHERE a.amname = 'fractam_index' AND c.relkind = 'i' $filter ORDER BY 1});
	return grep { length } split /\n/, $out;
}

# What CREATE TABLE ... USING takes for tables of access method AM: AM,
# and for fractam tables WITH (compression) if FRACTAM_TABLE_COMPRESSION
# (lz4 or zstd) says so.  Returns that and the compression ('none' if not).
sub ft_table_using
{
	my ($am) = @_;
	my $tc = $ENV{FRACTAM_TABLE_COMPRESSION} // 'none';
	Test::More::diag("table compression $tc");
	return ($am eq 'fractam' && $tc ne 'none' ?
		"$am WITH (compression = '$tc')" : $am, $tc);
}

# The compressed leaves of all fractam indexes (KIND 'i') or tables ('r')
# in database postgres (fractam_stats)
sub ft_compressed_leaves
{
	my ($node, $kind) = @_;
	my $am = $kind eq 'i' ? 'fractam_index' : 'fractam';
	return $node->safe_psql('postgres', qq{
		SELECT coalesce(sum(s.compressed_leaf_pages), 0) FROM pg_class c
		JOIN pg_am a ON a.oid = c.relam, LATERAL fractam_stats(c.oid) s
		WHERE a.amname = '$am' AND c.relkind = '$kind'});
}

# fractam_verify every fractam index (of permanent and unlogged relations);
# returns the list of "index: error" strings (empty when all verify).
sub ft_verify_all
{
	my ($node, $db, $persistence) = @_;
	$db //= 'postgres';
	my @bad;
	for my $idx (ft_fractam_indexes($node, $db, $persistence))
	{
		my ($ret, $out, $err) =
		  $node->psql($db, "SELECT fractam_verify('$idx')", timeout => 600);
		push @bad, "$idx: $err" if $ret != 0;
	}
	return @bad;
}

# Does the plan of QUERY (under SETTINGS, a string of SET commands) scan the
# index INDEX?  Returns the plan text when it does, undef otherwise.
sub ft_plan_uses
{
	my ($node, $db, $settings, $query, $index) = @_;
	my $plan = $node->safe_psql($db, "$settings EXPLAIN (COSTS OFF) $query");
	return $plan =~ /\b(?:Index Scan|Index Only Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) \Q$index\E\b/
	  ? $plan : undef;
}

my $force_index = 'SET enable_seqscan = off; SET enable_bitmapscan = off; '
  . 'SET enable_sort = off; SET max_parallel_workers_per_gather = 0; ';
my $force_seq = 'SET enable_seqscan = on; SET enable_indexscan = off; '
  . 'SET enable_indexonlyscan = off; SET enable_bitmapscan = off; '
  . 'SET max_parallel_workers_per_gather = 0; ';

# Compare, inside one REPEATABLE READ snapshot, what an index scan of INDEX on
# TABLE (rows with COL >= LOWER, in index order) returns with what a
# sequential scan returns.  ID is an expression identifying a row.  Returns
# (ok, description).
sub ft_index_matches_heap
{
	my ($node, $db, $table, $index, $col, $lower, $id) = @_;
	$id //= 'id';
	my $q = "SELECT $id AS rid, $col AS key FROM $table WHERE $col >= $lower ORDER BY $col";
	my $digest = "SELECT count(*) || ' ' || coalesce(md5(string_agg(rid::text || '=' || key::text, ',' ORDER BY rid::text COLLATE \"C\", key::text COLLATE \"C\")), '-') FROM ($q OFFSET 0) s";
	my $plan = ft_plan_uses($node, $db, $force_index, $q, $index);
	return (0, "plan does not use $index:\n"
		  . $node->safe_psql($db, "$force_index EXPLAIN (COSTS OFF) $q"))
	  unless defined $plan;
	my $out = $node->safe_psql($db, qq{
		BEGIN ISOLATION LEVEL REPEATABLE READ;
		$force_index
		SELECT 'idx ' || ($digest);
		$force_seq
		SELECT 'seq ' || ($digest);
		COMMIT;});
	my ($i) = $out =~ /^idx (.*)$/m;
	my ($s) = $out =~ /^seq (.*)$/m;
	return (defined $i && defined $s && $i eq $s,
		"$table via $index: index [" . ($i // '?') . "] heap [" . ($s // '?') . "]");
}

# Lines of a server log that show a crash, a failed assertion or a replay
# inconsistency (from OFFSET on).
sub ft_log_problems
{
	my ($node, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset // 0);
	return grep {
		/inconsistent page found|PANIC|TRAP:|terminated by signal|was terminated by|could not read block|invalid page|incorrect checksum|unexpected zero page/
	} split /\n/, $log;
}

1;

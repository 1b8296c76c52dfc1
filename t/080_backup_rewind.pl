# Backups, point-in-time recovery, pg_rewind and prepared transactions
# across a crash, with fractam tables and indexes.
#
# 1. pg_basebackup of a primary under DML, restored with WAL archiving to a
#    named restore point: the restored node holds exactly the rows of that
#    point, and its fractam tables and indexes verify and agree with
#    sequential scans.
# 2. Two-phase commit across kill -9: prepared transactions that inserted,
#    updated, deleted and row-locked fractam rows survive the crash with
#    their locks; COMMIT PREPARED and ROLLBACK PREPARED then decide them.
# 3. pg_rewind: a standby is promoted, both sides change the tables, the old
#    primary is rewound onto the new one and follows it as a standby; it
#    then answers like the new primary.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $content = q{SELECT count(*), coalesce(sum(id), 0),
	md5(coalesce(string_agg(id || ':' || v || ':' || n, ',' ORDER BY id), ''))
	FROM t};
my $by_index = q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*), coalesce(sum(id), 0),
	md5(coalesce(string_agg(id || ':' || v || ':' || n, ',' ORDER BY id), ''))
	FROM t WHERE id > 0 AND n >= 0};

sub check_node
{
	my ($node, $what, $expect) = @_;
	is($node->safe_psql('postgres', $content), $expect, "$what: the rows");
	is($node->safe_psql('postgres', $by_index), $expect,
		"$what: the same rows through the indexes");
	is($node->safe_psql('postgres',
		q{SELECT fractam_verify('t'), fractam_verify('t_n')}),
		'|', "$what: fractam_verify passes");
}

# --- 1. base backup and PITR to a restore point -----------------------------

my $primary = ft_node('br_primary');
$primary->init(has_archiving => 1, allows_streaming => 1);
# wal_log_hints for pg_rewind; wal_keep_size keeps the WAL it reads back
$primary->ft_configure('wal_log_hints = on', 'wal_keep_size = 512MB');
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION fractam;
	CREATE TABLE t (id int PRIMARY KEY, v text, n int) USING fractam;
	CREATE INDEX t_n ON t USING fractam (n);
	CREATE INDEX t_v ON t USING btree (v);
	INSERT INTO t SELECT g, md5(g::text), g % 100 FROM generate_series(1, 20000) g;});

$primary->backup('base');

# changes after the backup, up to the restore point, and beyond it
$primary->safe_psql('postgres', q{
	UPDATE t SET v = v || '+', n = n + 1 WHERE id % 5 = 0;
	DELETE FROM t WHERE id % 7 = 0;
	INSERT INTO t SELECT g, 'new ' || g, g % 100 FROM generate_series(20001, 25000) g;
	VACUUM t;});
my $at_point = $primary->safe_psql('postgres', $content);
$primary->safe_psql('postgres', q{SELECT pg_create_restore_point('fractam_point')});
$primary->safe_psql('postgres', q{
	DELETE FROM t WHERE id > 24000;
	UPDATE t SET n = n + 1000 WHERE id < 100;
	INSERT INTO t VALUES (99999, 'after the point', 1);});
my $at_end = $primary->safe_psql('postgres', $content);
isnt($at_end, $at_point, 'the primary changed after the restore point');
my $lastwal = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres',
	qq{SELECT '$lastwal' <= last_archived_wal FROM pg_stat_archiver})
  or die 'WAL was not archived';

my $pitr = ft_node('br_pitr');
$pitr->init_from_backup($primary, 'base', has_restoring => 1, standby => 0);
$pitr->ft_configure;
# (archive_mode off: its new timeline must not enter the primary's archive)
$pitr->append_conf('postgresql.conf', qq{
recovery_target_name = 'fractam_point'
recovery_target_action = 'promote'
archive_mode = off
});
$pitr->start;
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'PITR did not finish';
check_node($pitr, 'PITR to the restore point', $at_point);
$pitr->safe_psql('postgres', q{INSERT INTO t VALUES (123456, 'writable', 5)});
is($pitr->safe_psql('postgres', q{SELECT v FROM t WHERE id = 123456}), 'writable',
	'the recovered node takes writes');
$pitr->stop;

# a plain restore of the base backup with all archived WAL reaches the end
my $full = ft_node('br_full');
$full->init_from_backup($primary, 'base', has_restoring => 1, standby => 0);
$full->ft_configure('archive_mode = off');
$full->start;
$full->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'archive recovery did not finish';
check_node($full, 'archive recovery to the end', $at_end);
$full->stop;

# --- 2. prepared transactions across kill -9 ---------------------------------

$primary->append_conf('postgresql.conf', "max_prepared_transactions = 5\n");
$primary->restart;
$primary->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO t VALUES (500001, 'prepared insert', 1);
	UPDATE t SET v = 'prepared update' WHERE id = 1;
	DELETE FROM t WHERE id = 2;
	PREPARE TRANSACTION 'to_commit';
	BEGIN;
	INSERT INTO t VALUES (500002, 'prepared, rolled back', 1);
	UPDATE t SET v = 'rolled back' WHERE id = 3;
	DELETE FROM t WHERE id = 4;
	PREPARE TRANSACTION 'to_rollback';
	BEGIN;
	SELECT id FROM t WHERE id = 6 FOR UPDATE;
	SELECT id FROM t WHERE id = 8 FOR KEY SHARE;
	PREPARE TRANSACTION 'locker';});
ft_crash($primary);
$primary->start;
is($primary->safe_psql('postgres', q{SELECT string_agg(gid, ',' ORDER BY gid) FROM pg_prepared_xacts}),
	'locker,to_commit,to_rollback', 'the prepared transactions survive the crash');
is($primary->safe_psql('postgres', q{SELECT count(*) FROM t WHERE id IN (500001, 500002)}),
	'0', 'their inserts are not visible yet');
my ($ret, $out, $err) = $primary->psql('postgres', q{
	SET lock_timeout = '200ms';
	UPDATE t SET v = 'blocked' WHERE id = 1});
like($err, qr/lock timeout/, 'a row the prepared transaction updated stays locked');
($ret, $out, $err) = $primary->psql('postgres', q{
	SET lock_timeout = '200ms';
	SELECT id FROM t WHERE id = 6 FOR SHARE});
like($err, qr/lock timeout/, 'its FOR UPDATE lock is kept');
is($primary->safe_psql('postgres', q{SET lock_timeout = '2s'; SELECT id FROM t WHERE id = 8 FOR KEY SHARE}),
	'8', 'its FOR KEY SHARE lock lets another FOR KEY SHARE through');
$primary->safe_psql('postgres', q{
	COMMIT PREPARED 'to_commit';
	ROLLBACK PREPARED 'to_rollback';
	COMMIT PREPARED 'locker';});
is($primary->safe_psql('postgres', q{
	SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM t
	WHERE id IN (1, 2, 3, 4, 500001, 500002)}),
	'1=prepared update,3=' . $primary->safe_psql('postgres', q{SELECT md5('3')})
	  . ',4=' . $primary->safe_psql('postgres', q{SELECT md5('4')})
	  . ',500001=prepared insert',
	'COMMIT PREPARED and ROLLBACK PREPARED decide them after the crash');
is($primary->safe_psql('postgres', q{UPDATE t SET v = 'free' WHERE id = 6 RETURNING v}),
	'free', 'the locks are gone');
check_node($primary, 'after the prepared transactions', $primary->safe_psql('postgres', $content));

# --- 3. pg_rewind --------------------------------------------------------------

$primary->backup('for_standby');
my $standby = ft_node('br_standby');
$standby->init_from_backup($primary, 'for_standby', has_streaming => 1);
$standby->ft_configure;
$standby->start;
$primary->safe_psql('postgres', q{INSERT INTO t VALUES (600000, 'before the split', 6)});
$primary->wait_for_catchup($standby);

$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion failed';
# the new primary and the old one diverge
$standby->safe_psql('postgres', q{
	INSERT INTO t SELECT g, 'new timeline ' || g, g % 100 FROM generate_series(700000, 702000) g;
	UPDATE t SET v = 'new timeline' WHERE id BETWEEN 10 AND 200;
	DELETE FROM t WHERE id BETWEEN 1000 AND 1500;
	CHECKPOINT;});
$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT g, 'lost ' || g, g % 100 FROM generate_series(800000, 803000) g;
	UPDATE t SET v = 'lost' WHERE id BETWEEN 5000 AND 6000;
	DELETE FROM t WHERE id BETWEEN 7000 AND 7500;
	VACUUM t;
	CHECKPOINT;});
$primary->stop;

my $connstr = 'port=' . $standby->port . ' host=' . $standby->host . ' dbname=postgres';
# pg_rewind copies the source's configuration files: keep the target's
my $conf = $primary->data_dir . '/postgresql.conf';
my $saved_conf = slurp_file($conf);
command_ok([ 'pg_rewind', '--target-pgdata', $primary->data_dir,
		'--source-server', $connstr, '--no-sync' ],
	'pg_rewind rewinds the old primary onto the new timeline');
open(my $cfh, '>', $conf) or die "cannot write $conf: $!";
print $cfh $saved_conf;
close $cfh;
$primary->enable_streaming($standby);
$primary->start;
$standby->safe_psql('postgres', q{INSERT INTO t VALUES (900000, 'after the rewind', 9)});
$standby->wait_for_catchup($primary);
my $new_content = $standby->safe_psql('postgres', $content);
is($primary->safe_psql('postgres', q{SELECT count(*) FROM t WHERE v LIKE 'lost%'}), '0',
	'the rewound node has none of its lost changes');
check_node($primary, 'the rewound node, streaming from the new primary', $new_content);
check_node($standby, 'the new primary', $new_content);

is(join("\n", ft_log_problems($primary)), '', 'old primary log: no PANIC or crash');
is(join("\n", ft_log_problems($standby)), '', 'new primary log: no PANIC or crash');
$primary->stop;
$standby->stop;
done_testing();

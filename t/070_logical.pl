# Logical decoding and logical replication of fractam tables.
#
# 1. test_decoding: the same statements on a heap table and on a fractam
#    table (single and multi-row INSERT, INSERT ... SELECT, COPY (also of a
#    TOAST value), CTAS, UPDATE of key and non-key columns, DELETE,
#    savepoints rolled back, ON CONFLICT DO UPDATE / DO NOTHING, MERGE,
#    TOAST values changed and kept, REPLICA IDENTITY FULL, NOTHING and
#    USING INDEX, a table without a key, partitions and an UPDATE that moves
#    a row between them, a transaction larger than logical_decoding_work_mem
#    (spilled to disk), a prepared transaction, TRUNCATE, and rewrites that
#    must decode to nothing) must decode to the same changes, table names
#    aside; so must an aborted speculative insertion of a TOAST value.
# 2. pgoutput: a publication FOR ALL TABLES on the fractam primary, a heap
#    subscriber; concurrent INSERT / ON CONFLICT / UPDATE (also of the key)
#    / DELETE from pgbench clients; after catch-up the subscriber holds the
#    same rows.  A fractam table created after the subscription is picked
#    up by REFRESH PUBLICATION with no DDL of ours involved.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pub = ft_node('logical_pub');
$pub->init(allows_streaming => 'logical');
# a small logical_decoding_work_mem: large transactions spill to disk
$pub->ft_configure('max_prepared_transactions = 5',
	'wal_consistency_checking = fractam',
	'logical_decoding_work_mem = 64kB');
$pub->start;
$pub->safe_psql('postgres', 'CREATE EXTENSION fractam');

# --- 1. test_decoding: fractam decodes like heap ---------------------------

my $copyfile = $pub->basedir . '/rows.copy';
open(my $fh, '>', $copyfile) or die "cannot write $copyfile: $!";
print $fh join("\t", $_, "copied $_", $_ % 5) . "\n" for (300 .. 340);
print $fh join("\t", 341, join('', map { sprintf('%08x', $_ * 2654435761 % 4294967296) } 1 .. 1000), 1) . "\n";
close $fh;

sub decoding_script
{
	my ($t, $am) = @_;
	return qq{
	CREATE TABLE $t (id int PRIMARY KEY, v text, n int) USING $am;
	CREATE INDEX ${t}_n ON $t (n);
	ALTER TABLE $t ALTER COLUMN v SET STORAGE EXTERNAL;
	CREATE TABLE ${t}_full (id int, v text) USING $am;
	ALTER TABLE ${t}_full REPLICA IDENTITY FULL;
	CREATE TABLE ${t}_nokey (id int, v text) USING $am;
	CREATE TABLE ${t}_nothing (id int PRIMARY KEY, v text) USING $am;
	ALTER TABLE ${t}_nothing REPLICA IDENTITY NOTHING;
	CREATE TABLE ${t}_byidx (a int NOT NULL, b int NOT NULL, v text) USING $am;
	CREATE UNIQUE INDEX ${t}_byidx_ab ON ${t}_byidx (a, b);
	ALTER TABLE ${t}_byidx REPLICA IDENTITY USING INDEX ${t}_byidx_ab;
	CREATE TABLE ${t}_parts (id int, day int, v text) PARTITION BY RANGE (day);
	CREATE TABLE ${t}_p1 PARTITION OF ${t}_parts FOR VALUES FROM (1) TO (10) USING $am;
	CREATE TABLE ${t}_p2 PARTITION OF ${t}_parts FOR VALUES FROM (10) TO (20) USING $am;
	ALTER TABLE ${t}_p1 REPLICA IDENTITY FULL;
	ALTER TABLE ${t}_p2 REPLICA IDENTITY FULL;
	SELECT 'start' FROM pg_create_logical_replication_slot('slot_$t', 'test_decoding');
	INSERT INTO $t VALUES (1, 'one', 1);
	INSERT INTO $t VALUES (2, 'two', 2), (3, 'three', 3), (4, 'four', 4);
	INSERT INTO $t SELECT g, 'gen ' || g, g % 7 FROM generate_series(10, 60) g;
	COPY $t FROM '$copyfile';
	UPDATE $t SET v = 'two updated' WHERE id = 2;
	UPDATE $t SET id = 5 WHERE id = 4;
	UPDATE $t SET n = n + 100 WHERE id BETWEEN 10 AND 15;
	DELETE FROM $t WHERE id = 3;
	DELETE FROM $t WHERE id BETWEEN 20 AND 25;
	BEGIN;
	INSERT INTO $t VALUES (100, 'kept', 0);
	SAVEPOINT a;
	INSERT INTO $t VALUES (101, 'rolled back', 0);
	UPDATE $t SET v = 'rolled back' WHERE id = 1;
	ROLLBACK TO a;
	SAVEPOINT b;
	UPDATE $t SET v = 'in a subxact' WHERE id = 1;
	RELEASE b;
	DELETE FROM $t WHERE id = 100;
	COMMIT;
	BEGIN;
	INSERT INTO $t VALUES (102, 'aborted', 0);
	ROLLBACK;
	INSERT INTO $t VALUES (1, 'conflict', 9) ON CONFLICT (id) DO UPDATE SET v = excluded.v;
	INSERT INTO $t VALUES (200, 'fresh', 9) ON CONFLICT (id) DO UPDATE SET v = excluded.v;
	INSERT INTO $t VALUES (200, 'ignored', 9) ON CONFLICT (id) DO NOTHING;
	INSERT INTO $t VALUES (201, 'nothing to do', 9) ON CONFLICT (id) DO NOTHING;
	INSERT INTO $t SELECT 500, string_agg(md5(g::text), '') FROM generate_series(1, 200) g;
	UPDATE $t SET n = 1 WHERE id = 500;
	UPDATE $t SET v = v || 'x' WHERE id = 500;
	UPDATE $t SET id = 501 WHERE id = 500;
	DELETE FROM $t WHERE id = 501;
	INSERT INTO ${t}_full VALUES (1, 'a'), (2, repeat('b', 5000));
	UPDATE ${t}_full SET v = 'aa' WHERE id = 1;
	DELETE FROM ${t}_full WHERE id = 2;
	INSERT INTO ${t}_nokey VALUES (1, 'a');
	UPDATE ${t}_nokey SET v = 'b';
	DELETE FROM ${t}_nokey;
	INSERT INTO ${t}_byidx VALUES (1, 1, 'a'), (1, 2, 'b');
	UPDATE ${t}_byidx SET v = 'aa' WHERE b = 1;
	UPDATE ${t}_byidx SET b = 3 WHERE b = 2;
	DELETE FROM ${t}_byidx WHERE b = 1;
	INSERT INTO ${t}_parts VALUES (1, 1, 'p1'), (2, 12, 'p2');
	UPDATE ${t}_parts SET day = 15 WHERE id = 1;
	UPDATE ${t}_parts SET v = 'moved back', day = 2 WHERE id = 2;
	DELETE FROM ${t}_parts WHERE id = 1;
	MERGE INTO $t USING (VALUES (1, 'merged'), (2, 'merged'), (800, 'merged new')) AS m(id, v)
	  ON $t.id = m.id
	  WHEN MATCHED AND m.id = 1 THEN UPDATE SET v = m.v
	  WHEN MATCHED THEN DELETE
	  WHEN NOT MATCHED THEN INSERT VALUES (m.id, m.v, 8);
	BEGIN;
	INSERT INTO $t SELECT g, repeat('big transaction ', 20), g % 3 FROM generate_series(1000, 3000) g;
	UPDATE $t SET n = n + 1 WHERE id BETWEEN 1000 AND 1500;
	DELETE FROM $t WHERE id BETWEEN 2000 AND 2500;
	COMMIT;
	INSERT INTO ${t}_nothing VALUES (1, 'a');
	UPDATE ${t}_nothing SET id = 2;
	DELETE FROM ${t}_nothing;
	BEGIN;
	INSERT INTO $t VALUES (600, 'prepared', 6);
	PREPARE TRANSACTION 'p_$t';
	COMMIT PREPARED 'p_$t';
	CREATE TABLE ${t}_ctas USING $am AS SELECT id, v FROM $t WHERE id < 5 ORDER BY id;
	VACUUM FULL $t;
	ALTER TABLE $t ALTER COLUMN n TYPE bigint;
	INSERT INTO $t VALUES (700, 'after the rewrite', 7);
	TRUNCATE ${t}_nokey;
	};
}

sub decoded
{
	my ($t) = @_;
	my $out = $pub->safe_psql('postgres', qq{
		SELECT data FROM pg_logical_slot_get_changes('slot_$t', NULL, NULL,
			'include-xids', '0', 'skip-empty-xacts', '1')});
	$pub->safe_psql('postgres', "SELECT pg_drop_replication_slot('slot_$t')");
	$out =~ s{\b$t(_\w+)?\b}{"T" . ($1 // "")}ge;
	return $out;
}

$pub->safe_psql('postgres', decoding_script('dh', 'heap'));
my $heap_out = decoded('dh');
$pub->safe_psql('postgres', decoding_script('df', 'fractam'));
my $fractam_out = decoded('df');
like($heap_out, qr/unchanged-toast-datum/, 'the script reaches an unchanged TOAST value on heap');
like($heap_out, qr/old-key/, 'and an old key');
my @lines = split /\n/, $heap_out;
cmp_ok(scalar(@lines), '>', 150, 'heap decodes the script into many changes');
is($fractam_out, $heap_out, 'a fractam table decodes exactly like a heap table');
is($pub->safe_psql('postgres', q{
	SELECT (SELECT md5(string_agg(id || v || n, ',' ORDER BY id)) FROM dh) =
	       (SELECT md5(string_agg(id || v || n, ',' ORDER BY id)) FROM df)}),
	't', 'and holds the same rows');

# --- an aborted speculative insertion of a row with TOAST values ------------
# INSERT ... ON CONFLICT inserts the row, then finds the conflict only when it
# inserts its index entry (another session committed the key meanwhile): the
# insertion is aborted and retried.  Its TOAST chunks were decoded already;
# the changes after it in the same transaction (a row of a table without a
# TOAST table, a DELETE) must decode as on heap.  The index expression blocks
# its second evaluation in session B (the index insertion; the first is the
# conflict pre-check) on an advisory lock that the test holds.
$pub->safe_psql('postgres', q{
	CREATE FUNCTION spec_gate(k int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$
	DECLARE
		n int := coalesce(nullif(current_setting('spec.calls', true), ''), '-1')::int;
	BEGIN
		IF n >= 0 THEN
			PERFORM set_config('spec.calls', (n + 1)::text, false);
			IF n + 1 = 2 THEN
				PERFORM pg_advisory_lock(4242);
				PERFORM pg_advisory_unlock(4242);
			END IF;
		END IF;
		RETURN k;
	END $$});

sub spec_abort_decoded
{
	my ($t, $am) = @_;
	$pub->safe_psql('postgres', qq{
		CREATE TABLE $t (k int, v text) USING $am;
		ALTER TABLE $t ALTER COLUMN v SET STORAGE EXTERNAL;
		CREATE UNIQUE INDEX ${t}_k ON $t (spec_gate(k));
		CREATE TABLE ${t}_ints (i int) USING $am;
		INSERT INTO $t VALUES (5, 'five');
		SELECT 'start' FROM pg_create_logical_replication_slot('slot_$t', 'test_decoding');});
	my $ctl = $pub->background_psql('postgres', on_error_stop => 1);
	$ctl->query_safe('SELECT pg_advisory_lock(4242)');
	my $b = $pub->background_psql('postgres', on_error_stop => 1);
	$b->query_safe('SET spec.calls = 0');
	$b->query_safe('BEGIN');
	$b->query_until(qr/inserting/, qq{\\echo inserting
		INSERT INTO $t SELECT 1, string_agg(md5(g::text), '') FROM generate_series(1, 300) g
		  ON CONFLICT (spec_gate(k)) DO NOTHING;
	});
	$pub->poll_query_until('postgres', q{
		SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted})
	  or die "session B did not block in its index insertion";
	$pub->safe_psql('postgres', "INSERT INTO $t VALUES (1, 'winner')");
	$ctl->query_safe('SELECT pg_advisory_unlock(4242)');
	$b->query_safe('RESET spec.calls');
	$b->query_safe("INSERT INTO ${t}_ints VALUES (7)");
	$b->query_safe("DELETE FROM $t WHERE k = 5");
	$b->query_safe("UPDATE $t SET v = 'updated' WHERE k = 1");
	$b->query_safe('COMMIT');
	$b->quit;
	$ctl->quit;
	return decoded($t);
}

my $spec_heap = spec_abort_decoded('sh', 'heap');
my $spec_fractam = spec_abort_decoded('sf', 'fractam');
like($spec_heap, qr/T_ints: INSERT: i\[integer\]:7/, 'heap decodes the changes after an aborted speculative insertion');
unlike($spec_heap, qr/string_agg|k\[integer\]:1 v\[text\]:'c4ca/, 'and not the aborted row');
is($spec_fractam, $spec_heap,
	'after an aborted speculative insertion with TOAST values, fractam decodes like heap');

# --- 2. pgoutput to a heap subscriber under concurrent DML -----------------

# (a database of its own: FOR ALL TABLES would take the tables above too)
$pub->safe_psql('postgres', 'CREATE DATABASE rep');
$pub->safe_psql('rep', 'CREATE EXTENSION fractam');
my $ddl = q{
	CREATE TABLE q (id int PRIMARY KEY, v text, n int) %s;
	CREATE INDEX q_n ON q %s (n);
	CREATE TABLE q_full (id int, v text) %s;
};
$pub->safe_psql('rep',
	sprintf($ddl, 'USING fractam', 'USING fractam', 'USING fractam')
	  . q{ALTER TABLE q_full REPLICA IDENTITY FULL;
	ALTER TABLE q ALTER COLUMN v SET STORAGE EXTERNAL;
	CREATE SEQUENCE q_newid START 1000000;
	INSERT INTO q SELECT g, md5(g::text), g % 10 FROM generate_series(1, 1000) g;
	INSERT INTO q_full SELECT g, md5(g::text) FROM generate_series(1, 200) g;
	CREATE PUBLICATION allpub FOR ALL TABLES;});

my $sub = ft_node('logical_sub');
$sub->init;
$sub->ft_configure;
$sub->start;
$sub->safe_psql('postgres', 'CREATE DATABASE rep');
$sub->safe_psql('rep', sprintf($ddl, '', '', ''));
my $connstr = 'port=' . $pub->port . ' host=' . $pub->host . ' dbname=rep';
$sub->safe_psql('rep',
	"CREATE SUBSCRIPTION allsub CONNECTION '$connstr' PUBLICATION allpub");
$sub->wait_for_subscription_sync($pub, 'allsub', 'rep');

my $script = $pub->basedir . '/dml.sql';
open($fh, '>', $script) or die "cannot write $script: $!";
print $fh q{
\set id random(1, 1500)
\set op random(1, 12)
INSERT INTO q VALUES (:id, md5(:op::text), :op) ON CONFLICT (id) DO UPDATE SET v = excluded.v || 'u', n = q.n + 1;
UPDATE q SET n = n + 1 WHERE id = :id + 1;
UPDATE q SET v = CASE WHEN :op = 1 THEN (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 150) g) ELSE v END, n = n - 1 WHERE id = :id + 2;
UPDATE q SET id = nextval('q_newid') WHERE id = :id + 3 AND :op = 2;
DELETE FROM q WHERE id = :id + 5 AND :op <= 3;
BEGIN;
UPDATE q_full SET v = v || :op WHERE id = :id % 200 + 1;
SAVEPOINT s;
DELETE FROM q_full WHERE id = (:id + 1) % 200 + 1;
ROLLBACK TO s;
INSERT INTO q_full VALUES (:id % 200 + 1, 'dup');
COMMIT;
};
close $fh;
my ($out, $err) = ('', '');
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '8', '--max-tries=20',
		'-f', $script, '-h', $pub->host, '-p', $pub->port, 'rep' ],
	'>', \$out, '2>', \$err);
$bench->finish;
is($?, 0, 'the concurrent DML ran') or diag($err);
like($out, qr/number of transactions actually processed: [1-9]/, 'pgbench committed transactions');
note($out);

$pub->wait_for_catchup('allsub');
for my $q ('SELECT count(*), md5(string_agg(id || v || n, \',\' ORDER BY id)) FROM q',
	'SELECT count(*), md5(string_agg(id || v, \',\' ORDER BY id, v)) FROM q_full')
{
	is($sub->safe_psql('rep', $q), $pub->safe_psql('rep', $q),
		"the heap subscriber holds the publisher's rows: $q");
}

# a fractam table created later: FOR ALL TABLES publishes it with no DDL of ours
$pub->safe_psql('rep', q{CREATE TABLE later (id int PRIMARY KEY, v text) USING fractam});
$sub->safe_psql('rep', q{CREATE TABLE later (id int PRIMARY KEY, v text)});
$sub->safe_psql('rep', 'ALTER SUBSCRIPTION allsub REFRESH PUBLICATION');
$sub->wait_for_subscription_sync($pub, 'allsub', 'rep');
$pub->safe_psql('rep', q{
	INSERT INTO later SELECT g, 'later ' || g FROM generate_series(1, 100) g;
	UPDATE later SET v = v || '!' WHERE id % 3 = 0;
	DELETE FROM later WHERE id % 10 = 0});
$pub->wait_for_catchup('allsub');
is($sub->safe_psql('rep', q{SELECT count(*), md5(string_agg(v, ',' ORDER BY id)) FROM later}),
	$pub->safe_psql('rep', q{SELECT count(*), md5(string_agg(v, ',' ORDER BY id)) FROM later}),
	'a fractam table created after the publication replicates');

is($pub->safe_psql('rep', q{SELECT fractam_verify('q'), fractam_verify('q_n')}), '|',
	'verify passes on the published table');
is(join("\n", ft_log_problems($pub)), '', 'publisher log: no inconsistent page, PANIC or crash');

$sub->stop;
$pub->stop;
done_testing();

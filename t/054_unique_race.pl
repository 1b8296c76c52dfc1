# Concurrent inserters of the same keys into fractam UNIQUE indexes, on a
# heap table and on a fractam table.  An insert that decides in its own
# descent holds its key's lock stripe shared and relies on the leaf's lock;
# one that must search (entries buffered above the leaf, or the key's
# entries seen again after a full leaf) holds it exclusively.  pgbench
# clients insert, delete, update and upsert keys from a small key space, with
# a long INCLUDE column so that leaves fill and split often, half of the
# transactions with fractam.direct_apply off (their inserts search, then
# buffer), so both kinds race on the same keys.  Afterwards no key may be
# stored twice (a sequential scan), the index must return what the table
# holds, and fractam_verify must pass.
use strict;
use warnings FATAL => qw(all);
use FindBin;
use lib "$FindBin::RealBin/../test/perl";
use FractamTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('uniquerace');
$node->init;
# a search sleeps 2 ms before it inserts: a key lock that let another
# inserter of the key in meanwhile would store the key twice at once
$node->ft_configure('autovacuum = off', 'max_connections = 30',
	'fractam.debug_unique_delay = 2000');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION fractam; CREATE SEQUENCE viol');

for my $am ('heap', 'fractam')
{
	my $t = "u_$am";
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t (k int NOT NULL, v int, pad text) USING $am;
		CREATE UNIQUE INDEX ${t}_k ON $t USING fractam (k) INCLUDE (pad)
			WITH (fanout = 4);
		CREATE FUNCTION ${t}_op(ukey int, op int) RETURNS void LANGUAGE plpgsql AS \$\$
		BEGIN
			IF op <= 5 THEN
				INSERT INTO $t VALUES (ukey, op, (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 20)));
			ELSIF op <= 7 THEN
				-- one row: a key stored twice would stay so
				DELETE FROM $t
				WHERE ctid = (SELECT ctid FROM $t WHERE k = ukey LIMIT 1);
			ELSIF op = 8 THEN
				UPDATE $t SET k = ukey + 1 WHERE k = ukey;
			ELSE
				INSERT INTO $t VALUES (ukey, op, (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 20)))
					ON CONFLICT (k) DO UPDATE SET v = excluded.v;
			END IF;
		EXCEPTION WHEN unique_violation THEN
			PERFORM nextval('viol');
		END \$\$;});

	my $script = $node->basedir . "/$t.sql";
	open my $fh, '>', $script or die;
	print $fh <<"EOS";
\\set k random(1, 50)
\\set r random(1, 10)
\\set d random(0, 1)
SELECT set_config('fractam.direct_apply', CASE WHEN :d = 1 THEN 'on' ELSE 'off' END, false);
SELECT ${t}_op(:k, :r);
EOS
	close $fh;

	my $viol0 = $node->safe_psql('postgres',
		"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM viol");
	my ($out, $err) = ('', '');
	my $bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '8', '-j', '2', '-T', '15', '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$out, '2>', \$err);
	$bench->finish;
	is($?, 0, "$am table: the concurrent inserts ran") or diag($err);
	my ($ntx) = $out =~ /number of transactions actually processed: (\d+)/;
	cmp_ok($ntx // 0, '>', 2000, "$am table: pgbench ran " . ($ntx // 0) . ' transactions');
	my $viol = $node->safe_psql('postgres', 'SELECT last_value FROM viol') - $viol0;
	cmp_ok($viol, '>', 0, "$am table: $viol inserts of a stored key were refused");

	is($node->safe_psql('postgres', qq{
		SET enable_indexscan = off; SET enable_indexonlyscan = off;
		SET enable_bitmapscan = off;
		SELECT count(*) FROM (SELECT k FROM $t GROUP BY k HAVING count(*) > 1) d}),
		'0', "$am table: no key is stored twice");
	my ($ok, $desc) = ft_index_matches_heap($node, 'postgres', $t, "${t}_k",
		'k', 0, 'ctid');
	ok($ok, "$am table: index scan and sequential scan agree") or diag($desc);
	is(join("\n", ft_verify_all($node)), '', "$am table: fractam_verify passes");
}

# The window of an insert that decided in its descent, found its leaf full
# and starts over, made deterministic: A checks key 505 (absent), finds the
# leaf full and sleeps 3 s before it starts over; meanwhile B inserts 505
# into the same full leaf and commits.  A's retry must see B's entry (and
# fail), not trust its first check: the stripe A holds is shared, so it
# does not keep B out.  Entries take 1.5 kB: the leaf of keys 500..510
# holds four after the ascending inserts, five with 501, and then is full.
my $pad = "(SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 45))";
$node->safe_psql('postgres', qq{
	CREATE TABLE ufull (k int NOT NULL, pad text);
	CREATE UNIQUE INDEX ufull_k ON ufull USING fractam (k) INCLUDE (pad)
		WITH (fillfactor = 100);
	INSERT INTO ufull SELECT g * 10, $pad FROM generate_series(1, 100) g;
	INSERT INTO ufull VALUES (501, $pad);});
my ($aout, $aerr) = ('', '');
my $started = time;
my $a = IPC::Run::start(
	[ 'psql', '-X', '-h', $node->host, '-p', $node->port, '-d', 'postgres',
		'-c', "SET fractam.debug_unique_delay = 3000000; INSERT INTO ufull VALUES (505, $pad)" ],
	'>', \$aout, '2>', \$aerr);
sleep 1;
my ($bret, $bout, $berr) = $node->psql('postgres',
	"SET fractam.debug_unique_delay = 0; INSERT INTO ufull VALUES (505, $pad)");
$a->finish;
my $aret = $?;
my $took = time - $started;
note("A: $aret $aerr; B: $bret $berr; A took $took s");
cmp_ok($took, '>=', 3, 'the first inserter slept before starting over (its leaf was full)');
is($node->safe_psql('postgres', q{
	SET enable_indexscan = off; SET enable_indexonlyscan = off;
	SET enable_bitmapscan = off;
	SELECT count(*) FROM ufull WHERE k = 505}), '1',
	'one of two inserters of a key into a full leaf is refused');
ok(($aret != 0) != ($bret != 0), 'exactly one of the inserts failed');
like($aret != 0 ? $aerr : $berr, qr/duplicate key value violates unique constraint "ufull_k"/,
	'the other was a unique violation');
is(join("\n", ft_verify_all($node)), '', 'fractam_verify passes');

is(join("\n", ft_log_problems($node)), '', 'no crash or failed check in the log');
$node->stop;
done_testing();

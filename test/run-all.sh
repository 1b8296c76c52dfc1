#!/usr/bin/env bash
# fractam: install prerequisites, build (warnings are errors), install, and run
# the whole test suite:
#
#   1. pg_regress (sql/, expected/) and isolation (specs/) against a scratch
#      primary with wal_consistency_checking = 'fractam', streaming to a hot
#      standby that replays (and so checks) every fractam WAL record;
#   2. the standby check: the standby is alive, caught up, never logged an
#      inconsistent page, and its fractam indexes verify and answer like the
#      primary's;
#   3. the TAP tests (t/*.pl: crash recovery, standby, differential, ...);
#   4. PostgreSQL's own regression and isolation suites with fractam as the
#      default table access method, judged against the same run on heap
#      (test/pg-suite.sh; the suites come from Debian's source package).
#
# Run as root on Debian 12:   bash test/run-all.sh
# The last line of output is "N passed, N failed"; the exit status is non-zero
# on any failure.  Environment knobs (see docs/testing.md):
#   FRACTAM_TEST_SKIP_APT=1      do not run apt-get even if packages are missing
#   FRACTAM_TEST_PHASES="..."    subset of: build regress isolation standby tap pgsuite
#   FRACTAM_TAP_TESTS="t/a.pl"   only these TAP files
#   FRACTAM_TEST_KEEP=1          keep the scratch directory even on success
#   FRACTAM_TEST_DIR=/path       scratch directory (default: mktemp -d)
set -uo pipefail

# The whole script is one compound command: bash parses all of it before
# running any of it, so editing this file during a run cannot derail the run.
{

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=test/lib.sh
. "$repo/test/lib.sh"

start_time=$(date +%s)
phases=${FRACTAM_TEST_PHASES:-build regress isolation standby tap pgsuite}
has_phase() { [[ " $phases " == *" $1 "* ]]; }

npass=0
nfail=0
failed_names=()
pass() { npass=$((npass + 1)); echo "PASS: $*"; }
fail() { nfail=$((nfail + 1)); failed_names+=("$1"); echo "FAIL: $*"; }

finish() {
	local elapsed=$(($(date +%s) - start_time))
	echo
	echo "=== fractam test summary (${elapsed}s)"
	if [ "$nfail" -gt 0 ]; then
		echo "failed: ${failed_names[*]}"
		echo "logs and data kept in $work"
	fi
	echo "$npass passed, $nfail failed"
	if [ "$nfail" -gt 0 ] || [ "$npass" -eq 0 ]; then
		exit 1
	fi
	exit 0
}

# ---------------------------------------------------------------- 1. packages
packages=(postgresql-15 postgresql-server-dev-15 libzstd-dev liblz4-dev make gcc
	rsync perl libipc-run-perl coreutils findutils util-linux bzip2 xz-utils)

install_packages() {
	local missing=() p
	for p in "${packages[@]}"; do
		if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
			missing+=("$p")
		fi
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		ft_log "all required packages are installed"
		return 0
	fi
	if [ "${FRACTAM_TEST_SKIP_APT:-0}" = 1 ] || [ "$(id -u)" -ne 0 ]; then
		echo "missing packages: ${missing[*]} (not root or FRACTAM_TEST_SKIP_APT=1: not installing)"
		return 0
	fi
	ft_log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null &&
		apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null
}

if ! command -v dpkg-query >/dev/null; then
	echo "this script expects Debian 12 (dpkg/apt)"
elif ! install_packages; then
	echo "apt-get failed"
	nfail=$((nfail + 1))
	failed_names+=(packages)
	work=-
	finish
fi

# ---------------------------------------------------------------- scratch tree
if [ -n "${FRACTAM_TEST_DIR:-}" ]; then
	work=$FRACTAM_TEST_DIR
	mkdir -p "$work"
else
	work=$(mktemp -d /tmp/fractam-test.XXXXXX)
fi
chmod 755 "$work"
tree=$work/tree
logs=$work/logs
mkdir -p "$logs"

cleanup_work() {
	ft_kill_stray_postmasters "$work"
	if [ "$nfail" -eq 0 ] && [ "${FRACTAM_TEST_KEEP:-0}" != 1 ] && [ -z "${FRACTAM_TEST_DIR:-}" ]; then
		rm -rf "$work"
	fi
}
ft_on_exit cleanup_work

ft_log "scratch directory $work"
rsync -a --delete \
	--exclude=.git --exclude='/results' --exclude='/output_iso' --exclude='/tmp_check' \
	--exclude='/log' --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
	--exclude='regression.diffs' --exclude='regression.out' \
	"$repo/" "$tree/"

make_args=(PG_CONFIG="$FT_PG_CONFIG")
# run a command in the scratch tree
ft_in_tree() { cd "$tree" && "$@"; }

# ---------------------------------------------------------------- 2. build
if has_phase build; then
	ft_log "build (WERROR=1) and install"
	if ft_run make -C "$tree" -s -j2 "${make_args[@]}" WERROR=1 >"$logs/build.log" 2>&1; then
		pass build
		if ft_run make -C "$tree" -s "${make_args[@]}" install >"$logs/install.log" 2>&1; then
			pass install
		else
			tail -n 40 "$logs/install.log"
			fail install
			finish
		fi
	else
		tail -n 80 "$logs/build.log"
		fail build
		finish
	fi
fi

chown -R "$FT_OSUSER" "$work"

# Parse pg_regress / pg_isolation_regress output: count ok and failed tests;
# a test that never reported (the runner died or timed out) counts as failed.
# count_regress NAME LOG RC DIFFS EXPECTED_TEST_NAMES...
count_regress() {
	local name=$1 log=$2 rc=$3 diffs=$4 ok=0 bad=0 t line
	shift 4
	grep -E '^(test| ) *[^ ]+ +\.\.\. ' "$log" | sed 's/^/    /'
	for t in "$@"; do
		line=$(grep -E "^(test| ) *$t +\.\.\. " "$log" | head -n 1)
		if [[ "$line" =~ \.\.\.\ ok ]]; then
			ok=$((ok + 1))
		elif [ -n "$line" ] && [[ "$line" =~ \.\.\.\ (FAILED|failed) ]]; then
			bad=$((bad + 1))
			failed_names+=("$name:$t")
		else
			bad=$((bad + 1))
			failed_names+=("$name:$t(did-not-finish)")
			echo "    $t: did not finish"
		fi
	done
	npass=$((npass + ok))
	nfail=$((nfail + bad))
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		fail "$name" "(runner exited $rc without a failed test: see below)"
	fi
	if [ "$rc" -ne 0 ]; then
		tail -n 20 "$log"
	fi
	if [ -s "$diffs" ]; then
		echo "----- $diffs"
		head -n 3000 "$diffs"
		echo "----- end of $diffs"
	fi
	echo "$name: $ok passed, $bad failed"
}

# The tests the Makefile will run (same rules as its REGRESS / ISOLATION).
regress_tests=()
for f in $(cd "$tree" && ls sql/*.sql 2>/dev/null | sort); do
	t=$(basename "$f" .sql)
	case $t in fractam--*) continue ;; esac
	regress_tests+=("$t")
done
isolation_tests=()
for f in $(cd "$tree" && ls specs/*.spec 2>/dev/null | sort); do
	isolation_tests+=("$(basename "$f" .spec)")
done

# ---------------------------------------------------------------- 3. regress + isolation
primary=$work/primary
standby=$work/standby
clusters_up=0
if has_phase regress || has_phase isolation || has_phase standby; then
	# autovacuum off: an autoanalyze's snapshot, taken while a test checks
	# that dead rows were pruned or vacuumed away, holds the horizon back
	# and fails it at random (fractam_unique_prune, fractam_vacuum);
	# autovacuum has its own TAP tests (052, 053)
	ft_log "scratch primary (wal_consistency_checking = fractam, autovacuum off) and hot standby"
	pport=$(ft_pick_port "$FT_PORT_MIN") && sport=$(ft_pick_port $((pport + 1))) &&
		ft_cluster_init "$primary" "$pport" \
			"wal_consistency_checking = 'fractam'" \
			"max_slot_wal_keep_size = 16GB" \
			"autovacuum = off" &&
		ft_cluster_start "$primary" &&
		ft_standby_create "$primary" "$standby" "$sport" \
			"max_standby_streaming_delay = -1" &&
		ft_cluster_start "$standby" && clusters_up=1
	if [ "$clusters_up" -ne 1 ]; then
		fail scratch-cluster "(see above)"
		tail -n 40 "$primary/server.log" "$standby/server.log" 2>/dev/null
	fi
fi

run_installcheck() {
	# run_installcheck LOG make-args...   (as the server OS user, in the tree)
	local log=$1
	shift
	ft_run ft_in_tree ft_as_pg env PGHOST="$primary/sock" PGPORT="$pport" PGUSER="$FT_OSUSER" \
		PGISOLATIONTIMEOUT="${PGISOLATIONTIMEOUT:-60}" \
		timeout -k 30 "$phase_timeout" \
		make -s "${make_args[@]}" installcheck "$@" >"$log" 2>&1
}

if [ "$clusters_up" -eq 1 ] && has_phase regress; then
	ft_log "pg_regress"
	rm -f "$tree/regression.diffs"
	phase_timeout=${FRACTAM_REGRESS_TIMEOUT:-600} \
		run_installcheck "$logs/regress.log" ISOLATION= TAP_TESTS=
	count_regress regress "$logs/regress.log" $? "$tree/regression.diffs" "${regress_tests[@]}"
fi

if [ "$clusters_up" -eq 1 ] && has_phase isolation; then
	ft_log "isolation"
	rm -f "$tree/output_iso/regression.diffs"
	phase_timeout=${FRACTAM_ISOLATION_TIMEOUT:-300} \
		run_installcheck "$logs/isolation.log" REGRESS= TAP_TESTS=
	count_regress isolation "$logs/isolation.log" $? "$tree/output_iso/regression.diffs" "${isolation_tests[@]}"
fi

# ---------------------------------------------------------------- 4. standby check
# The standby replayed all WAL of the runs above with every fractam record
# carrying full-page images; a mismatch after redo is a FATAL "inconsistent
# page found" in the startup process, which takes the standby down.
standby_check() {
	local db dbs idx ok=1 p s
	if ! ft_cluster_alive "$standby"; then
		echo "standby is not running"
		ok=0
	elif ! ft_wait_replay "$primary" "$standby" 600; then
		ok=0
	fi
	if grep -E 'inconsistent page found|PANIC|TRAP:|terminated by signal' "$standby/server.log"; then
		echo "standby log shows a replay failure (above)"
		ok=0
	fi
	[ "$ok" -eq 1 ] || return 1
	dbs=$(ft_query "$primary" postgres \
		"SELECT datname FROM pg_database WHERE datname IN ('contrib_regression','isolation_regression') ORDER BY 1")
	for db in $dbs; do
		# every fractam index of a permanent relation verifies on the standby
		for idx in $(ft_query "$standby" "$db" "
			SELECT c.oid::regclass FROM pg_class c JOIN pg_am a ON a.oid = c.relam
			WHERE a.amname = 'fractam_index' AND c.relpersistence = 'p' AND c.relkind = 'i'
			ORDER BY c.oid"); do
			if ! ft_query "$standby" "$db" "SELECT fractam_verify('$idx')" >/dev/null; then
				echo "fractam_verify($idx) failed on the standby in $db"
				ok=0
			fi
		done
		# the standby answers like the primary: per-table row counts and, for
		# every fractam index, the number of entries reachable through it
		local q="
			SELECT string_agg(format('%s=%s', c.oid::regclass,
			       (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %s', c.oid::regclass), false, true, '')))[1]::text),
			       ' ' ORDER BY c.oid::regclass::text)
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE c.relkind = 'r' AND c.relpersistence = 'p'
			  AND n.nspname NOT IN ('pg_catalog','information_schema') AND n.nspname NOT LIKE 'pg_toast%'"
		p=$(ft_query "$primary" "$db" "$q")
		s=$(ft_query "$standby" "$db" "$q")
		if [ "$p" != "$s" ]; then
			echo "row counts differ between primary and standby in $db:"
			echo "  primary: $p"
			echo "  standby: $s"
			ok=0
		fi
	done
	if ! ft_cluster_alive "$standby"; then
		echo "standby died during the check"
		ok=0
	fi
	[ "$ok" -eq 1 ]
}

if [ "$clusters_up" -eq 1 ] && has_phase standby; then
	ft_log "standby replay with wal_consistency_checking = 'fractam'"
	if ft_run standby_check >"$logs/standby.log" 2>&1; then
		pass standby-replay
	else
		cat "$logs/standby.log"
		tail -n 30 "$standby/server.log"
		fail standby-replay
	fi
fi

if [ "$clusters_up" -eq 1 ]; then
	for log in "$primary/server.log" "$standby/server.log"; do
		if grep -qE 'PANIC|TRAP:|terminated by signal|server process .* was terminated' "$log"; then
			echo "----- crash evidence in $log:"
			grep -E -B2 -A5 'PANIC|TRAP:|terminated by signal' "$log" | head -n 60
			fail "server-crash:$(basename "$(dirname "$log")")"
		fi
	done
	ft_cluster_stop "$standby"
	ft_cluster_stop "$primary"
fi

# ---------------------------------------------------------------- 5. TAP
if has_phase tap; then
	if [ -n "${FRACTAM_TAP_TESTS:-}" ]; then
		read -r -a taps <<<"$FRACTAM_TAP_TESTS"
	else
		taps=()
		while IFS= read -r t; do taps+=("$t"); done < <(cd "$tree" && ls t/*.pl 2>/dev/null | sort)
	fi
	for t in "${taps[@]}"; do
		name=$(basename "$t" .pl)
		ft_log "TAP $t"
		ft_run ft_in_tree ft_as_pg env PG_TEST_TIMEOUT_DEFAULT="${PG_TEST_TIMEOUT_DEFAULT:-180}" \
			timeout -k 30 "${FRACTAM_TAP_TIMEOUT:-600}" \
			make -s "${make_args[@]}" installcheck REGRESS= ISOLATION= \
			PROVE_TESTS="$t" PROVE_FLAGS="--timer" >"$logs/tap-$name.log" 2>&1
		rc=$?
		ft_kill_stray_postmasters "$tree/tmp_check"
		rm -rf "$logs/tap-$name"
		cp -r "$tree/tmp_check/log" "$logs/tap-$name" 2>/dev/null
		# keep the logs, drop the (large) node data directories
		rm -rf "$tree/tmp_check"
		grep -E '^(t/|\[|# (seed|fractam)|ok |not ok)' "$logs/tap-$name.log" | grep -v '^ok ' | sed 's/^/    /' | tail -n 40
		if [ "$rc" -eq 0 ] && grep -q '^Result: PASS' "$logs/tap-$name.log"; then
			pass "tap:$name"
		else
			echo "----- $logs/tap-$name.log"
			tail -n 60 "$logs/tap-$name.log"
			for f in "$logs/tap-$name"/*.log; do
				[ -f "$f" ] || continue
				if grep -qE 'PANIC|TRAP:|FATAL|inconsistent page|terminated by signal' "$f"; then
					echo "----- $f (excerpt)"
					grep -E -B3 -A3 'PANIC|TRAP:|inconsistent page|terminated by signal|FATAL' "$f" | tail -n 40
				fi
			done
			fail "tap:$name" "(exit $rc)"
		fi
	done
fi

# ---------------------------------------------------------------- 6. PostgreSQL's suites
if has_phase pgsuite; then
	ft_log "PostgreSQL's regression and isolation suites, heap and fractam (test/pg-suite.sh)"
	ft_run env FRACTAM_SUITE_DIR="$work/pgsuite" FRACTAM_SUITE_KEEP=1 \
		bash "$tree/test/pg-suite.sh" regress isolation >"$logs/pgsuite.log" 2>&1
	rc=$?
	grep -E '^(PASS|FAIL|  )' "$logs/pgsuite.log" | sed 's/^/    /' | tail -n 80
	if [ "$rc" -eq 0 ]; then
		pass "pgsuite"
	else
		echo "----- $logs/pgsuite.log (end)"
		tail -n 40 "$logs/pgsuite.log"
		fail "pgsuite" "(exit $rc)"
	fi
fi

finish
exit
}

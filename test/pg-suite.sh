#!/usr/bin/env bash
# PostgreSQL's own regression and isolation suites with fractam as the
# default table access method, judged against the same run on heap.
#
#   bash test/pg-suite.sh [regress] [isolation]      (default: both)
#
# For each suite it runs PostgreSQL's schedule twice under one harness, on
# two scratch clusters that differ only in default_table_access_method:
# heap (the baseline) and fractam.  Both preload fractam, create the
# extension in template1 and in the test database (pg_regress
# --load-extension), and set synchronize_seqscans = off and autovacuum = off
# (an ANALYZE that lands on one side only would change plans).  Then:
#
#   * the heap run's output of each test is the expected output of the
#     fractam run (so a difference between the server's minor version and
#     the mirror's sources shows on both sides and cancels out); heap's own
#     differences from PostgreSQL's expected files are reported, not judged;
#   * a test whose fractam output differs from heap's fails the run, unless
#     test/pg-suite/allowed-<suite>.txt lists it with a reason and its diff
#     (normalized: no paths, no timestamps) equals the accepted one in
#     test/pg-suite/<suite>/<test>.diff (or <test>.diff.2, for a spec whose
#     outcome depends on which of two waiters wakes first);
#   * a listed test whose diff changed, or that now passes, fails the run too
#     (update the list: it must say exactly what differs);
#
# The sources come from Debian's source package of the installed server
# (deb-src is added if missing; if the mirror lacks that minor version, the
# newest it has), cached in $FRACTAM_PGSRC (default /var/cache/fractam/pgsrc).
# regress.so (src/test/regress/regress.c) and the triggers test's
# autoinc.so and refint.so (contrib/spi) are built with PGXS.
#
# Knobs: FRACTAM_PGSRC, FRACTAM_SUITE_KEEP=1 (keep the scratch directory),
# FRACTAM_SUITE_DIR (scratch directory), FRACTAM_SUITE_AMS ("heap fractam"),
# FRACTAM_SUITE_REJUDGE=1 (judge the results already in FRACTAM_SUITE_DIR),
# FRACTAM_SUITE_ACCEPT=1 (write the current fractam diffs of listed tests as
# the accepted ones).  The last line is "pg-suite: N passed, N failed".
set -uo pipefail
{

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=test/lib.sh
. "$repo/test/lib.sh"

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(regress isolation)
ams=(${FRACTAM_SUITE_AMS:-heap fractam})
pgsrc_cache=${FRACTAM_PGSRC:-/var/cache/fractam/pgsrc}
# a run stuck on a lock (e.g. a prepared transaction a failed step left
# behind) is stopped after this many seconds and judged on what it printed
suite_timeout=${FRACTAM_SUITE_TIMEOUT:-1500}
# isolationtester cancels a step that waits longer than this (a step that
# waits on fractam but not on heap then shows as a difference, not a hang)
export PGISOLATIONTIMEOUT=${PGISOLATIONTIMEOUT:-10}
work=${FRACTAM_SUITE_DIR:-$(mktemp -d /tmp/fractam-pgsuite.XXXXXX)}
mkdir -p "$work"
chmod 755 "$work"
if [ -z "${FRACTAM_SUITE_KEEP:-}" ] && [ -z "${FRACTAM_SUITE_REJUDGE:-}" ]; then
	ft_on_exit "[ -f '$work/failed' ] || rm -rf '$work'"
fi

npass=0
nfail=0
pass() { npass=$((npass + 1)); echo "PASS: $*"; }
fail() { nfail=$((nfail + 1)); touch "$work/failed"; echo "FAIL: $*"; }

# ------------------------------------------------------------ the sources
major=$("$FT_PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
installed=$(dpkg-query -W -f='${Version}' "postgresql-$major" 2>/dev/null || true)

fetch_sources() {
	local dir=$1 version tarball
	if ! apt-cache showsrc "postgresql-$major" >/dev/null 2>&1 ||
		[ -z "$(apt-cache showsrc "postgresql-$major" 2>/dev/null | grep '^Version:')" ]; then
		ft_log "adding deb-src entries for Debian's source packages"
		local f=/etc/apt/sources.list.d/fractam-deb-src.sources
		local uris suites
		{
			for src in /etc/apt/sources.list.d/debian.sources; do
				[ -f "$src" ] || continue
				sed -e 's/^Types: deb$/Types: deb-src/' "$src"
			done
		} >"$f"
		if [ ! -s "$f" ]; then
			. /etc/os-release
			uris="http://deb.debian.org/debian"
			suites="$VERSION_CODENAME $VERSION_CODENAME-updates"
			printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
				"$uris" "$suites" >"$f"
		fi
		apt-get update -qq >/dev/null 2>&1 || true
	fi
	mkdir -p "$dir/dl"
	(
		cd "$dir/dl" || exit 1
		# the installed minor version, else the newest the mirror serves
		for v in "$installed" $(apt-cache showsrc "postgresql-$major" 2>/dev/null |
			awk '/^Version:/ { print $2 }' | sort -V -r -u); do
			rm -f ./*
			apt-get source --download-only "postgresql-$major=$v" >/dev/null 2>&1 &&
				ls ./*.orig.tar.* >/dev/null 2>&1 && exit 0
		done
		exit 1
	) || return 1
	tarball=$(ls "$dir"/dl/postgresql-"$major"_*.orig.tar.* 2>/dev/null | head -n 1)
	[ -n "$tarball" ] || return 1
	version=$(basename "$tarball" | sed -E "s/^postgresql-${major}_([0-9.]+)\.orig.*/\1/")
	tar -xf "$tarball" -C "$dir" "postgresql-$version/src/test/regress" \
		"postgresql-$version/src/test/isolation" \
		"postgresql-$version/contrib/spi" || return 1
	ln -sfn "postgresql-$version" "$dir/current"
	echo "$version" >"$dir/version"
}

if [ ! -d "$pgsrc_cache/current/src/test/regress" ]; then
	ft_log "fetching PostgreSQL $major's test suites (Debian source package)"
	mkdir -p "$pgsrc_cache"
	if ! fetch_sources "$pgsrc_cache"; then
		fail "sources: could not get postgresql-$major's source package"
		echo "pg-suite: $npass passed, $nfail failed"
		exit 1
	fi
fi
src=$(readlink -f "$pgsrc_cache/current")
ft_log "PostgreSQL test suites $(cat "$pgsrc_cache/version") (server $installed)"

# regress.so, autoinc.so and refint.so, built with PGXS, in a copy the
# postgres user can read
rsync -a --delete "$src/src/test/" "$work/test/"
cp "$src/contrib/spi/autoinc.c" "$src/contrib/spi/refint.c" "$work/test/regress/"
printf 'MODULES = regress autoinc refint\nPG_CONFIG ?= pg_config\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n' \
	>"$work/test/regress/Makefile.fractam"
if ! make -C "$work/test/regress" -f Makefile.fractam with_llvm=no PG_CONFIG="$FT_PG_CONFIG" \
	>"$work/regress-build.log" 2>&1; then
	cat "$work/regress-build.log"
	fail "build: regress.so"
	echo "pg-suite: $npass passed, $nfail failed"
	exit 1
fi
chown -R "$FT_OSUSER" "$work"

pgxs_dir=$(dirname "$("$FT_PG_CONFIG" --pgxs)")/../..
pg_regress_bin=$pgxs_dir/src/test/regress/pg_regress
pg_isolation_regress_bin=$pgxs_dir/src/test/isolation/pg_isolation_regress

# ------------------------------------------------------------ one run
# The fractam run's input: the suite with heap's results as expected files
heap_as_expected() {
	local suite=$1 in=$work/test-vs-heap/$suite f
	rm -rf "$in"
	mkdir -p "$in"
	rsync -a --exclude expected "$work/test/$suite/" "$in/"
	mkdir -p "$in/expected"
	for f in "$work/results/heap/$suite/results/"*.out; do
		[ -e "$f" ] && cp "$f" "$in/expected/"
	done
	chown -R "$FT_OSUSER" "$work/test-vs-heap"
	echo "$in"
}

# run_suite AM SUITE INPUTDIR: a fresh cluster, the schedule, results in
# $work/results/AM/SUITE
run_suite() {
	local am=$1 suite=$2 in=$3 dir=$work/$am-$suite port out
	out=$work/results/$am/$suite
	port=$(ft_pick_port) || return 1
	ft_cluster_init "$dir" "$port" \
		"default_table_access_method = '$am'" \
		"synchronize_seqscans = off" \
		"max_prepared_transactions = 2" \
		"autovacuum = off" \
		"log_min_messages = warning" || return 1
	ft_cluster_start "$dir" || return 1
	FT_DB=template1 ft_psql "$dir" -c "CREATE EXTENSION fractam" || return 1
	mkdir -p "$out"
	chown -R "$FT_OSUSER" "$work/results"
	local args=(--host="$dir/sock" --port="$port" --user="$FT_OSUSER"
		--bindir="$FT_BINDIR" --outputdir="$out" --load-extension=fractam
		--max-concurrent-tests=20)
	if [ "$suite" = regress ]; then
		(cd "$in" && ft_as_pg timeout "$suite_timeout" "$pg_regress_bin" "${args[@]}" \
			--inputdir=. --dlpath="$work/test/regress" \
			--schedule=./parallel_schedule) >"$out/run.log" 2>&1
	else
		(cd "$in" && PATH="$(dirname "$pg_isolation_regress_bin"):$PATH" \
			ft_as_pg timeout "$suite_timeout" "$pg_isolation_regress_bin" "${args[@]}" \
			--inputdir=. --schedule=./isolation_schedule) \
			>"$out/run.log" 2>&1
	fi
	grep -q "PANIC\|TRAP:\|terminated by signal" "$dir/server.log" &&
		cp "$dir/server.log" "$out/server-crash.log"
	ft_cluster_stop "$dir"
	return 0
}

# test statuses from pg_regress's log: "NAME ok|FAILED|failed (ignored)"
statuses() {
	sed -nE 's/^(test|     | +)?[ ]*([A-Za-z0-9_.-]+) +\.\.\. (ok|FAILED|failed \(ignored\))( .*)?$/\2 \3/p' "$1" |
		sed -E 's/ failed \(ignored\)$/ ignored/; s/ FAILED$/ failed/'
}

# the normalized diff of one test: no file names, timestamps or hunk offsets
test_diff() {
	local diffs=$1 name=$2
	awk -v t="$name" '
		/^diff / { on = ($0 ~ ("/expected/" t "(_[0-9])?\\.out ")); next }
		on && /^(---|\+\+\+) / { next }
		on && /^@@/ { print "@@"; next }
		on { gsub(/after [0-9]+ seconds/, "after N seconds"); print }' "$diffs"
}

for suite in "${suites[@]}"; do
	for am in "${ams[@]}"; do
		# FRACTAM_SUITE_REJUDGE=1 with FRACTAM_SUITE_DIR: judge the results
		# of an earlier run again (after editing the lists), do not rerun
		[ -n "${FRACTAM_SUITE_REJUDGE:-}" ] && continue
		ft_log "$suite suite on $am"
		in=$work/test/$suite
		if [ "$am" != heap ] && [ -f "$work/results/heap/$suite/run.log" ]; then
			in=$(heap_as_expected "$suite")
		fi
		if ! ft_run run_suite "$am" "$suite" "$in"; then
			fail "$suite-$am: could not run"
			continue
		fi
		tail -n 4 "$work/results/$am/$suite/run.log"
	done

	heap_st=$work/results/heap/$suite/run.log
	frac_st=$work/results/fractam/$suite/run.log
	[ -f "$heap_st" ] && [ -f "$frac_st" ] || continue
	if [ -f "$work/results/fractam/$suite/server-crash.log" ]; then
		fail "$suite: the fractam server crashed"
		grep -m5 "PANIC\|TRAP:\|terminated by signal" "$work/results/fractam/$suite/server-crash.log"
	fi
	allowed=$repo/test/pg-suite/allowed-$suite.txt
	heapfail=$(statuses "$heap_st" | grep -vc ' ok$')
	total=0
	while read -r name st; do
		total=$((total + 1))
		listed=$(grep -E "^$name:" "$allowed" 2>/dev/null || true)
		if [ "$st" = ok ]; then
			if [ -n "$listed" ]; then
				fail "$suite/$name matches heap on fractam but is listed in $(basename "$allowed")"
			fi
			continue
		fi
		d=$work/results/fractam/$suite/$name.diff
		test_diff "$work/results/fractam/$suite/regression.diffs" "$name" >"$d"
		if [ -z "$listed" ]; then
			fail "$suite/$name: fractam's output differs from heap's"
			sed -n '1,60p' "$d"
			continue
		fi
		accepted=$repo/test/pg-suite/$suite/$name.diff
		if [ -n "${FRACTAM_SUITE_ACCEPT:-}" ]; then
			mkdir -p "$(dirname "$accepted")"
			cp "$d" "$accepted"
		fi
		# a spec whose outcome depends on which of two waiters wakes first
		# may have a second accepted diff (NAME.diff.2)
		if cmp -s "$d" "$accepted" || { [ -f "$accepted.2" ] && cmp -s "$d" "$accepted.2"; }; then
			echo "  $name: accepted difference (${listed#*: })"
		else
			fail "$suite/$name differs from its accepted diff"
			diff -u "$accepted" "$d" | sed -n '1,60p'
		fi
	done < <(statuses "$frac_st")
	if [ "$total" -eq 0 ]; then
		fail "$suite: no test results"
		tail -n 30 "$frac_st"
	else
		pass "$suite: $total tests on fractam match heap ($heapfail of heap's own outputs differ from the mirror's expected files: not judged)"
	fi
done

echo "pg-suite: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
exit
}

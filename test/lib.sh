# shellcheck shell=bash
# fractam test helpers: scratch clusters that are always stopped again.
#
# Source this file from bash.  It installs an EXIT/INT/TERM trap that runs every
# registered cleanup action (last registered first), so a cluster started with
# ft_cluster_start is stopped even when the caller fails or is interrupted.
#
# Servers run as the `postgres` OS user when the caller is root (PostgreSQL
# refuses to run as root), otherwise as the caller.  Every cluster lives in its
# own directory:  DIR/data (PGDATA), DIR/sock (private unix socket directory),
# DIR/server.log, DIR/port.  Nothing here touches a cluster it did not create.

FT_PG_CONFIG=${PG_CONFIG:-/usr/bin/pg_config}
if [ -x "$FT_PG_CONFIG" ] || command -v "$FT_PG_CONFIG" >/dev/null 2>&1; then
	FT_BINDIR=$("$FT_PG_CONFIG" --bindir)
else
	FT_BINDIR=/usr/lib/postgresql/15/bin
fi
# Ports reserved for this test infrastructure.
FT_PORT_MIN=${FT_PORT_MIN:-55100}
FT_PORT_MAX=${FT_PORT_MAX:-55199}
# What the scratch clusters preload (overridable only to debug the harness).
FT_PRELOAD=${FT_PRELOAD-fractam}

if [ "$(id -u)" -eq 0 ]; then
	FT_OSUSER=postgres
else
	FT_OSUSER=$(id -un)
fi

# ---------------------------------------------------------------- cleanup stack
FT_CLEANUP=()

ft_on_exit() {
	FT_CLEANUP+=("$*")
}

ft_run_cleanup() {
	local i
	for ((i = ${#FT_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${FT_CLEANUP[$i]}" || true
	done
	FT_CLEANUP=()
}

# Child pids of $1, and all their descendants (read from /proc).
ft_descendants() {
	local parent=$1 f pid st
	for f in /proc/[0-9]*/stat; do
		pid=${f#/proc/}
		pid=${pid%/stat}
		read -r st <"$f" 2>/dev/null || continue
		st=${st##*) }
		# st is now "state ppid pgrp ..."
		set -- $st
		if [ "${2:-}" = "$parent" ]; then
			echo "$pid"
			ft_descendants "$pid"
		fi
	done
}

# On INT/TERM: end every process this shell started (not the servers, which
# pg_ctl detached; the EXIT cleanup stops those), then exit.
ft_on_signal() {
	local code=$1 pids
	trap '' INT TERM
	pids=$(ft_descendants $$)
	if [ -n "$pids" ]; then
		# shellcheck disable=SC2086
		kill -TERM $pids 2>/dev/null || true
		sleep 1
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null || true
	fi
	exit "$code"
}

trap 'ft_run_cleanup' EXIT
trap 'ft_on_signal 130' INT
trap 'ft_on_signal 143' TERM

# Run a command (or shell function) in the background and wait for it, so
# that a signal reaches the traps above at once instead of after the command.
ft_run() {
	"$@" &
	wait $!
}

# ---------------------------------------------------------------- small helpers
ft_log() { printf '=== %s\n' "$*"; }

# Run a command as the OS user that owns the servers.
ft_as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$FT_OSUSER" -- "$@"
	else
		"$@"
	fi
}

# Is a TCP port on 127.0.0.1 free, and no socket file of that number in /tmp?
ft_port_free() {
	local port=$1
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		return 1
	fi
	[ ! -e "/tmp/.s.PGSQL.$port" ] || return 1
	[ ! -e "/tmp/.s.PGSQL.$port.lock" ] || return 1
	return 0
}

# Print the first free port >= $1 within the reserved range (skipping ports
# already handed out by this shell).
FT_USED_PORTS=" "
ft_pick_port() {
	local port=${1:-$FT_PORT_MIN}
	while [ "$port" -le "$FT_PORT_MAX" ]; do
		if [[ "$FT_USED_PORTS" != *" $port "* ]] && ft_port_free "$port"; then
			FT_USED_PORTS+="$port "
			echo "$port"
			return 0
		fi
		port=$((port + 1))
	done
	echo "ft_pick_port: no free port in $FT_PORT_MIN..$FT_PORT_MAX" >&2
	return 1
}

ft_port_of() { cat "$1/port"; }

# psql against the cluster in DIR:  ft_psql DIR [psql args...]
ft_psql() {
	local dir=$1
	shift
	ft_as_pg "$FT_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/sock" \
		-p "$(ft_port_of "$dir")" -U "$FT_OSUSER" -d "${FT_DB:-postgres}" "$@"
}

# One value from a query:  ft_query DIR DB SQL
ft_query() {
	local dir=$1 db=$2 sql=$3
	FT_DB=$db ft_psql "$dir" -A -t -c "$sql"
}

# ---------------------------------------------------------------- clusters
# ft_cluster_init DIR PORT [extra postgresql.conf lines...]
ft_cluster_init() {
	local dir=$1 port=$2
	shift 2
	mkdir -p "$dir/sock"
	echo "$port" >"$dir/port"
	chown -R "$FT_OSUSER" "$dir"
	chmod 700 "$dir/sock"
	ft_as_pg "$FT_BINDIR/initdb" -D "$dir/data" -U "$FT_OSUSER" -A trust \
		-E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log"
		return 1
	}
	ft_write_conf "$dir" "$port" "$@"
}

# (Re)write the harness part of postgresql.conf (used for standbys too).
ft_write_conf() {
	local dir=$1 port=$2
	shift 2
	{
		echo
		echo "# --- fractam test harness"
		echo "port = $port"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir/sock'"
		echo "shared_preload_libraries = '$FT_PRELOAD'"
		echo "fsync = off"
		echo "max_connections = 40"
		echo "max_prepared_transactions = 10"
		echo "wal_level = replica"
		echo "max_wal_senders = 5"
		echo "max_replication_slots = 5"
		echo "hot_standby = on"
		echo "max_wal_size = 1GB"
		echo "restart_after_crash = off"
		echo "log_line_prefix = '%m [%p] %q%a '"
		echo "log_min_messages = warning"
		echo "lc_messages = 'C'"
		local line
		for line in "$@"; do
			echo "$line"
		done
	} >>"$dir/data/postgresql.conf"
}

ft_cluster_start() {
	local dir=$1
	ft_on_exit "ft_cluster_stop '$dir'"
	if ! ft_as_pg "$FT_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
		-w -t 120 start >"$dir/pg_ctl.log" 2>&1; then
		echo "--- could not start the cluster in $dir:"
		cat "$dir/pg_ctl.log"
		tail -n 30 "$dir/server.log" 2>/dev/null
		return 1
	fi
}

ft_postmaster_pid() {
	local dir=$1
	[ -f "$dir/data/postmaster.pid" ] || return 1
	head -n 1 "$dir/data/postmaster.pid"
}

# Is the postmaster of DIR alive?
ft_cluster_alive() {
	local pid
	pid=$(ft_postmaster_pid "$1") || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# Stop the cluster in DIR (fast, then immediate, then SIGKILL of its own pid).
ft_cluster_stop() {
	local dir=$1 pid
	[ -f "$dir/data/postmaster.pid" ] || return 0
	ft_as_pg "$FT_BINDIR/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 && return 0
	ft_as_pg "$FT_BINDIR/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 && return 0
	pid=$(ft_postmaster_pid "$dir") || return 0
	ft_kill_postmaster "$pid" "$dir/data"
}

# Kill one postmaster we started, identified by pid and data directory.
ft_kill_postmaster() {
	local pid=$1 datadir=$2
	[ -n "$pid" ] && [ -d "/proc/$pid" ] || return 0
	# Only a postgres process whose command line names this data directory.
	if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$datadir"; then
		kill -QUIT "$pid" 2>/dev/null || true
		sleep 2
		kill -KILL "$pid" 2>/dev/null || true
	fi
}

# Stop every postmaster whose data directory is below ROOT (TAP nodes that
# were left running because their test was killed).
ft_kill_stray_postmasters() {
	local root=$1 pidfile pid datadir
	[ -d "$root" ] || return 0
	while IFS= read -r pidfile; do
		pid=$(sed -n 1p "$pidfile")
		datadir=$(sed -n 2p "$pidfile")
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
			echo "stopping stray postmaster $pid ($datadir)"
			ft_as_pg "$FT_BINDIR/pg_ctl" -D "$datadir" -m immediate -w -t 20 stop >/dev/null 2>&1 ||
				ft_kill_postmaster "$pid" "$datadir"
		fi
	done < <(find "$root" -name postmaster.pid 2>/dev/null)
}

# ft_standby_create PRIMARY_DIR DIR PORT [extra conf lines...]: streaming
# standby from a base backup of the primary; started by the caller.  It
# streams through a physical replication slot (ft_standby_PORT): under
# wal_consistency_checking every fractam record carries a page image, so
# the primary writes tens of GB in a few minutes, and a standby that
# receives slower than that (a busy CI machine) would otherwise ask for
# segments the primary has already recycled, whatever wal_keep_size says.
ft_standby_create() {
	local pdir=$1 dir=$2 port=$3
	shift 3
	mkdir -p "$dir/sock"
	echo "$port" >"$dir/port"
	chown -R "$FT_OSUSER" "$dir"
	chmod 700 "$dir/sock"
	ft_as_pg "$FT_BINDIR/pg_basebackup" -h "$pdir/sock" -p "$(ft_port_of "$pdir")" \
		-U "$FT_OSUSER" -D "$dir/data" -R -X stream -c fast --no-sync \
		-C -S "ft_standby_$port" \
		>"$dir/basebackup.log" 2>&1 || {
		cat "$dir/basebackup.log"
		return 1
	}
	ft_write_conf "$dir" "$port" "$@"
}

# Wait until the standby in SDIR has replayed everything the primary in PDIR
# has written so far.  ft_wait_replay PDIR SDIR [TIMEOUT_SECONDS]
ft_wait_replay() {
	local pdir=$1 sdir=$2 timeout=${3:-300} target i
	target=$(ft_query "$pdir" postgres "SELECT pg_current_wal_flush_lsn()") || return 1
	for ((i = 0; i < timeout; i++)); do
		if ! ft_cluster_alive "$sdir"; then
			echo "standby is not running"
			return 1
		fi
		if [ "$(ft_query "$sdir" postgres \
			"SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn" 2>/dev/null)" = t ]; then
			return 0
		fi
		sleep 1
	done
	echo "standby did not replay up to $target within ${timeout}s"
	return 1
}

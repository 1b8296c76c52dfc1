#!/usr/bin/python3
# fractam benchmark runner: runs the same workload on heap+btree and on fractam variants side by side
# on one scratch PostgreSQL server per variant, inside a memory-limited cgroup, and writes a report.
# Started by bench/run (which installs missing Debian packages first). See bench/README.md.

import argparse
import glob
import gzip
import re
import json
import math
import os
import pwd
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
REPO = os.path.dirname(BENCH)
SQL = os.path.join(BENCH, "sql")
sys.path.insert(0, HERE)

from pgctl import (BenchError, Interrupted, MemCgroup, Server, SQLError, device_of, diskstats,  # noqa: E402
                   fmt_bytes, fs_type, host_cpu_busy_s, host_cpu_steal_s, loadavg, log, parse_size,
                   pause_server, server_proc_stats, warn)
import stats  # noqa: E402
import report  # noqa: E402
import interleave  # noqa: E402

WORKLOADS = ("iibench", "timeseries", "linkbench", "tpcb", "tables")
VARIANTS = {
    "heap-btree": {"tam": "heap", "sec": "btree", "label": "heap table + btree indexes"},
    "heap-fractam": {"tam": "heap", "sec": "fractam", "label": "heap table + fractam indexes"},
    "fractam-fractam": {"tam": "fractam", "sec": "fractam", "label": "fractam table + fractam indexes"},
}
VARIANT_ALIASES = {"heap": "heap-btree", "btree": "heap-btree", "fractam-index": "heap-fractam",
                   "fractam-table": "fractam-fractam", "fractam": "fractam-fractam"}
IIBENCH_PHASES = ("load", "index", "insert", "fifo", "qr", "qp")
NCPU = os.cpu_count() or 1

# processes and resources to clean up on any exit
_children = set()
_cleanup = []


def on_signal(signum, frame):
    raise Interrupted("received signal %d" % signum)


def run_cleanup():
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    for p in list(_children):
        if p.poll() is None:
            try:
                p.terminate()
                p.wait(5)
            except Exception:
                try:
                    p.kill()
                except Exception:
                    pass
    while _cleanup:
        fn = _cleanup.pop()
        try:
            fn()
        except Exception as e:  # keep cleaning
            warn("cleanup step failed: %s" % e)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)


# ----------------------------------------------------------------------------------------------
# options

def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="bench/run",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run fractam benchmarks side by side with heap+btree (see bench/README.md).",
        epilog="Workloads: iibench (default), timeseries, linkbench, tpcb, tables, or all.\n"
               "Variants: heap-btree, heap-fractam, fractam-fractam (default: all; unavailable ones are "
               "skipped unless named explicitly with --variants).\n"
               "Examples:\n"
               "  bench/run --quick                        # ~2.5 min iiBench smoke run (the demo)\n"
               "  bench/run --quick all                    # all workloads, tiny, for CI\n"
               "  bench/run --mem-limit 2G --shared-buffers 512MB --load-rows 60000000 \\\n"
               "            --insert-secs 3600 iibench     # larger than memory")
    ap.add_argument("workloads", nargs="*", default=[], help="iibench | timeseries | linkbench | tpcb | tables | all")
    g = ap.add_argument_group("run")
    g.add_argument("--quick", action="store_true",
                   help="short run (<= 3 min for iibench incl. server start/stop) for CI and the demo")
    g.add_argument("--variants", help="comma list (default: heap-btree,heap-fractam,fractam-fractam)")
    g.add_argument("--out", help="results directory (default bench/results/<timestamp>-<mode>)")
    g.add_argument("--workdir", help="where scratch data directories go (default /tmp, or /var/tmp if "
                   "/tmp is a tmpfs); removed afterwards")
    g.add_argument("--keep-data", action="store_true", help="keep the scratch data directories")
    g.add_argument("--seed", type=int, default=42, help="pgbench --random-seed base (default 42)")
    g.add_argument("--pg-bindir", default="/usr/lib/postgresql/15/bin")
    g.add_argument("--port", type=int, help="server port, 55200-55299 (default: first free)")
    g.add_argument("--report-only", metavar="DIR", help="regenerate report.md/CSV/PNG from DIR/results.json")
    g.add_argument("--interleave", type=int, metavar="SECS",
                   help="iibench with exactly two variants: prepare both servers, then run the l.i1 insert "
                   "phase in alternating SECS-second slices (the idle server paused), so that both "
                   "variants see the same host conditions; for noisy or shared machines")
    g = ap.add_argument_group("server and memory")
    g.add_argument("--mem-limit", help="memory limit of the server's cgroup (page cache included); "
                   "default 4G, quick 1G")
    g.add_argument("--no-cgroup", action="store_true",
                   help="run WITHOUT a memory limit (the report says so)")
    g.add_argument("--shared-buffers", help="default 1GB, quick 128MB")
    g.add_argument("--maintenance-work-mem", help="default 256MB, quick 64MB")
    g.add_argument("--sync-commit", default="off", choices=("on", "off"),
                   help="synchronous_commit (default off, as in the published iiBench runs)")
    g.add_argument("--max-wal-size", default=None, help="default 8GB, quick 1GB")
    g.add_argument("--checkpoint-timeout", default=None, help="default 15min, quick 5min")
    g.add_argument("--data-checksums", action="store_true", help="initdb --data-checksums")
    g.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="extra postgresql.conf setting (repeatable), e.g. --set wal_compression=zstd")
    g = ap.add_argument_group("fractam objects")
    g.add_argument("--fractam-pk", default="auto", choices=("auto", "btree", "fractam"),
                   help="primary keys in fractam variants: btree PRIMARY KEY, or a UNIQUE fractam index. "
                   "auto (default): btree on heap tables that also have secondary indexes (iibench, "
                   "linkbench), fractam otherwise (timeseries and tpcb have no other index; fractam table)")
    g.add_argument("--fractam-index-opts", default="", metavar="OPTS",
                   help="reloptions for fractam indexes, e.g. 'fanout=16,buffering=true'")
    g.add_argument("--btree-index-opts", default="", metavar="OPTS", help="reloptions for btree indexes")
    g.add_argument("--fractam-table-opts", default="", metavar="OPTS",
                   help="WITH (...) options for fractam tables (when the table AM accepts any)")
    g = ap.add_argument_group("iibench")
    g.add_argument("--ii-schema", default="callaghan", choices=("callaghan", "tokutek"),
                   help="index set and value generation: Callaghan's (default) or Tokutek's original")
    g.add_argument("--ii-phases", default=None,
                   help="subset of %s (default all; with --interleave load,index,insert)"
                   % ",".join(IIBENCH_PHASES))
    g.add_argument("--load-rows", type=int, help="l.i0 rows (default 20M, quick 200K)")
    g.add_argument("--load-batch", type=int, default=None, help="rows per l.i0 transaction (default 100, quick 1000)")
    g.add_argument("--insert-rows", type=int, help="l.i1 rows (insert with all indexes; default: use --insert-secs)")
    g.add_argument("--insert-secs", type=int, help="l.i1 duration (default 600, quick 20)")
    g.add_argument("--insert-batch", type=int, default=50, help="rows per l.i1 transaction (default 50)")
    g.add_argument("--fifo-rows", type=int, help="l.i2 rows (insert+delete, table size constant)")
    g.add_argument("--fifo-secs", type=int, help="l.i2 duration (default 600, quick 15)")
    g.add_argument("--fifo-batch", type=int, default=50, help="rows per l.i2 insert/delete (default 50)")
    g.add_argument("--query-secs", type=int, help="duration of each qrN/qpN phase (default 300, quick 10)")
    g.add_argument("--query-rates", default=None,
                   help="comma list of background insert rates in rows/s for qrN/qpN (default 100,1000; "
                   "quick 1000)")
    g.add_argument("--query-clients", type=int, default=1, help="query connections (default 1)")
    g.add_argument("--settle-secs", type=int, default=None,
                   help="sleep after VACUUM+CHECKPOINT before the query phases (default 60, quick 0)")
    g = ap.add_argument_group("other workloads")
    g.add_argument("--clients", type=int, help="clients for every workload (overrides the defaults: "
                   "iibench 1, timeseries 16, linkbench 16, tpcb 8)")
    g.add_argument("--duration", type=int, help="default duration (s) of duration-limited phases")
    g.add_argument("--ts-dists", default="uniform,pareto", help="timeseries value distributions")
    g.add_argument("--ts-keys", default="unique",
                   help="timeseries key index, comma list: unique (PRIMARY KEY; fractam: UNIQUE fractam "
                        "index; phases ts-unif, ts-pare), plain (non-unique index on the same columns in "
                        "every variant; phases ts-unif-plain, ts-pare-plain)")
    g.add_argument("--ts-events", type=int, help="timeseries 1000-row events per client (default: --ts-secs)")
    g.add_argument("--ts-secs", type=int, help="timeseries duration per distribution (default 600, quick 12)")
    g.add_argument("--lb-maxid", type=int, help="linkbench nodes (default 10M, quick 20K)")
    g.add_argument("--lb-loaders", type=int, default=None, help="linkbench load clients (default = CPUs)")
    g.add_argument("--lb-secs", type=int, help="linkbench request phase duration (default 600, quick 10)")
    g.add_argument("--tpcb-scale", type=int, help="pgbench scale (default 100, quick 5)")
    g.add_argument("--tpcb-secs", type=int, help="TPC-B duration (default 300, quick 10)")
    g.add_argument("--tb-rows", type=int, help="tables: rows loaded by COPY and by INSERT ... SELECT "
                   "(default 10M, quick 200K)")
    g.add_argument("--tb-secs", type=int, help="tables: duration of each query phase (default 60, quick 4)")
    o = ap.parse_args(argv)
    return o


def resolve_options(o):
    q = o.quick
    if not o.workloads:
        o.workloads = ["iibench"]
    wl = []
    for w in o.workloads:
        for x in w.split(","):
            x = x.strip().lower()
            if x == "all":
                wl.extend(WORKLOADS)
            elif x in WORKLOADS:
                wl.append(x)
            elif x:
                raise BenchError("unknown workload %r (choose from %s, all)" % (x, ", ".join(WORKLOADS)))
    o.workloads = [w for i, w in enumerate(wl) if w not in wl[:i]]

    o.variants_explicit = o.variants is not None
    names = []
    for v in (o.variants or ",".join(VARIANTS)).split(","):
        v = v.strip().lower()
        v = VARIANT_ALIASES.get(v, v)
        if v not in VARIANTS:
            raise BenchError("unknown variant %r (choose from %s)" % (v, ", ".join(VARIANTS)))
        if v not in names:
            names.append(v)
    o.variant_names = names

    if o.interleave is not None:
        if o.interleave < 5:
            raise BenchError("--interleave needs slices of at least 5 seconds")
        if o.workloads != ["iibench"]:
            raise BenchError("--interleave runs the iibench workload only")
        if o.port and not 55200 <= o.port + 1 <= 55299:
            raise BenchError("--interleave uses --port and the next one: both must be in 55200-55299")
        if len(names) != 2 or "heap-btree" not in names:
            raise BenchError("--interleave compares exactly two variants, heap-btree and one other "
                             "(e.g. --variants heap-btree,heap-fractam)")
    if o.ii_phases is None:
        o.ii_phases = "load,index,insert" if o.interleave else ",".join(IIBENCH_PHASES)
    o.ii_phase_list = [p.strip() for p in o.ii_phases.split(",") if p.strip()]
    for p in o.ii_phase_list:
        if p not in IIBENCH_PHASES:
            raise BenchError("unknown iibench phase %r (choose from %s)" % (p, ",".join(IIBENCH_PHASES)))
    if o.interleave is not None and ("insert" not in o.ii_phase_list or
                                     set(o.ii_phase_list) - {"load", "index", "insert"}):
        raise BenchError("--interleave needs --ii-phases with insert and at most load and index besides")

    o.mem_limit_b = parse_size(o.mem_limit or ("1G" if q else "4G"))
    o.shared_buffers_b = parse_size(o.shared_buffers or ("128MB" if q else "1GB"))
    o.mwm_b = parse_size(o.maintenance_work_mem or ("64MB" if q else "256MB"))
    o.avwm_b = min(o.mwm_b, 64 << 20)
    o.max_wal_size = o.max_wal_size or ("1GB" if q else "8GB")
    # interleaved, each server lives twice as long in wall-clock time as it runs: time-driven
    # checkpoints would come twice as often per unit of work, so leave them to max_wal_size
    o.checkpoint_timeout = o.checkpoint_timeout or ("1h" if o.interleave else ("5min" if q else "15min"))
    if o.shared_buffers_b < (16 << 20):
        raise BenchError("--shared-buffers must be at least 16MB")

    resolve_durations(o, len(o.variant_names))

    o.extra_conf = []
    for s in o.set:
        if "=" not in s:
            raise BenchError("--set expects NAME=VALUE, got %r" % s)
        k, v = s.split("=", 1)
        o.extra_conf.append((k.strip(), v.strip()))
    return o


def resolve_durations(o, nvar):
    """Row counts and durations. Quick mode shares ~130 s of measured time among the variants that
    actually run (3 min in total with server start/stop); other workloads in quick mode are smoke tests
    of a few seconds each. Called again once the fractam probe knows how many variants will run."""
    q = o.quick
    if not hasattr(o, "user_durations"):
        o.user_durations = {k: getattr(o, k) for k in (
            "load_rows", "insert_rows", "insert_secs", "fifo_rows", "fifo_secs", "query_secs", "ts_events",
            "ts_secs", "lb_maxid", "lb_secs", "tpcb_scale", "tpcb_secs", "tb_rows", "tb_secs")}
    for k, v in o.user_durations.items():
        setattr(o, k, v)
    nvar = max(1, nvar)
    f = min(1.0, 2.0 / nvar) * (1.0 if o.workloads == ["iibench"] else 0.4)

    def qs(base, full):
        if q:
            return max(4, int(round(base * f)))
        return o.duration or full

    o.load_rows = o.load_rows or (int(300000 * max(f, 0.5)) if q else 20000000)
    o.load_batch = o.load_batch or (1000 if q else 100)
    if o.insert_rows is None:
        o.insert_secs = o.insert_secs or qs(20, 600)
    elif o.interleave:
        raise BenchError("--interleave runs l.i1 for --insert-secs, not --insert-rows")
    if o.fifo_rows is None:
        o.fifo_secs = o.fifo_secs or qs(15, 600)
    o.query_secs = o.query_secs or qs(10, 300)
    o.query_rate_list = [int(x) for x in (o.query_rates or ("1000" if q else "100,1000")).split(",") if x]
    o.settle_secs = o.settle_secs if o.settle_secs is not None else (0 if q else 60)
    o.ii_clients = o.clients or 1

    o.ts_dist_list = [d.strip() for d in o.ts_dists.split(",") if d.strip()]
    for d in o.ts_dist_list:
        if d not in ("uniform", "pareto"):
            raise BenchError("unknown --ts-dists value %r (uniform, pareto)" % d)
    o.ts_key_list = [k.strip() for k in o.ts_keys.split(",") if k.strip()]
    for k in o.ts_key_list:
        if k not in ("unique", "plain"):
            raise BenchError("unknown --ts-keys value %r (unique, plain)" % k)
    if o.ts_events is None:
        o.ts_secs = o.ts_secs or qs(12, 600)
    o.ts_clients = o.clients or 16
    o.lb_maxid = o.lb_maxid or (20000 if q else 10000000)
    o.lb_loaders = o.lb_loaders or NCPU
    o.lb_secs = o.lb_secs or qs(10, 600)
    o.lb_clients = o.clients or 16
    o.tpcb_scale = o.tpcb_scale or (5 if q else 100)
    o.tpcb_secs = o.tpcb_secs or qs(10, 300)
    o.tpcb_clients = o.clients or 8
    o.tb_rows = o.tb_rows or (200000 if q else 10000000)
    o.tb_secs = o.tb_secs or qs(4, 60)


def with_clause(opts):
    opts = (opts or "").strip()
    return "WITH (%s)" % opts if opts else ""


# ----------------------------------------------------------------------------------------------
# preflight

def pg_paths(o):
    pgc = os.path.join(o.pg_bindir, "pg_config")
    for prog in ("postgres", "pg_ctl", "initdb", "psql", "pgbench", "pg_config"):
        if not os.access(os.path.join(o.pg_bindir, prog), os.X_OK):
            raise BenchError("%s not found in %s (install postgresql-15, or pass --pg-bindir)"
                             % (prog, o.pg_bindir))

    def cfg(flag):
        return subprocess.run([pgc, flag], stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    return {"pkglibdir": cfg("--pkglibdir"), "sharedir": cfg("--sharedir"), "version": cfg("--version")}


def fractam_installed(paths):
    so = os.path.join(paths["pkglibdir"], "fractam.so")
    ctl = os.path.join(paths["sharedir"], "extension", "fractam.control")
    if os.path.exists(so) and os.path.exists(ctl):
        return True, None
    missing = [p for p in (so, ctl) if not os.path.exists(p)]
    return False, ("fractam library not installed: run make install (make -C %s && make -C %s install); "
                   "missing %s" % (REPO, REPO, ", ".join(missing)))


def pick_port(o, exclude=()):
    """A free port for a scratch server; exclude: ports already taken by this run's other servers
    (with --port, the next ones after it)."""
    if o.port:
        p = o.port + len(exclude)
        if not 55200 <= p <= 55299:
            raise BenchError("--port must be in 55200-55299 (an interleaved run uses it and the next one)")
        return p
    start = 55200 + os.getpid() % 100
    for i in range(100):
        p = 55200 + (start - 55200 + i) % 100
        if p in exclude:
            continue
        if os.path.exists("/tmp/.s.PGSQL.%d" % p) or os.path.exists("/var/run/postgresql/.s.PGSQL.%d" % p):
            continue
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
        except OSError:
            continue
        finally:
            s.close()
        return p
    raise BenchError("no free port in 55200-55299")


def server_needs(o, max_clients):
    """Memory the server needs inside the cgroup (anonymous + shared), excluding page cache."""
    backends = max_clients + 12
    parts = [("shared_buffers", o.shared_buffers_b),
             ("maintenance_work_mem", o.mwm_b),
             ("4 autovacuum workers x autovacuum_work_mem", 4 * o.avwm_b),
             ("%d backends x 8 MiB" % backends, backends * (8 << 20)),
             ("postmaster and catalogs", 64 << 20)]
    return parts, sum(v for _, v in parts)


def max_clients(o):
    m = 2
    if "iibench" in o.workloads:
        m = max(m, o.ii_clients + o.query_clients + 1)
    if "timeseries" in o.workloads:
        m = max(m, o.ts_clients)
    if "linkbench" in o.workloads:
        m = max(m, o.lb_clients, o.lb_loaders)
    if "tpcb" in o.workloads:
        m = max(m, o.tpcb_clients)
    return m


def check_memory(o):
    parts, need = server_needs(o, max_clients(o))
    if o.no_cgroup or os.environ.get("FRACTAM_BENCH_SKIP_MEMCHECK"):  # the latter: to test the OOM path
        return
    if o.mem_limit_b < need:
        raise BenchError(
            "memory limit %s is below what the server needs (%s = %s).\n"
            "  Raise --mem-limit or lower --shared-buffers / --maintenance-work-mem / --clients."
            % (fmt_bytes(o.mem_limit_b), " + ".join("%s %s" % (k, fmt_bytes(v)) for k, v in parts),
               fmt_bytes(need)))
    if o.mem_limit_b < need + o.shared_buffers_b:
        warn("memory limit %s leaves only %s for the OS page cache (the notes advise a limit >= 2-3x "
             "shared_buffers)" % (fmt_bytes(o.mem_limit_b), fmt_bytes(o.mem_limit_b - need)))


def estimate_disk(o):
    """Rough upper bound of bytes on disk (heap+btree sizes; one variant's data exists at a time).
    Returns (bytes, exact): exact is False when a duration-limited phase had to be guessed."""
    est = 0
    exact = True
    if "iibench" in o.workloads:
        rows = o.load_rows + (o.insert_rows or 0)
        if o.insert_rows is None:
            rows += o.insert_secs * 40000  # generous in-memory insert rate
            exact = False
        est = max(est, rows * 200)
    if "timeseries" in o.workloads:
        ev = (o.ts_events * o.ts_clients if o.ts_events else o.ts_secs * 400) * len(o.ts_key_list)
        exact = exact and bool(o.ts_events)
        est = max(est, ev * 1000 * 110)
    if "linkbench" in o.workloads:
        est = max(est, o.lb_maxid * 1400)
    if "tpcb" in o.workloads:
        est = max(est, o.tpcb_scale * 16 << 20)
    if "tables" in o.workloads:
        est = max(est, o.tb_rows * 2 * 250)
    est += parse_size(o.max_wal_size) * 2
    # an interleaved run keeps both variants' data at once
    return (est * 2 if o.interleave else est), exact


def choose_workdir(o):
    if o.workdir:
        base = o.workdir
    else:
        base = "/tmp"
        if fs_type(base) == "tmpfs":
            base = "/var/tmp"
    if fs_type(base) == "tmpfs":
        raise BenchError("%s is a tmpfs: data there lives in RAM (and is charged to the memory cgroup), "
                         "which would falsify the I/O numbers; pass --workdir on a disk" % base)
    os.makedirs(base, exist_ok=True)
    st = os.statvfs(base)
    free = st.f_bavail * st.f_frsize
    need, exact = estimate_disk(o)
    if need > free and exact:
        raise BenchError("not enough disk space in %s: the run needs ~%s, %s free (lower the row counts "
                         "or pass --workdir)" % (base, fmt_bytes(need), fmt_bytes(free)))
    if need > free:
        warn("the duration-limited phases may need up to ~%s in %s, %s free; watch the disk or use row "
             "counts (--insert-rows, --ts-events)" % (fmt_bytes(need), base, fmt_bytes(free)))
    wd = tempfile.mkdtemp(prefix="fractam-bench.", dir=base)
    os.chmod(wd, 0o755)
    shutil.chown(wd, "postgres", "postgres")
    return wd


# ----------------------------------------------------------------------------------------------
# measurement context for one (variant, workload)

class PhaseFailed(Exception):
    pass


SNAP_SQL = """
SELECT json_build_object(
  'wal_records', w.wal_records, 'wal_fpi', w.wal_fpi, 'wal_bytes', w.wal_bytes,
  'lsn', pg_current_wal_lsn()::text,
  'buffers_checkpoint', b.buffers_checkpoint, 'buffers_clean', b.buffers_clean,
  'buffers_backend', b.buffers_backend, 'checkpoints', b.checkpoints_timed + b.checkpoints_req,
  'blks_read', d.blks_read, 'blks_hit', d.blks_hit, 'db_size', pg_database_size(current_database()),
  'wal_dir', (SELECT coalesce(sum(size), 0) FROM pg_ls_waldir()))
FROM pg_stat_wal w, pg_stat_bgwriter b, pg_stat_database d WHERE d.datname = current_database()
"""

# shape of every fractam index (reads the whole index: only at the end of a workload)
FRACTAM_STATS_SQL = """
SELECT coalesce(json_agg(json_build_object('name', c.relname, 'height', s.height,
  'leaf_pages', s.leaf_pages, 'buffer_pages', s.buffer_pages, 'routing_pages', s.routing_pages,
  'leaf_items', s.leaf_items, 'buffered_messages', s.buffered_messages, 'free_pages', s.free_pages,
  'avg_flush_size', s.avg_flush_size, 'upper_buffer_pages', s.upper_buffer_pages,
  'upper_buffered_messages', s.upper_buffered_messages, 'moves', s.moves,
  'avg_move_size', s.avg_move_size) ORDER BY c.relname), '[]')
FROM pg_class c JOIN pg_am am ON am.oid = c.relam, LATERAL fractam_stats(c.oid) s
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'i' AND am.amname = 'fractam_index'
"""

SIZES_SQL = """
SELECT coalesce(json_agg(json_build_object('name', c.relname, 'kind', c.relkind, 'am', am.amname,
  'table', t.relname,
  'bytes', CASE WHEN c.relkind = 'r' THEN pg_table_size(c.oid) ELSE pg_total_relation_size(c.oid) END)
  ORDER BY c.relkind DESC, c.relname), '[]')
FROM pg_class c LEFT JOIN pg_am am ON am.oid = c.relam
LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')
"""


def lsn_int(s):
    hi, lo = s.split("/")
    return (int(hi, 16) << 32) + int(lo, 16)


class Ctx:
    def __init__(self, o, srv, cg, dev, variant, workload, outdir, pk_btree):
        self.o, self.srv, self.cg, self.dev = o, srv, cg, dev
        self.variant, self.workload = variant, workload
        self.v = VARIANTS[variant]
        self.db = workload
        self.outdir = outdir
        self.pk_btree = pk_btree
        self.phases = []
        # what results.json records of this (variant, workload)
        self.run = {"status": "ok", "phases": self.phases,
                    "pk": "btree PRIMARY KEY" if pk_btree else "UNIQUE fractam index",
                    "secondary_am": self.v["sec"], "table_am": self.v["tam"]}
        self.hists = {}  # latency histogram of each stream of the last pgbench phase
        self.env = dict(os.environ)
        self.env.pop("PGOPTIONS", None)
        if self.v["tam"] != "heap":
            self.env["PGOPTIONS"] = "-c default_table_access_method=%s" % self.v["tam"]
        self.seed = o.seed

    # -- helpers
    def sql_vars(self):
        sec = self.v["sec"]
        return {"tam": self.v["tam"],
                "topts": with_clause(self.o.fractam_table_opts) if self.v["tam"] != "heap" else "",
                "pk_btree": "true" if self.pk_btree else "false",
                "pkopts": with_clause(self.o.fractam_index_opts),
                "sam": sec,
                "sopts": with_clause(self.o.fractam_index_opts if sec == "fractam" else self.o.btree_index_opts)}

    def psql_file(self, path, extra_vars=None):
        variables = self.sql_vars()
        variables.update(extra_vars or {})
        r = self.srv.psql(self.db, file=path, variables=variables, env=self.env)
        return r.stdout

    def q(self, sql):
        return self.srv.query(self.db, sql)

    def check_server(self):
        """Called after something failed: turn an OOM kill inside the cgroup (of the postmaster or of
        a backend, after which the postmaster restarts) into a clear settings error."""
        if self.cg and self.cg.oom_kills() > self.cg.oom_kills_at_start:
            raise BenchError(
                "the OOM killer killed %d server process(es) inside the memory cgroup (limit %s, "
                "shared_buffers %s): the limit is below what the server needs for this workload; raise "
                "--mem-limit or lower --shared-buffers / --clients\n--- server log tail ---\n%s"
                % (self.cg.oom_kills() - self.cg.oom_kills_at_start, fmt_bytes(self.o.mem_limit_b),
                   fmt_bytes(self.o.shared_buffers_b), self.srv.log_tail(12)))
        if not self.srv.alive():
            raise PhaseFailed("the server died\n--- server log tail ---\n" + self.srv.log_tail())

    def snapshot(self):
        s = {"t": time.time(), "host_busy_s": host_cpu_busy_s(), "host_steal_s": host_cpu_steal_s(),
             "loadavg": loadavg()}
        pm = self.srv.pm_pid()
        s.update(server_proc_stats(pm) if pm else {})
        d = diskstats(self.dev)
        if d:
            s["dev_read_bytes"], s["dev_write_bytes"] = d["read_bytes"], d["write_bytes"]
        try:
            s.update(json.loads(self.q(SNAP_SQL)))
        except SQLError as e:
            self.check_server()
            raise PhaseFailed("statistics query failed: %s" % e)
        s["ru_children"] = resource.getrusage(resource.RUSAGE_CHILDREN)
        if self.cg:
            s["mem_usage"] = self.cg.usage()
            s["mem_failcnt"] = self.cg.failcnt()
        return s

    def sizes(self, shape=True):
        """Relation sizes; with shape, also fractam_stats() of every fractam index, which reads the
        whole index (through shared buffers and the page cache: not between interleaved slices)."""
        try:
            out = {"relations": json.loads(self.q(SIZES_SQL)),
                   "db": int(self.q("SELECT pg_database_size(current_database())")),
                   "live_rows": int(self.q("SELECT coalesce(sum(n_live_tup), 0) FROM pg_stat_user_tables"))}
        except (SQLError, ValueError) as e:
            return {"error": str(e)}
        if shape and any(r.get("am") == "fractam_index" for r in out["relations"]):
            try:
                out["fractam_stats"] = json.loads(self.q(FRACTAM_STATS_SQL))
            except (SQLError, ValueError) as e:
                out["fractam_stats_error"] = str(e)
        return out

    def deltas(self, a, b, norm_rows):
        def d(k):
            if k in a and k in b and a[k] is not None and b[k] is not None:
                return b[k] - a[k]
            return None
        ru_a, ru_b = a["ru_children"], b["ru_children"]
        io = {"wal_bytes": d("wal_bytes"), "wal_fpi": d("wal_fpi"), "wal_records": d("wal_records"),
              "lsn_bytes": lsn_int(b["lsn"]) - lsn_int(a["lsn"]) if "lsn" in a and "lsn" in b else None,
              "srv_write_bytes": d("write_bytes"), "srv_read_bytes": d("read_bytes"),
              "dev_write_bytes": d("dev_write_bytes"), "dev_read_bytes": d("dev_read_bytes"),
              "cpu_server_s": d("cpu_s"),
              "cpu_client_s": (ru_b.ru_utime + ru_b.ru_stime) - (ru_a.ru_utime + ru_a.ru_stime),
              "checkpoints": d("checkpoints"), "blks_read": d("blks_read"), "blks_hit": d("blks_hit"),
              "db_size_after": b.get("db_size"), "wal_dir_after": b.get("wal_dir"),
              "mem_usage_after": b.get("mem_usage"),
              "mem_failcnt": d("mem_failcnt")}
        # CPU that other processes on the host used meanwhile: noise from a shared machine
        if io["cpu_server_s"] is not None and d("host_busy_s") is not None:
            io["cpu_other_s"] = max(0.0, d("host_busy_s") - io["cpu_server_s"] - io["cpu_client_s"])
            io["cpu_other_pct"] = 100.0 * io["cpu_other_s"] / max(1e-3, d("t") * NCPU)
        # CPU the hypervisor gave to other guests ("steal"): this machine simply ran slower
        if d("host_steal_s") is not None:
            io["cpu_steal_s"] = d("host_steal_s")
            io["cpu_steal_pct"] = 100.0 * io["cpu_steal_s"] / max(1e-3, d("t") * NCPU)
        io["elapsed_s"] = d("t")
        io["loadavg_after"] = b.get("loadavg")
        bw = [d(k) for k in ("buffers_checkpoint", "buffers_clean", "buffers_backend")]
        io["buffers_written_bytes"] = sum(bw) * 8192 if None not in bw else None
        io["norm_rows"] = norm_rows
        return io

    # -- sampler: server write/read bytes, CPU and cgroup memory once a second
    def start_sampler(self, t0):
        samples = []
        stop = threading.Event()
        pm = self.srv.pm_pid()

        def loop():
            while not stop.wait(1.0):
                try:
                    st = server_proc_stats(pm)
                    samples.append((time.time() - t0, st["write_bytes"], st["read_bytes"], st["cpu_s"],
                                    self.cg.usage() if self.cg else None))
                except Exception:
                    pass
        th = threading.Thread(target=loop, daemon=True)
        th.start()
        return samples, stop, th

    def phase_record(self, name, label, kind, unit):
        ph = {"name": name, "label": label, "kind": kind, "unit": unit, "status": "running"}
        self.phases.append(ph)
        return ph

    # -- a phase made of one SQL file or statement list run through psql
    def sql_phase(self, name, label, path=None, sql=None, rows=None, unit="rows"):
        ph = self.phase_record(name, label, "sql", unit)
        log("%-15s %-10s %-7s %s" % (self.variant, self.workload, name, label))
        if self.cg:
            self.cg.reset_max_usage()
        before = self.snapshot()
        t0 = time.time()
        try:
            if path:
                out = self.psql_file(path)
            else:
                out = ""
                for s in sql:
                    out += self.srv.psql(self.db, s, env=self.env).stdout
        except SQLError as e:
            self.check_server()
            ph["status"] = "failed"
            ph["error"] = str(e)
            raise PhaseFailed("%s failed: %s" % (name, e))
        t1 = time.time()
        time.sleep(0.3)
        after = self.snapshot()
        ph["elapsed_s"] = t1 - t0
        timings = [float(l.split()[1]) / 1000.0 for l in out.splitlines() if l.startswith("Time: ")]
        if timings:
            ph["statement_secs"] = timings
        ph["rows"] = rows
        if rows:
            ph["rows_per_s"] = rows / ph["elapsed_s"]
        ph["io"] = self.deltas(before, after, rows)
        ph["sizes"] = self.sizes()
        ph["mem_max"] = self.cg.max_usage() if self.cg else None
        ph["status"] = "ok"
        self.print_phase(ph)
        return ph

    # -- a phase running an external command (pgbench -i)
    def cmd_phase(self, name, label, argv, rows, unit="rows"):
        ph = self.phase_record(name, label, "cmd", unit)
        log("%-15s %-10s %-7s %s" % (self.variant, self.workload, name, label))
        before = self.snapshot()
        t0 = time.time()
        with open(os.path.join(self.outdir, name + ".out"), "w") as f:
            p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=self.env, cwd=self.outdir)
            _children.add(p)
            rc = p.wait()
            _children.discard(p)
        t1 = time.time()
        if rc != 0:
            self.check_server()
            ph["status"] = "failed"
            ph["error"] = open(os.path.join(self.outdir, name + ".out")).read()[-2000:]
            raise PhaseFailed("%s failed:\n%s" % (name, ph["error"]))
        time.sleep(0.3)
        after = self.snapshot()
        ph["elapsed_s"] = t1 - t0
        ph["rows"] = rows
        ph["rows_per_s"] = rows / ph["elapsed_s"]
        ph["io"] = self.deltas(before, after, rows)
        ph["sizes"] = self.sizes()
        ph["status"] = "ok"
        self.print_phase(ph)
        return ph

    # -- a phase of one or more concurrent pgbench processes ("streams")
    def pgbench_phase(self, name, label, streams, main, norm=None, unit="rows", shape=True):
        """streams: list of dicts with keys name, role, scripts [(path, weight, rows_per_txn)] or
        builtin, clients, duration | transactions, rate (transactions/s), target_rows (rows/s),
        defines {}."""
        ph = self.phase_record(name, label, "pgbench", unit)
        ph["main"] = main
        norm = norm or main
        log("%-15s %-10s %-7s %s" % (self.variant, self.workload, name, label))
        if self.cg:
            self.cg.reset_max_usage()
        before = self.snapshot()
        procs = []
        t0 = time.time()
        samples, stop, th = self.start_sampler(t0)
        try:
            for i, st in enumerate(streams):
                prefix = os.path.join(self.outdir, "%s.%s" % (name, st["name"]))
                for old in glob.glob(prefix + ".*"):
                    os.unlink(old)  # logs of an earlier run into the same --out directory
                clients = st.get("clients", 1)
                argv = [self.srv.bin("pgbench"), "-n", "-M", st.get("mode", "prepared")] + \
                    self.srv.conninfo() + ["-c", str(clients), "-j", str(min(clients, NCPU)),
                                           "-P", "1", "-l", "--log-prefix=" + prefix,
                                           "--random-seed=%d" % (self.seed + i)]
                if st.get("duration"):
                    argv += ["-T", str(int(st["duration"]))]
                else:
                    argv += ["-t", str(int(st["transactions"]))]
                if st.get("rate"):
                    argv += ["-R", "%g" % st["rate"]]
                for k, v in st.get("defines", {}).items():
                    argv += ["-D", "%s=%s" % (k, v)]
                if st.get("builtin"):
                    argv += ["-b", st["builtin"]]
                for path, weight, _rows in st.get("scripts", []):
                    argv += ["-f", "%s@%d" % (path, weight)]
                argv.append(self.db)
                st["argv"] = argv
                out = open(prefix + ".out", "w")
                err = open(prefix + ".err", "w")
                p = subprocess.Popen(argv, stdout=out, stderr=err, cwd=self.outdir, env=self.env)
                _children.add(p)
                procs.append((st, p, prefix, out, err))
            last_note = time.time()
            # table sizes a third into a timed phase: a queue's (FIFO) table must stay the size it
            # had then (issue 10: within 10 % at the end)
            third = max([st["duration"] for st in streams if st.get("duration")] or [0]) / 3.0
            while any(p.poll() is None for _, p, _, _, _ in procs):
                time.sleep(0.2)
                if third and "sizes_third" not in ph and time.time() - t0 >= third:
                    ph["sizes_third"] = self.sizes(shape=False)
                # a failed stream ends the phase (e.g. the writer died: queries alone mean nothing)
                if any(p.poll() not in (None, 0) for _, p, _, _, _ in procs):
                    for _, p, _, _, _ in procs:
                        if p.poll() is None:
                            p.terminate()
                if time.time() - last_note > 30 and not self.o.quick:
                    last_note = time.time()
                    self.note_progress(procs)
            t1 = time.time()
        finally:
            stop.set()
            th.join(2)
            for _, p, _, out, err in procs:
                if p.poll() is None:
                    p.terminate()
                    p.wait()
                _children.discard(p)
                out.close()
                err.close()
        failed = [(st, p, prefix) for st, p, prefix, _, _ in procs if p.returncode != 0]
        if failed:
            self.check_server()
            msgs = []
            for st, p, prefix in failed:
                errtxt = open(prefix + ".err", errors="replace").read()
                errlines = [l for l in errtxt.splitlines() if not l.startswith("progress:")]
                msgs.append("pgbench stream %r exited with %s:\n%s" % (st["name"], p.returncode,
                                                                       "\n".join(errlines[-12:])))
            ph["status"] = "failed"
            ph["error"] = "\n".join(msgs)
            raise PhaseFailed("%s failed: %s" % (name, ph["error"]))
        time.sleep(0.5)  # let the backends exit and flush their statistics
        after = self.snapshot()
        ph["elapsed_s"] = t1 - t0
        secs = int(math.ceil(t1 - t0))
        ph["streams"] = {}
        for st, p, prefix, _, _ in procs:
            rows_list = [r for _, _, r in st.get("scripts", [])] or [st.get("rows_per_txn", 1)]
            parsed = stats.parse_pgbench_logs(prefix, t0, rows_list)
            self.hists[st["name"]] = parsed["hist"]
            gzip_logs(prefix)
            per_sec = parsed["per_sec"]
            series = stats.rate_series(per_sec, secs)
            txns = sum(b[0] for b in per_sec.values())
            rows = sum(b[1] for b in per_sec.values())
            span = (parsed["last"] - parsed["first"]) if parsed["first"] else (t1 - t0)
            span = max(span, 1e-3)
            sr = {"role": st.get("role", "write"), "clients": st.get("clients", 1), "txns": txns,
                  "rows": rows, "span_s": span, "rows_per_s": rows / span, "tps": txns / span,
                  "lat_ms": parsed["hist"].summary_ms(), "failed": parsed["failed"],
                  "skipped": parsed["skipped"], "series": series,
                  "series_txns": [per_sec.get(s, [0])[0] for s in range(secs)],
                  "series_lat_avg_ms": [(per_sec[s][2] / per_sec[s][0] / 1000.0) if s in per_sec else None
                                        for s in range(secs)],
                  "series_lat_max_ms": [(per_sec[s][3] / 1000.0) if s in per_sec else None
                                        for s in range(secs)],
                  "argv": " ".join(st["argv"])}
            if st.get("scripts"):
                sr["scripts"] = {}
                for idx, (path, weight, _r) in enumerate(st["scripts"]):
                    h = parsed["per_script"].get(idx)
                    sr["scripts"][os.path.basename(path)] = {
                        "weight": weight, "lat_ms": h.summary_ms() if h else {"n": 0}}
            if st.get("target_rows"):
                tgt = st["target_rows"]
                sr["target_rows_per_s"] = tgt
                sr["target_pct"] = 100.0 * sr["rows_per_s"] / tgt
                inner = series[1:-1]
                # -R uses Poisson arrivals: judge each full 10-s window, not each second
                wins = [sum(inner[i:i + 10]) / 10.0 for i in range(0, len(inner) - 9, 10)]
                if wins:
                    sr["target_missed_windows"] = sum(1 for w in wins if w < 0.95 * tgt)
                    sr["target_windows"] = len(wins)
            ph["streams"][st["name"]] = sr
        ph["stall"] = stats.stall_metrics(ph["streams"][main]["series"])
        ph["rows"] = ph["streams"][norm]["rows"]
        ph["io"] = self.deltas(before, after, ph["rows"])
        ph["sizes"] = self.sizes(shape)
        ph["mem_max"] = self.cg.max_usage() if self.cg else None
        # server time series from the sampler: per-second deltas
        ss = []
        prev = None
        for t, wb, rb, cpu, mem in samples:
            if prev:
                dt = t - prev[0]
                ss.append({"t": round(t, 1), "write_Bps": (wb - prev[1]) / dt, "read_Bps": (rb - prev[2]) / dt,
                           "cpu_pct": 100.0 * (cpu - prev[3]) / dt, "mem": mem})
            prev = (t, wb, rb, cpu, mem)
        ph["server_series"] = ss
        ph["status"] = "ok"
        self.print_phase(ph)
        return ph

    def note_progress(self, procs):
        for st, p, prefix, _, _ in procs:
            try:
                with open(prefix + ".err", errors="replace") as f:
                    lines = [l for l in f.read().splitlines() if l.startswith("progress:")]
                if lines:
                    log("    %s: %s" % (st["name"], lines[-1]))
            except OSError:
                pass

    def print_phase(self, ph):
        io = ph.get("io", {})
        rows = ph.get("rows") or 0
        parts = ["%5.1f s" % ph.get("elapsed_s", 0)]
        if ph["kind"] == "pgbench":
            for sname, sr in ph["streams"].items():
                unit = "q/s" if sr["role"] == "query" else ("%s/s" % ph["unit"] if sname == ph["main"]
                                                            else "rows/s")
                rate = sr["tps"] if sr["role"] == "query" else sr["rows_per_s"]
                lat = sr["lat_ms"]
                parts.append("%s %s %s p99 %s ms" % (sname, report.num(rate), unit,
                                                      report.num(lat.get("p99"))))
        elif ph.get("rows_per_s"):
            parts.append("%s rows/s" % report.num(ph["rows_per_s"]))
        per = "row" if ph["unit"] in ("rows", "queries") else ph["unit"].rstrip("s")
        if rows and io.get("srv_write_bytes") is not None:
            parts.append("written %s/%s (WAL %s/%s)" % (fmt_bytes(io["srv_write_bytes"] / rows), per,
                                                        fmt_bytes((io.get("wal_bytes") or 0) / rows), per))
        if io.get("db_size_after"):
            parts.append("db %s" % fmt_bytes(io["db_size_after"]))
        log("%-15s %-10s %-7s   %s" % ("", "", "", ", ".join(parts)))


def gzip_logs(prefix):
    """Compress the per-transaction logs once parsed (long query phases write millions of lines)."""
    for fname in glob.glob(prefix + ".*"):
        if re.match(r"^\.\d+(\.\d+)?$", fname[len(prefix):]) and os.path.getsize(fname) > (1 << 20):
            with open(fname, "rb") as fi, gzip.open(fname + ".gz", "wb", compresslevel=3) as fo:
                shutil.copyfileobj(fi, fo, 1 << 20)
            os.unlink(fname)


# ----------------------------------------------------------------------------------------------
# workloads

def iibench_file(o, n):
    return os.path.join(SQL, "iibench", "%s_%s.sql" % (n, o.ii_schema))


def count_args(rows, secs, batch, clients):
    if rows:
        return {"transactions": max(1, int(math.ceil(rows / float(batch) / clients)))}
    return {"duration": secs}


def run_iibench(ctx, phases=None):
    o = ctx.o
    S = o.ii_schema
    tbl = "pi1" if S == "callaghan" else "purchases_index"

    def f(n):
        return iibench_file(o, n)
    ph = o.ii_phase_list if phases is None else phases
    ctx.psql_file(f("schema"))
    t_load0 = int(time.time())
    nc = o.ii_clients
    if "load" in ph:
        ctx.pgbench_phase("l.i0", "load in PK order, no secondary indexes (%d rows/txn)" % o.load_batch,
                          [dict(name="insert", scripts=[(f("insert"), 1, o.load_batch)], clients=nc,
                                defines={"rpc": o.load_batch},
                                **count_args(o.load_rows, None, o.load_batch, nc))],
                          main="insert")
    if "index" in ph:
        nrows = int(ctx.q("SELECT count(*) FROM %s" % tbl))
        ctx.sql_phase("l.x", "create the 3 secondary indexes (%s)" % ctx.v["sec"], path=f("indexes"),
                      rows=nrows)
    if "insert" in ph:
        ctx.pgbench_phase("l.i1", "insert with all indexes (%d rows/txn)" % o.insert_batch,
                          [dict(name="insert", scripts=[(f("insert"), 1, o.insert_batch)], clients=nc,
                                defines={"rpc": o.insert_batch},
                                **count_args(o.insert_rows, o.insert_secs, o.insert_batch, nc))],
                          main="insert")
    if "fifo" in ph:
        lo = int(ctx.q("SELECT coalesce(min(transactionid), 1) FROM %s" % tbl))
        ctx.pgbench_phase("l.i2", "insert+delete FIFO, table size constant (%d rows/txn)" % o.fifo_batch,
                          [dict(name="insdel", scripts=[(f("insdel"), 1, o.fifo_batch)], clients=nc,
                                defines={"rpc": o.fifo_batch, "lo": lo, "n": 0, "nclients": nc},
                                **count_args(o.fifo_rows, o.fifo_secs, o.fifo_batch, nc))],
                          main="insdel")
    qkinds = [k for k in ("qr", "qp") if k in ph]
    if qkinds:
        ctx.sql_phase("vacuum", "VACUUM (ANALYZE, INDEX_CLEANUP ON); CHECKPOINT",
                      sql=["VACUUM (ANALYZE, INDEX_CLEANUP ON) %s" % tbl, "CHECKPOINT"], unit="rows")
        if o.settle_secs:
            log("settling %d s before the query phases" % o.settle_secs)
            time.sleep(o.settle_secs)
        ctx.plans = iibench_plans(ctx, tbl)
        for rate in o.query_rate_list:
            for k in qkinds:
                lo = int(ctx.q("SELECT coalesce(min(transactionid), 1) FROM %s" % tbl))
                batch = o.fifo_batch
                writer = dict(name="writer", role="write", scripts=[(f("insdel"), 1, batch)], clients=1,
                              defines={"rpc": batch, "lo": lo, "n": 0, "nclients": 1},
                              duration=o.query_secs, rate=rate / float(batch), target_rows=rate)
                qfile = f("query_range" if k == "qr" else "query_point")
                qdef = {"n": 0}
                if S == "tokutek" and k == "qr":
                    qdef.update({"t0": t_load0, "t1": int(time.time())})
                query = dict(name="query", role="query", scripts=[(qfile, 1, 1)], clients=o.query_clients,
                             defines=qdef, duration=o.query_secs)
                what = "range" if k == "qr" else "point"
                ctx.pgbench_phase("%s%d" % (k, rate),
                                  "%s queries while a writer inserts+deletes %d rows/s" % (what, rate),
                                  [writer, query], main="query", norm="writer", unit="queries")


def explain(ctx, sql):
    try:
        return ctx.srv.psql(ctx.db, "EXPLAIN (COSTS OFF) " + sql, env=ctx.env).stdout.rstrip()
    except SQLError as e:
        return "EXPLAIN failed: %s" % e.err


def iibench_plans(ctx, tbl):
    if tbl == "pi1":
        qs = ["SELECT productid, customerid, price FROM pi1 WHERE productid >= 5000 "
              "ORDER BY productid, customerid, price LIMIT 10",
              "SELECT cashregisterid, customerid, price FROM pi1 WHERE cashregisterid > 500 "
              "ORDER BY cashregisterid, customerid, price LIMIT 10",
              "SELECT price, dateandtime, customerid FROM pi1 WHERE price >= 250 "
              "ORDER BY price, dateandtime, customerid LIMIT 10",
              "SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)"]
    else:
        qs = ["SELECT price, customerid FROM purchases_index WHERE price >= 500 AND (price > 500 OR "
              "customerid >= 100) ORDER BY price, customerid LIMIT 10",
              "SELECT cashregisterid, price, customerid FROM purchases_index WHERE cashregisterid >= 500 AND "
              "(cashregisterid > 500 OR price > 10 OR (price = 10 AND customerid >= 5)) "
              "ORDER BY cashregisterid, price, customerid LIMIT 10",
              "SELECT transactionid FROM purchases_index WHERE transactionid >= 1000 ORDER BY transactionid LIMIT 10"]
    return [(q, explain(ctx, q)) for q in qs]


def run_timeseries(ctx):
    o = ctx.o
    d = os.path.join(SQL, "timeseries")
    for keys in o.ts_key_list:
        for dist in o.ts_dist_list:
            ctx.psql_file(os.path.join(d, "schema.sql"), {"key_unique": "true" if keys == "unique" else "false"})
            st = dict(name="insert", scripts=[(os.path.join(d, "insert_%s.sql" % dist), 1, 1000)],
                      clients=o.ts_clients, defines={"ts": int(time.time())})
            if o.ts_events:
                st["transactions"] = o.ts_events
            else:
                st["duration"] = o.ts_secs
            ctx.pgbench_phase("ts-" + dist[:4] + ("" if keys == "unique" else "-plain"),
                              "%s values: 1000-row INSERTs, %d clients each owning 1000 sensors%s"
                              % (dist, o.ts_clients, "" if keys == "unique" else
                                 "; non-unique index on (sensor_id, ts) instead of the primary key"),
                              [st], main="insert")


LB_OPS = [("lb_getlinklist", 5071), ("lb_getnode", 1293), ("lb_addlink", 899), ("lb_updatelink", 801),
          ("lb_updatenode", 737), ("lb_countlink", 489), ("lb_deletelink", 299), ("lb_addnode", 257),
          ("lb_deletenode", 101), ("lb_getlink", 53)]


def run_linkbench(ctx):
    o = ctx.o
    d = os.path.join(SQL, "linkbench")
    ctx.psql_file(os.path.join(d, "schema.sql"))
    chunk = 2048 if o.lb_maxid >= 2048 * o.lb_loaders else max(64, o.lb_maxid // (4 * o.lb_loaders))
    nl = o.lb_loaders
    ntx = int(math.ceil(o.lb_maxid / float(chunk) / nl))
    ctx.pgbench_phase("load", "load %d nodes with their links and counts (%d loaders, %d nodes/txn)"
                      % (o.lb_maxid, nl, chunk),
                      [dict(name="load", scripts=[(os.path.join(d, "load.sql"), 1, chunk)], clients=nl,
                            defines={"maxid": o.lb_maxid, "chunk": chunk, "nclients": nl, "n": 0},
                            transactions=ntx)], main="load", unit="nodes")
    ctx.q("SELECT setval('nodetable_id_seq', %d)" % o.lb_maxid)
    nlinks = int(ctx.q("SELECT count(*) FROM linktable"))
    ctx.phases[-1]["links_loaded"] = nlinks
    ctx.sql_phase("index", "create the covering index id1_type (%s)" % ctx.v["sec"],
                  path=os.path.join(d, "indexes.sql"), rows=nlinks)
    ctx.sql_phase("vacuum", "VACUUM ANALYZE; CHECKPOINT", sql=["VACUUM ANALYZE", "CHECKPOINT"])
    ctx.plans = [(q, explain(ctx, q)) for q in [
        "SELECT id1, id2, link_type, visibility, data, time, version FROM linktable WHERE id1 = 7 AND "
        "link_type = 1 AND time >= 0 AND time <= 9999999999 AND visibility = 1 ORDER BY time DESC "
        "LIMIT 10000 OFFSET 0",
        "SELECT count FROM counttable WHERE id = 7 AND link_type = 1"]]
    scripts = [(os.path.join(d, n + ".sql"), w, 1) for n, w in LB_OPS]
    ctx.pgbench_phase("requests", "LinkBench operation mix, %d clients" % o.lb_clients,
                      [dict(name="ops", scripts=scripts, clients=o.lb_clients,
                            defines={"maxid": o.lb_maxid}, duration=o.lb_secs)],
                      main="ops", unit="ops")


def run_tpcb(ctx):
    o = ctx.o
    d = os.path.join(SQL, "tpcb")
    argv = [ctx.srv.bin("pgbench"), "-i", "-q", "-I", "dtgv", "-s", str(o.tpcb_scale)] + \
        ctx.srv.conninfo() + [ctx.db]
    ctx.cmd_phase("init", "pgbench -i -I dtgv -s %d (tables, data, vacuum; no keys)" % o.tpcb_scale, argv,
                  rows=o.tpcb_scale * 100000)
    ctx.sql_phase("keys", "keys: %s" % ("PRIMARY KEYs (btree)" if ctx.pk_btree else "UNIQUE fractam indexes"),
                  path=os.path.join(d, "indexes.sql"), rows=o.tpcb_scale * 100000)
    ctx.sql_phase("vacuum", "VACUUM ANALYZE; CHECKPOINT", sql=["VACUUM ANALYZE", "CHECKPOINT"])
    ctx.pgbench_phase("tpcb", "pgbench built-in tpcb-like, %d clients" % o.tpcb_clients,
                      [dict(name="tpcb", builtin="tpcb-like", rows_per_txn=1, clients=o.tpcb_clients,
                            duration=o.tpcb_secs)], main="tpcb", unit="txn")


# tables: COPY's rows, generated by the server's awk (the same for every variant)
TB_COPY = ("COPY tb FROM PROGRAM 'awk ''BEGIN { for (i = 1; i <= %d; i++) "
           "printf \"%%d,%%d,2026-01-01 00:00:00+00,%%.2f,%%s\\n\", i, (i * 7919) %% 1000003, "
           "(i %% 100000) / 7.0, \"abcdefghijklmnopqrstuvwxyz0123456789\" }''' WITH (FORMAT csv)")


def run_tables(ctx):
    """What the table access method adds: bulk loads (COPY's multi_insert, INSERT ... SELECT) into a
    table with its indexes, sequential and index-only scans after VACUUM, point and range queries
    through the primary key, and the bytes on disk and in WAL per row."""
    o = ctx.o
    d = os.path.join(SQL, "tables")
    n = o.tb_rows
    ctx.psql_file(os.path.join(d, "schema.sql"))
    ctx.sql_phase("copy", "COPY FROM of %s rows into a table with its primary key and one secondary "
                  "index" % "{:,}".format(n), sql=[TB_COPY % n], rows=n)
    ctx.sql_phase("insel", "INSERT ... SELECT of the same rows into a second such table",
                  sql=["INSERT INTO tb2 SELECT * FROM tb"], rows=n)
    ctx.sql_phase("vacuum", "VACUUM ANALYZE; CHECKPOINT", sql=["VACUUM ANALYZE", "CHECKPOINT"], rows=2 * n)
    ctx.sql_phase("seqscan", "sequential scan, 3 times: SELECT count(*), sum(v) FROM tb",
                  sql=["SET max_parallel_workers_per_gather = 0; SET enable_indexscan = off; "
                       "SET enable_indexonlyscan = off; SET enable_bitmapscan = off; "
                       "SELECT count(*), sum(v) FROM tb; SELECT count(*), sum(v) FROM tb; "
                       "SELECT count(*), sum(v) FROM tb"], rows=3 * n)
    ctx.sql_phase("ioscan", "index-only scan of the primary key, 3 times: SELECT count(*) FROM tb",
                  sql=["SET max_parallel_workers_per_gather = 0; SET enable_seqscan = off; "
                       "SET enable_bitmapscan = off; "
                       "SELECT count(*) FROM tb; SELECT count(*) FROM tb; SELECT count(*) FROM tb"],
                  rows=3 * n)
    for name, label in (("point", "point queries through the primary key, 1 client"),
                        ("range", "100-row range queries through the primary key, 1 client")):
        ctx.pgbench_phase(name, label, [dict(name=name, scripts=[(os.path.join(d, name + ".sql"), 1, 1)],
                                             clients=1, defines={"n": n}, duration=o.tb_secs)],
                          main=name, unit="queries")


RUNNERS = {"iibench": run_iibench, "timeseries": run_timeseries, "linkbench": run_linkbench,
           "tpcb": run_tpcb, "tables": run_tables}
HAS_SECONDARY = {"iibench": True, "linkbench": True, "timeseries": False, "tpcb": False, "tables": True}


def pk_is_btree(o, variant, workload):
    v = VARIANTS[variant]
    if v["sec"] == "btree":
        return True
    if o.fractam_pk == "btree":
        return True
    if o.fractam_pk == "fractam":
        return False
    return v["tam"] == "heap" and HAS_SECONDARY[workload]


# ----------------------------------------------------------------------------------------------
# fractam availability probe (on the first server that runs)

PROBE_SQL = [
    "CREATE EXTENSION fractam",
    "CREATE TABLE fractam_probe (a int, b text)",
    "CREATE INDEX fractam_probe_a ON fractam_probe USING fractam (a)",
    "INSERT INTO fractam_probe SELECT g, md5(g::text) FROM generate_series(1, 5000) g",
    "SET enable_seqscan = off; SELECT count(*) FROM fractam_probe WHERE a BETWEEN 100 AND 199",
]


def probe_fractam(srv):
    """Returns {variant: None if usable else reason}."""
    res = {}
    srv.psql("postgres", "CREATE DATABASE fractam_probe")
    try:
        for sql in PROBE_SQL:
            try:
                out = srv.psql("fractam_probe", sql).stdout.strip()
            except SQLError as e:
                reason = "fractam index smoke test failed: %s -> %s" % (sql, e.err)
                return {"heap-fractam": reason, "fractam-fractam": reason}
        if out != "100":
            reason = ("fractam index smoke test returned a wrong answer: %s returned %r, expected 100"
                      % (PROBE_SQL[-1], out))
            return {"heap-fractam": reason, "fractam-fractam": reason}
        res["heap-fractam"] = None
        ams = srv.query("fractam_probe", "SELECT string_agg(amname || ':' || amtype::text, ' ' ORDER BY amname) "
                        "FROM pg_am WHERE amname LIKE 'fractam%'")
        tam = srv.query("fractam_probe", "SELECT count(*) FROM pg_am WHERE amname = 'fractam' AND amtype = 't'")
        if tam != "1":
            res["fractam-fractam"] = ("the fractam table access method does not exist yet (pg_am has no "
                                      "amname='fractam' with amtype='t'; fractam access methods: %s)" % ams)
        else:
            try:
                srv.psql("fractam_probe", "CREATE TABLE fractam_probe_t (a int) USING fractam; "
                         "INSERT INTO fractam_probe_t SELECT generate_series(1, 1000); "
                         "SELECT count(*) FROM fractam_probe_t")
                res["fractam-fractam"] = None
            except SQLError as e:
                res["fractam-fractam"] = "fractam table smoke test failed: %s" % e.err
        return res
    finally:
        srv.psql("postgres", "DROP DATABASE IF EXISTS fractam_probe", check=False)


# ----------------------------------------------------------------------------------------------
# main

def server_conf(o, port, sockdir, preload):
    backends = max_clients(o) + 12
    c = [("port", port), ("listen_addresses", "''"), ("unix_socket_directories", "'%s'" % sockdir),
         ("max_connections", max(40, backends)), ("shared_buffers", "'%dkB'" % (o.shared_buffers_b // 1024)),
         ("huge_pages", "off"), ("maintenance_work_mem", "'%dkB'" % (o.mwm_b // 1024)),
         ("autovacuum_work_mem", "'%dkB'" % (o.avwm_b // 1024)), ("autovacuum_max_workers", 4),
         ("synchronous_commit", o.sync_commit), ("fsync", "on"), ("full_page_writes", "on"),
         ("wal_compression", "off"), ("max_wal_size", "'%s'" % o.max_wal_size), ("min_wal_size", "'256MB'"),
         ("checkpoint_timeout", "'%s'" % o.checkpoint_timeout), ("checkpoint_completion_target", "0.9"),
         ("max_parallel_workers", 0), ("max_parallel_workers_per_gather", 0),
         ("max_parallel_maintenance_workers", 0), ("jit", "off"), ("track_io_timing", "on"),
         ("autovacuum_naptime", "'10s'"), ("autovacuum_vacuum_cost_delay", "'1ms'"),
         ("autovacuum_vacuum_cost_limit", 4000), ("autovacuum_vacuum_scale_factor", "0.05"),
         ("autovacuum_vacuum_insert_scale_factor", "0.05"), ("autovacuum_analyze_scale_factor", "0.05"),
         ("log_checkpoints", "on"), ("log_autovacuum_min_duration", "0"), ("log_line_prefix", "'%m [%p] '"),
         ("logging_collector", "off")]
    if preload:
        c.append(("shared_preload_libraries", "'fractam'"))
    for k, v in o.extra_conf:
        c = [(a, b) for a, b in c if a != k]
        if not (v.startswith("'") or v.replace(".", "").replace("-", "").isalnum()):
            v = "'%s'" % v.replace("'", "''")
        c.append((k, v))
    return c


def host_info(paths):
    info = {"hostname": socket.gethostname(), "ncpu": NCPU, "pg_version": paths["version"]}
    try:
        with open("/proc/meminfo") as f:
            info["mem_total"] = int(f.readline().split()[1]) * 1024
        info["kernel"] = os.uname().release
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        info["repo_commit"] = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                             universal_newlines=True).stdout.strip() or "(no commits)"
    except OSError:
        pass
    return info


def start_variant(o, vname, outdir, workdir, port, preload):
    """Create the variant's cgroup, initdb and start its scratch server; cleanup steps registered."""
    vdir = os.path.join(outdir, vname)
    os.makedirs(vdir, exist_ok=True)
    cg = None
    if not o.no_cgroup:
        cg = MemCgroup("fractam-bench-%d-%s" % (os.getpid(), vname), o.mem_limit_b)
        _cleanup.append(cg.remove)
    srv = Server(o.pg_bindir, workdir, port, server_conf(o, port, os.path.join(workdir, "sock"), preload),
                 cg, vname)
    if not o.keep_data:
        _cleanup.append(lambda d=srv.datadir: shutil.rmtree(d, ignore_errors=True))
    _cleanup.append(lambda s=srv, d=vdir: shutil.copy(s.logfile, os.path.join(d, "server.log"))
                    if os.path.exists(s.logfile) else None)
    _cleanup.append(srv.stop)
    # runs before the stop above: a paused server would not react to pg_ctl stop
    _cleanup.append(lambda s=srv, c=cg: pause_server(s, c, False))
    log("== variant %s (%s): initdb + start (%s, shared_buffers %s, port %d)" % (
        vname, VARIANTS[vname]["label"],
        "memory limit %s, %s" % (fmt_bytes(o.mem_limit_b), cg.describe()) if cg else "NO memory limit",
        fmt_bytes(o.shared_buffers_b), port))
    srv.init(o.data_checksums)
    try:
        srv.start()
    except BenchError as e:
        if preload:
            raise BenchError("%s\n(the server was started with shared_preload_libraries='fractam'; "
                             "run with --variants heap-btree to measure without fractam)" % e)
        raise
    return vdir, cg, srv


def main(argv):
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    o = parse_args(argv)
    if o.report_only:
        path = report.write_all(o.report_only)
        with open(os.path.join(o.report_only, "results.json")) as f:
            print(report.console_summary(json.load(f)))
        log("report: %s" % path)
        return 0
    o = resolve_options(o)
    if os.geteuid() != 0:
        raise BenchError("bench/run must run as root: it starts the scratch server as the postgres user "
                         "(runuser) and creates a memory cgroup")
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise BenchError("there is no 'postgres' user (install postgresql-15)")
    paths = pg_paths(o)
    installed, why_not = fractam_installed(paths)
    fractam_wanted = any(VARIANTS[v]["sec"] == "fractam" for v in o.variant_names)
    preload = installed and fractam_wanted
    unavailable = {}
    if not installed:
        for v in o.variant_names:
            if VARIANTS[v]["sec"] == "fractam":
                unavailable[v] = why_not
    if o.variants_explicit and unavailable:
        raise BenchError("; ".join("variant %s unavailable: %s" % kv for kv in unavailable.items()))
    check_memory(o)
    if o.no_cgroup:
        warn("--no-cgroup: the server runs WITHOUT a memory limit; the report says so")
    else:
        # fail early (before initdb) if cgroups are not usable
        MemCgroup("fractam-bench-check-%d" % os.getpid(), o.mem_limit_b).remove()

    stamp = time.strftime("%Y%m%d-%H%M%S")
    outdir = o.out or os.path.join(BENCH, "results", "%s-%s-%s" % (stamp, "quick" if o.quick else "full",
                                                                   "-".join(o.workloads)))
    os.makedirs(outdir, exist_ok=True)
    workdir = choose_workdir(o)
    if not o.keep_data:
        _cleanup.append(lambda: shutil.rmtree(workdir, ignore_errors=True))
    else:
        log("scratch data kept in %s" % workdir)
    port = pick_port(o)
    dev = device_of(workdir)

    res = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "mode": "quick" if o.quick else "full",
           "workloads": o.workloads, "variants": o.variant_names, "host": host_info(paths),
           "settings": {
               "mem_limit": None if o.no_cgroup else o.mem_limit_b, "no_cgroup": o.no_cgroup,
               "shared_buffers": o.shared_buffers_b, "maintenance_work_mem": o.mwm_b,
               "synchronous_commit": o.sync_commit, "max_wal_size": o.max_wal_size,
               "checkpoint_timeout": o.checkpoint_timeout, "data_checksums": o.data_checksums,
               "extra_conf": o.extra_conf, "fractam_index_opts": o.fractam_index_opts,
               "fractam_pk": o.fractam_pk, "workdir_device": dev[0] if dev else None,
               "seed": o.seed, "preload_fractam": preload},
           "variant_status": {}, "runs": {}, "command": "bench/run " + " ".join(argv)}
    res["settings"].update(duration_settings(o))
    log("results -> %s" % outdir)
    log("scratch data -> %s (device %s), port %d" % (workdir, dev[0] if dev else "?", port))
    probed = False
    durations_final = False
    exit_code = 0
    t_start = time.time()
    try:
        if o.interleave:
            exit_code = run_interleaved(o, res, outdir, workdir, port, dev, preload)
        for vname in ([] if o.interleave else o.variant_names):
            if vname in unavailable:
                log("SKIP %s: %s" % (vname, unavailable[vname]))
                res["variant_status"][vname] = {"status": "skipped", "reason": unavailable[vname]}
                continue
            vdir, cg, srv = start_variant(o, vname, outdir, workdir, port, preload)
            datadir = srv.datadir
            if preload and not probed:
                probed = True
                pr = probe_fractam(srv)
                for v, why in pr.items():
                    if why and v in o.variant_names:
                        unavailable[v] = why
                        if o.variants_explicit:
                            raise BenchError("variant %s unavailable: %s" % (v, why))
                if vname in unavailable:
                    log("SKIP %s: %s" % (vname, unavailable[vname]))
                    res["variant_status"][vname] = {"status": "skipped", "reason": unavailable[vname]}
                    run_cleanup_partial(srv, cg, datadir, o)
                    continue
            if not durations_final:
                durations_final = True
                resolve_durations(o, len([v for v in o.variant_names if v not in unavailable]))
                res["settings"].update(duration_settings(o))
            res["variant_status"][vname] = {"status": "ran"}
            res["runs"][vname] = {}
            for wl in o.workloads:
                wdir = os.path.join(vdir, wl)
                os.makedirs(wdir, exist_ok=True)
                pkb = pk_is_btree(o, vname, wl)
                srv.psql("postgres", "CREATE DATABASE %s" % wl)
                ctx = Ctx(o, srv, cg, dev, vname, wl, wdir, pkb)
                run = ctx.run
                res["runs"][vname][wl] = run
                try:
                    if VARIANTS[vname]["sec"] == "fractam" or VARIANTS[vname]["tam"] == "fractam":
                        srv.psql(wl, "CREATE EXTENSION fractam")
                    RUNNERS[wl](ctx)
                except (PhaseFailed, SQLError) as e:
                    run["status"] = "failed"
                    run["error"] = str(e)
                    exit_code = 1
                    log("FAILED %s %s: %s" % (vname, wl, e))
                if not srv.alive():
                    run["error"] = run.get("error", "") + "\nthe server is no longer running:\n" + srv.log_tail()
                    log("the %s server died; skipping its remaining workloads" % vname)
                    break
                run["final_sizes"] = ctx.sizes()
                run["plans"] = getattr(ctx, "plans", None)
                run["fractam_stats"] = fractam_stats(ctx)
                res["elapsed_s"] = time.time() - t_start
                if not o.keep_data:
                    srv.psql("postgres", "DROP DATABASE IF EXISTS %s" % wl, check=False)
            run_cleanup_partial(srv, cg, datadir, o, vdir)
    except Interrupted as e:
        log("interrupted (%s): stopping the server and cleaning up" % e)
        res["interrupted"] = True
        for wls in res["runs"].values():
            for run in wls.values():
                if any(p.get("status") == "running" for p in run["phases"]):
                    run["status"] = "interrupted"
                    run["error"] = "interrupted by a signal"
        exit_code = 130
    finally:
        run_cleanup()
        res["elapsed_s"] = time.time() - t_start
        with open(os.path.join(outdir, "results.json"), "w") as f:
            json.dump(res, f, indent=1, default=str)
    path = report.write_all(outdir)
    latest = os.path.join(BENCH, "results", "latest")
    if not o.out:
        try:
            if os.path.islink(latest):
                os.unlink(latest)
            os.symlink(os.path.basename(outdir), latest)
        except OSError:
            pass
    print()
    print(report.console_summary(res))
    log("report: %s (total %.0f s)" % (path, res["elapsed_s"]))
    return exit_code


def run_interleaved(o, res, outdir, workdir, port, dev, preload):
    """iibench with --interleave: prepare both variants (load, index) on their own servers, then run
    l.i1 as alternating slices, the idle server paused (SIGSTOP), so that a slow spell of a shared host
    hits both variants alike.  Rounds alternate the order (AB, BA, AB, ...).  After each slice the
    server's dirty page cache is written back (sync) before the other variant starts, so neither pays
    for the other's writes; that time is reported, not counted in the rates."""
    ctxs = {}
    try:
        return interleaved_phases(o, res, outdir, workdir, port, dev, preload, ctxs)
    except (PhaseFailed, SQLError) as e:
        # one side failing ends the comparison for both
        for ctx in ctxs.values():
            ctx.run["status"] = "failed"
            ctx.run["error"] = str(e)
        log("FAILED (interleaved iibench): %s" % e)
        return 1


def interleaved_phases(o, res, outdir, workdir, port, dev, preload, ctxs):
    names = o.variant_names
    host_mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if not o.no_cgroup and 2 * o.mem_limit_b > host_mem:
        raise BenchError("--interleave keeps two servers of --mem-limit %s each; the host has %s"
                         % (fmt_bytes(o.mem_limit_b), fmt_bytes(host_mem)))
    ports = []
    for vname in names:
        p = pick_port(o, exclude=ports) if ports else port
        ports.append(p)
        vdir, cg, srv = start_variant(o, vname, outdir, workdir, p, preload)
        if preload and len(ctxs) == 0:
            for v, why in probe_fractam(srv).items():
                if why and v in names:
                    raise BenchError("variant %s unavailable: %s" % (v, why))
        res["variant_status"][vname] = {"status": "ran"}
        wdir = os.path.join(vdir, "iibench")
        os.makedirs(wdir, exist_ok=True)
        pkb = pk_is_btree(o, vname, "iibench")
        srv.psql("postgres", "CREATE DATABASE iibench")
        ctx = ctxs[vname] = Ctx(o, srv, cg, dev, vname, "iibench", wdir, pkb)
        res["runs"][vname] = {"iibench": ctx.run}
        if VARIANTS[vname]["sec"] == "fractam" or VARIANTS[vname]["tam"] == "fractam":
            srv.psql("iibench", "CREATE EXTENSION fractam")
        run_iibench(ctx, phases=[x for x in o.ii_phase_list if x != "insert"])
        # both variants start l.i1 from a checkpoint and with nothing dirty in the page cache
        ctx.q("CHECKPOINT")
        pause_server(srv, cg, True)
        os.sync()

    # an even number of rounds, so that each variant goes first equally often
    nrounds = max(2, int(math.ceil(o.insert_secs / float(o.interleave))))
    nrounds += nrounds % 2
    if nrounds * o.interleave != o.insert_secs:
        warn("l.i1 runs %d rounds of %d s per variant (%d s, --insert-secs asked for %d)"
             % (nrounds, o.interleave, nrounds * o.interleave, o.insert_secs))
    res["interleave"] = {"slice_s": o.interleave, "rounds": nrounds, "order": []}
    parts = {v: [] for v in names}
    label = "insert with all indexes (%d rows/txn), %d interleaved slices of %d s" % (
        o.insert_batch, nrounds, o.interleave)
    for r in range(nrounds):
        order = names if r % 2 == 0 else names[::-1]
        res["interleave"]["order"].append(order)
        for vname in order:
            ctx = ctxs[vname]
            pause_server(ctx.srv, ctx.cg, False)
            ph = ctx.pgbench_phase("l.i1.%02d" % (r + 1), "insert slice %d of %d" % (r + 1, nrounds),
                                   [dict(name="insert", scripts=[(iibench_file(o, "insert"), 1, o.insert_batch)],
                                         clients=o.ii_clients, defines={"rpc": o.insert_batch},
                                         duration=o.interleave)],
                                   main="insert", shape=False)
            # paused first: nothing of this server runs into the other's slice, not even its
            # checkpointer while its dirty pages are written back
            pause_server(ctx.srv, ctx.cg, True)
            t0 = time.time()
            os.sync()
            sync_s = time.time() - t0
            ph["round"] = r + 1
            ctx.phases.remove(ph)
            parts[vname].append((ph, dict(ctx.hists), sync_s))
        log("round %d/%d: %s" % (r + 1, nrounds, ", ".join(
            "%s %s rows/s" % (v, report.num(parts[v][-1][0]["streams"]["insert"]["rows_per_s"])) for v in names)))
    for vname in names:
        ctx = ctxs[vname]
        pause_server(ctx.srv, ctx.cg, False)
        comb = interleave.combine(parts[vname], "l.i1", label)
        comb["sizes"] = ctx.sizes()  # reads every fractam index once (its shape)
        ctx.phases.append(comb)
        log("%-15s %-10s %-7s %s" % (vname, "iibench", "l.i1", label))
        ctx.print_phase(comb)
        ctx.run["final_sizes"] = comb["sizes"]
        ctx.run["fractam_stats"] = fractam_stats(ctx)
        run_cleanup_partial(ctx.srv, ctx.cg, ctx.srv.datadir, o, os.path.dirname(ctx.outdir))
    return 0


def duration_settings(o):
    return {"ii_schema": o.ii_schema, "load_rows": o.load_rows, "load_batch": o.load_batch,
            "insert_rows": o.insert_rows, "insert_secs": o.insert_secs if o.insert_rows is None else None,
            "insert_batch": o.insert_batch, "fifo_rows": o.fifo_rows,
            "fifo_secs": o.fifo_secs if o.fifo_rows is None else None, "fifo_batch": o.fifo_batch,
            "query_secs": o.query_secs, "query_rates": o.query_rate_list, "query_clients": o.query_clients,
            "ii_clients": o.ii_clients, "ts_clients": o.ts_clients,
            "ts_secs": o.ts_secs if o.ts_events is None else None, "ts_events": o.ts_events,
            "lb_maxid": o.lb_maxid, "lb_clients": o.lb_clients, "lb_secs": o.lb_secs,
            "tpcb_scale": o.tpcb_scale, "tpcb_clients": o.tpcb_clients, "tpcb_secs": o.tpcb_secs,
            "tb_rows": o.tb_rows, "tb_secs": o.tb_secs,
            "interleave_s": o.interleave}


def fractam_stats(ctx):
    try:
        out = ctx.q("SELECT coalesce(json_agg(row_to_json(x)), '[]') FROM ("
                    "SELECT c.relname AS index, s.* FROM pg_class c JOIN pg_am a ON a.oid = c.relam, "
                    "LATERAL fractam_stats(c.oid) s WHERE a.amname IN ('fractam', 'fractam_index') "
                    "AND c.relkind = 'i' AND c.relnamespace = 'public'::regnamespace ORDER BY c.relname) x")
        return json.loads(out)
    except (SQLError, ValueError):
        return None


def run_cleanup_partial(srv, cg, datadir, o, vdir=None):
    """Stop this variant's server and remove its cgroup and data now (the global cleanup list keeps
    the same steps for the failure path; they are idempotent)."""
    srv.stop()
    if vdir and os.path.exists(srv.logfile):
        shutil.copy(srv.logfile, os.path.join(vdir, "server.log"))
    if cg:
        cg.remove()
    if not o.keep_data:
        shutil.rmtree(datadir, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        run_cleanup()
        print("bench/run: error: %s" % e, file=sys.stderr)
        sys.exit(2)
    except Interrupted:
        run_cleanup()
        sys.exit(130)
    except Exception:
        run_cleanup()
        import traceback
        traceback.print_exc()
        print("bench/run: internal error (above); the scratch server was stopped and removed", file=sys.stderr)
        sys.exit(3)

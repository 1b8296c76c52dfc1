# fractam benchmark suite: scratch server, memory cgroup and process accounting.
# Only the Python standard library (Debian's python3) is used.

import os
import re
import shutil
import signal
import subprocess
import time


class BenchError(Exception):
    """A bad setting or environment problem: reported as a clear message, exit status 2."""


class Interrupted(Exception):
    """SIGINT/SIGTERM/SIGHUP received."""


def log(msg):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def warn(msg):
    print("[bench %s] WARNING: %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?b)?\s*$", re.I)


def parse_size(s):
    """'2G', '512MB', '1.5GiB', '1048576' -> bytes (binary multiples)."""
    m = _SIZE_RE.match(str(s))
    if not m:
        raise BenchError("cannot parse size %r (use e.g. 512MB, 2G)" % s)
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def fmt_bytes(n):
    if n is None:
        return "-"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return ("%.0f %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0


# ----------------------------------------------------------------------------------------------
# memory cgroup (v1 memory controller, or v2 unified hierarchy)

class MemCgroup:
    """A child memory cgroup with a hard limit. Processes join it via join() in a preexec_fn."""

    def __init__(self, name, limit_bytes):
        self.limit = limit_bytes
        self.version, base = self._locate()
        self.path = os.path.join(base, name)
        try:
            if self.version == 2:
                self._enable_v2_memory(base)
            os.mkdir(self.path)
        except OSError as e:
            raise BenchError(
                "cannot create a memory cgroup at %s: %s.\n"
                "  bench/run needs a writable cgroup memory controller (run as root on a host or a\n"
                "  privileged container), or pass --no-cgroup to run WITHOUT a memory limit (the report\n"
                "  will say so)." % (self.path, e.strerror or e))
        try:
            if self.version == 1:
                self._write("memory.limit_in_bytes", str(limit_bytes))
                # no swap: make memsw equal to the limit where it exists (ignore failures)
                try:
                    self._write("memory.memsw.limit_in_bytes", str(limit_bytes))
                except OSError:
                    pass
                got = int(self._read("memory.limit_in_bytes"))
            else:
                self._write("memory.max", str(limit_bytes))
                try:
                    self._write("memory.swap.max", "0")
                except OSError:
                    pass
                got = int(self._read("memory.max"))
        except OSError as e:
            self.remove()
            raise BenchError("cannot set the memory limit in %s: %s (pass --no-cgroup to run without "
                             "a limit)" % (self.path, e))
        # the kernel rounds to pages
        if abs(got - limit_bytes) > 65536:
            self.remove()
            raise BenchError("memory cgroup %s did not accept limit %d (reads back %d)"
                             % (self.path, limit_bytes, got))
        self.oom_kills_at_start = self.oom_kills()

    @staticmethod
    def _locate():
        # FRACTAM_BENCH_CGROUP_BASE=<dir of a cgroup v1 memory hierarchy>: where to create the child
        # cgroup (for unusual layouts, and to test the error path)
        if os.environ.get("FRACTAM_BENCH_CGROUP_BASE"):
            return 1, os.environ["FRACTAM_BENCH_CGROUP_BASE"]
        v1 = v2 = None
        with open("/proc/self/mountinfo") as f:
            for line in f:
                parts = line.split()
                sep = parts.index("-")
                fstype, superopts = parts[sep + 1], parts[sep + 3]
                root, mnt = parts[3], parts[4]
                if fstype == "cgroup" and "memory" in superopts.split(","):
                    v1 = (root, mnt)
                elif fstype == "cgroup2" and v2 is None:
                    v2 = (root, mnt)
        v1path = v2path = None
        with open("/proc/self/cgroup") as f:
            for line in f:
                hid, ctrls, path = line.rstrip("\n").split(":", 2)
                if "memory" in ctrls.split(","):
                    v1path = path
                if hid == "0":
                    v2path = path

        def rel(path, root):
            if root != "/" and path.startswith(root):
                path = path[len(root):]
            return path.lstrip("/")

        if v1 and v1path is not None:
            return 1, os.path.join(v1[1], rel(v1path, v1[0]))
        if v2:
            ctl = os.path.join(v2[1], "cgroup.controllers")
            if os.path.exists(ctl) and "memory" in open(ctl).read().split():
                # a v2 child must hang below a cgroup without processes: use the hierarchy root
                return 2, v2[1]
        raise BenchError("no cgroup memory controller found (neither a cgroup v1 'memory' mount nor a "
                         "cgroup2 mount with the memory controller); pass --no-cgroup to run without a "
                         "memory limit")

    @staticmethod
    def _enable_v2_memory(base):
        sub = os.path.join(base, "cgroup.subtree_control")
        if "memory" not in open(sub).read().split():
            with open(sub, "w") as f:
                f.write("+memory")

    def _write(self, fname, value):
        with open(os.path.join(self.path, fname), "w") as f:
            f.write(value)

    def _read(self, fname):
        with open(os.path.join(self.path, fname)) as f:
            return f.read().strip()

    def join(self):
        """Move the calling process into the cgroup (use as preexec_fn)."""
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def procs(self):
        try:
            return [int(x) for x in self._read("cgroup.procs").split()]
        except (OSError, ValueError):
            return []

    def usage(self):
        try:
            return int(self._read("memory.usage_in_bytes" if self.version == 1 else "memory.current"))
        except (OSError, ValueError):
            return None

    def max_usage(self):
        try:
            return int(self._read("memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"))
        except (OSError, ValueError):
            return None

    def reset_max_usage(self):
        try:
            if self.version == 1:
                self._write("memory.max_usage_in_bytes", "0")
        except OSError:
            pass

    def failcnt(self):
        try:
            if self.version == 1:
                return int(self._read("memory.failcnt"))
            for line in self._read("memory.events").splitlines():
                k, v = line.split()
                if k == "max":
                    return int(v)
        except (OSError, ValueError):
            pass
        return None

    def oom_kills(self):
        try:
            fname = "memory.oom_control" if self.version == 1 else "memory.events"
            for line in self._read(fname).splitlines():
                k, v = line.split()
                if k == "oom_kill":
                    return int(v)
        except (OSError, ValueError):
            pass
        return 0

    def stat(self):
        out = {}
        try:
            for line in self._read("memory.stat").splitlines():
                k, v = line.split()
                out[k] = int(v)
        except (OSError, ValueError):
            pass
        return out

    def describe(self):
        return "cgroup v%d %s" % (self.version, self.path)

    def remove(self):
        """Kill anything still in the cgroup (only our server can be there) and remove it."""
        if not os.path.isdir(self.path):
            return
        for attempt in range(50):
            pids = self.procs()
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)
        warn("could not remove cgroup %s" % self.path)


# ----------------------------------------------------------------------------------------------
# /proc accounting of the server's processes

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _children(ppid):
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
            fields = s[s.rfind(")") + 2:].split()
            if int(fields[1]) == ppid:
                kids.append(int(d))
        except (OSError, ValueError, IndexError):
            continue
    return kids


def _proc_cpu_io(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    fields = s[s.rfind(")") + 2:].split()
    # fields[0] is field 3 (state): utime=14, stime=15, cutime=16, cstime=17
    cpu = sum(int(fields[i]) for i in (11, 12, 13, 14))
    io = {}
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            k, v = line.split(":")
            io[k.strip()] = int(v)
    return cpu, io


def server_proc_stats(pm_pid):
    """CPU seconds and storage bytes of the postmaster and all its children.

    The postmaster's /proc counters include its reaped children (cutime/cstime; the kernel also folds
    a reaped child's I/O accounting into the parent's), so postmaster + live children is the total
    for everything the server ever ran.  write_bytes counts bytes of page-cache pages the server
    dirtied (i.e. that will be written to storage, WAL included); cancelled_write_bytes (truncated or
    unlinked before writeback) is subtracted.  read_bytes counts reads that reached storage."""
    tot = {"cpu_s": 0.0, "read_bytes": 0, "write_bytes": 0, "nprocs": 0}
    kids = _children(pm_pid)
    for pid in kids + [pm_pid]:
        try:
            cpu, io = _proc_cpu_io(pid)
        except (OSError, ValueError, IndexError):
            continue
        tot["cpu_s"] += cpu / CLK_TCK
        tot["read_bytes"] += io.get("read_bytes", 0)
        tot["write_bytes"] += io.get("write_bytes", 0) - io.get("cancelled_write_bytes", 0)
        tot["nprocs"] += 1
    return tot


def host_cpu_busy_s():
    """CPU seconds the whole host spent busy running its own processes (all CPUs), from the first line
    of /proc/stat; time the hypervisor gave to other guests (steal) is host_cpu_steal_s()."""
    with open("/proc/stat") as f:
        p = f.readline().split()
    # user nice system idle iowait irq softirq steal ...
    busy = sum(int(p[i]) for i in (1, 2, 3, 6, 7) if i < len(p))
    return busy / CLK_TCK


def host_cpu_steal_s():
    """CPU seconds the hypervisor gave to other guests while this host wanted to run (all CPUs)."""
    with open("/proc/stat") as f:
        p = f.readline().split()
    return (int(p[8]) if len(p) > 8 else 0) / CLK_TCK


def server_pids(srv, cgroup):
    """Every process of a scratch server: its cgroup's members, else the postmaster and children."""
    if cgroup:
        return cgroup.procs()
    pm = srv.pm_pid()
    return ([pm] + _children(pm)) if pm else []


def pause_server(srv, cgroup, pause=True):
    """Stop (SIGSTOP) or continue (SIGCONT) every process of a scratch server.  A paused server
    does nothing at all (no checkpointer, bgwriter or autovacuum), so the other server of an
    interleaved run has the machine to itself."""
    sig = signal.SIGSTOP if pause else signal.SIGCONT
    pm = srv.pm_pid()
    done = set()
    # the postmaster first, so that it forks nothing new; then its children, and once more for a
    # child forked just before the postmaster stopped
    for _ in range(3):
        pids = [p for p in server_pids(srv, cgroup) if p not in done]
        if not pids:
            break
        for pid in sorted(pids, key=lambda p: p != pm):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
            done.add(pid)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def device_of(path):
    """(name, major, minor) of the block device holding path, for /proc/diskstats."""
    st = os.stat(path)
    maj, mnr = os.major(st.st_dev), os.minor(st.st_dev)
    try:
        with open("/proc/diskstats") as f:
            for line in f:
                p = line.split()
                if int(p[0]) == maj and int(p[1]) == mnr:
                    return p[2], maj, mnr
    except OSError:
        pass
    return None


def diskstats(dev):
    if not dev:
        return None
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if int(p[0]) == dev[1] and int(p[1]) == dev[2]:
                return {"read_bytes": int(p[5]) * 512, "write_bytes": int(p[9]) * 512}
    return None


def fs_type(path):
    best, fstype = "", None
    path = os.path.realpath(path)
    with open("/proc/mounts") as f:
        for line in f:
            p = line.split()
            mnt = p[1]
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                best, fstype = mnt, p[2]
    return fstype


# ----------------------------------------------------------------------------------------------
# scratch PostgreSQL server

class Server:
    def __init__(self, bindir, workdir, port, conf, cgroup, name):
        self.bindir = bindir
        self.workdir = workdir
        self.port = port
        self.conf = conf  # list of (name, value)
        self.cgroup = cgroup
        self.name = name
        self.datadir = os.path.join(workdir, "data-" + name)
        self.sockdir = os.path.join(workdir, "sock")
        self.logfile = os.path.join(workdir, "server-%s.log" % name)
        self.started = False

    # all server-side commands run as postgres; initdb and the postmaster start inside the cgroup
    def _as_postgres(self, argv, in_cgroup=False, **kw):
        cmd = ["runuser", "-u", "postgres", "--"] + argv
        pre = self.cgroup.join if (in_cgroup and self.cgroup) else None
        return subprocess.run(cmd, preexec_fn=pre, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, **kw)

    def bin(self, prog):
        return os.path.join(self.bindir, prog)

    def init(self, checksums=False):
        os.makedirs(self.sockdir, exist_ok=True)
        shutil.chown(self.sockdir, "postgres", "postgres")
        os.chmod(self.sockdir, 0o700)
        argv = [self.bin("initdb"), "-D", self.datadir, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                "--locale=C", "--no-sync"]
        if checksums:
            argv.append("--data-checksums")
        r = self._as_postgres(argv, in_cgroup=True)
        if r.returncode != 0:
            raise BenchError("initdb failed:\n" + r.stdout[-3000:])
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as f:
            f.write("\n# --- fractam bench/run settings ---\n")
            for k, v in self.conf:
                f.write("%s = %s\n" % (k, v))

    def start(self):
        r = self._as_postgres([self.bin("pg_ctl"), "-D", self.datadir, "-l", self.logfile, "-w",
                               "-t", "120", "start"], in_cgroup=True)
        if r.returncode != 0 or not self.alive():
            tail = self.log_tail()
            self.stop()
            raise BenchError("the scratch server did not start (pg_ctl: %s)\n--- server log tail ---\n%s"
                             % (r.stdout.strip()[-500:], tail))
        self.started = True

    def log_tail(self, n=25):
        try:
            with open(self.logfile, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return "(no server log)"

    def pm_pid(self):
        try:
            with open(os.path.join(self.datadir, "postmaster.pid")) as f:
                return int(f.readline().strip())
        except (OSError, ValueError):
            return None

    def alive(self):
        pid = self.pm_pid()
        if not pid:
            return False
        try:
            with open("/proc/%d/stat" % pid) as f:
                s = f.read()
            return s[s.rfind(")") + 2] != "Z"
        except OSError:
            return False

    def stop(self):
        """Stop the server, whatever state it is in; never leaves a process behind."""
        if os.path.exists(os.path.join(self.datadir, "postmaster.pid")):
            r = self._as_postgres([self.bin("pg_ctl"), "-D", self.datadir, "-m", "fast", "-w", "-t", "60",
                                   "stop"])
            if r.returncode != 0 and self.alive():
                self._as_postgres([self.bin("pg_ctl"), "-D", self.datadir, "-m", "immediate", "-w",
                                   "-t", "20", "stop"])
            pid = self.pm_pid()
            if pid and self.alive():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.started = False

    def conninfo(self):
        return ["-h", self.sockdir, "-p", str(self.port), "-U", "postgres"]

    def psql(self, db, sql=None, file=None, variables=None, check=True, timing=False, env=None):
        argv = [self.bin("psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"] + self.conninfo() + ["-d", db]
        for k, v in (variables or {}).items():
            argv += ["-v", "%s=%s" % (k, v)]
        if sql is not None:
            argv += ["-c", sql]
        if file is not None:
            argv += ["-f", file]
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           env=env)
        if check and r.returncode != 0:
            raise SQLError(sql or file, r.stderr.strip())
        return r

    def query(self, db, sql):
        return self.psql(db, sql).stdout.strip()


class SQLError(Exception):
    def __init__(self, what, err):
        Exception.__init__(self, "%s\n  -> %s" % (what, err))
        self.what = what
        self.err = err

# fractam benchmark suite: pgbench log parsing, latency histograms, stall metrics.

import glob
import re
import math
import os
import statistics


class LatHist:
    """Log-bucketed latency histogram (1 % resolution) with exact count/sum/max; values in µs."""
    BASE = math.log(1.01)

    def __init__(self):
        self.b = {}
        self.n = 0
        self.sum = 0.0
        self.max = 0.0

    def add(self, us):
        us = max(float(us), 1.0)
        k = int(math.log(us) / self.BASE)
        self.b[k] = self.b.get(k, 0) + 1
        self.n += 1
        self.sum += us
        if us > self.max:
            self.max = us

    def merge(self, o):
        for k, v in o.b.items():
            self.b[k] = self.b.get(k, 0) + v
        self.n += o.n
        self.sum += o.sum
        self.max = max(self.max, o.max)

    def pct(self, p):
        if not self.n:
            return None
        want = p / 100.0 * self.n
        acc = 0
        for k in sorted(self.b):
            acc += self.b[k]
            if acc >= want:
                return min(math.exp((k + 0.5) * self.BASE), self.max)
        return self.max

    def summary_ms(self):
        if not self.n:
            return {"n": 0}
        return {"n": self.n, "avg": self.sum / self.n / 1000.0, "p50": self.pct(50) / 1000.0,
                "p95": self.pct(95) / 1000.0, "p99": self.pct(99) / 1000.0, "max": self.max / 1000.0}


def parse_pgbench_logs(prefix, t0, rows_per_script):
    """Parse pgbench -l logs (PG15 format: client_id transaction_no time script_no time_epoch time_us
    [schedule_lag]) for one pgbench process. Returns per-second buckets (relative to t0, by transaction
    end time), the latency histogram overall and per script, and counts of failed/skipped."""
    per_sec = {}
    hist = LatHist()
    per_script = {}
    failed = skipped = 0
    first = last = None
    for fname in sorted(glob.glob(prefix + ".*")):
        if not re.match(r"^\.\d+(\.\d+)?$", fname[len(prefix):]):
            continue  # pgbench writes <prefix>.<pid> and <prefix>.<pid>.<thread>
        with open(fname) as f:
            for line in f:
                p = line.split()
                if len(p) < 6:
                    continue
                lat, script = p[2], int(p[3])
                end = int(p[4]) + int(p[5]) / 1e6
                if lat == "skipped":
                    skipped += 1
                    continue
                if lat == "failed":
                    failed += 1
                    continue
                lat = float(lat)
                sec = int(end - t0)
                b = per_sec.get(sec)
                if b is None:
                    b = per_sec[sec] = [0, 0, 0.0, 0.0]  # txns, rows, lat sum, lat max
                rows = rows_per_script[script] if script < len(rows_per_script) else 1
                b[0] += 1
                b[1] += rows
                b[2] += lat
                if lat > b[3]:
                    b[3] = lat
                hist.add(lat)
                h = per_script.get(script)
                if h is None:
                    h = per_script[script] = LatHist()
                h.add(lat)
                start = end - lat / 1e6
                first = start if first is None or start < first else first
                last = end if last is None or end > last else last
    return {"per_sec": per_sec, "hist": hist, "per_script": per_script, "failed": failed,
            "skipped": skipped, "first": first, "last": last}


def rate_series(per_sec, secs):
    """Dense list of rows per second for seconds 0..secs-1."""
    return [per_sec.get(s, [0, 0])[1] for s in range(secs)]


def stall_metrics(series):
    """series: rows (or ops) per 1-second interval over the measured period.
    The first and last seconds are partial and excluded. Returns the median 1-s rate, the mean rate
    over the last third of the period (the sustained rate once the indexes have grown), the worst 1-s
    rate and the worst 10-s window (sliding; mean rate) as fractions of that median, and the number of
    seconds with no completed transaction."""
    s = series[1:-1]
    if len(s) < 3:
        return {}  # too short to say anything about stalls
    med = statistics.median(s)
    tail = s[(2 * len(s)) // 3:]
    out = {"median": med, "min1": min(s), "zero_secs": sum(1 for x in s if x == 0),
           "secs": len(s), "last_third": sum(tail) / float(len(tail))}
    if len(s) >= 10:
        win = [sum(s[i:i + 10]) / 10.0 for i in range(len(s) - 9)]
        out["min10"] = min(win)
    else:
        out["min10"] = sum(s) / len(s)
    if med > 0:
        out["worst1"] = out["min1"] / med
        out["worst10"] = out["min10"] / med
    return out

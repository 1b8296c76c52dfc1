# fractam benchmark suite: combining the slices of an interleaved insert phase.
#
# With --interleave, the l.i1 phase of each variant runs as a sequence of short slices that alternate
# with the other variant's slices (the idle server paused).  Each slice is measured like any pgbench
# phase; this module folds a variant's slices into one phase record of the usual shape (so the report,
# the CSV files and the targets treat it like a continuous l.i1), and keeps a compact summary of every
# slice for the per-round table of the report.

import os

import stats

NCPU = os.cpu_count() or 1

# io counters that add up over slices; *_after values are taken from the last slice
_SUMMED = ("wal_bytes", "wal_fpi", "wal_records", "lsn_bytes", "srv_write_bytes", "srv_read_bytes",
           "dev_write_bytes", "dev_read_bytes", "cpu_server_s", "cpu_client_s", "checkpoints", "blks_read",
           "blks_hit", "mem_failcnt", "cpu_other_s", "cpu_steal_s", "buffers_written_bytes", "elapsed_s")
_LAST = ("db_size_after", "wal_dir_after", "mem_usage_after", "loadavg_after")


def _whole_seconds(series):
    """A slice's per-second series without its first and last (partial) seconds."""
    return list(series[1:-1]) if len(series) > 2 else []


def _concat(parts):
    """Concatenate per-slice series of whole seconds, padded at both ends with a copy of the
    neighbouring value so that consumers that drop the (normally partial) first and last second
    lose nothing and charts show no artificial dip."""
    out = []
    for p in parts:
        out += p
    if not out:
        return []
    return [out[0]] + out + [out[-1]]


def _sum(vals):
    vals = [v for v in vals if v is not None]
    return sum(vals) if vals else None


def slice_summary(ph, sync_s):
    io = ph.get("io") or {}
    sr = ph["streams"][ph["main"]]
    rows = ph.get("rows") or 0

    def per_row(k):
        return io[k] / float(rows) if rows and io.get(k) is not None else None
    return {"round": ph.get("round"), "rows": rows, "span_s": sr["span_s"], "rows_per_s": sr["rows_per_s"],
            "p99_ms": sr["lat_ms"].get("p99"), "sync_s": sync_s,
            "cpu_server_us_per_row": (1e6 * io["cpu_server_s"] / rows) if rows and io.get("cpu_server_s")
            is not None else None,
            "wal_bytes_per_row": per_row("wal_bytes"), "written_bytes_per_row": per_row("srv_write_bytes"),
            "read_bytes_per_row": per_row("srv_read_bytes"), "checkpoints": io.get("checkpoints"),
            "cpu_other_pct": io.get("cpu_other_pct"), "cpu_steal_pct": io.get("cpu_steal_pct")}


def combine(parts, name, label):
    """parts: [(phase, {stream: LatHist}, sync_s)] of one variant, in time order.  Returns one phase
    record covering all of them (time = the sum of the slices' times; the pauses in between, while the
    other variant ran, are not counted)."""
    phs = [p for p, _, _ in parts]
    first = phs[0]
    comb = {"name": name, "label": label, "kind": "pgbench", "unit": first["unit"], "main": first["main"],
            "status": "ok", "interleaved": True,
            "elapsed_s": sum(p.get("elapsed_s", 0) for p in phs),
            "sync_s": sum(s for _, _, s in parts),
            "slices": [slice_summary(p, s) for p, _, s in parts]}
    comb["streams"] = {}
    for sname, sr0 in first["streams"].items():
        srs = [p["streams"][sname] for p in phs]
        hist = stats.LatHist()
        for _, hists, _ in parts:
            if sname in hists:
                hist.merge(hists[sname])
        rows = sum(sr["rows"] for sr in srs)
        txns = sum(sr["txns"] for sr in srs)
        span = max(1e-3, sum(sr["span_s"] for sr in srs))
        comb["streams"][sname] = {
            "role": sr0["role"], "clients": sr0["clients"], "txns": txns, "rows": rows, "span_s": span,
            "rows_per_s": rows / span, "tps": txns / span, "lat_ms": hist.summary_ms(),
            "failed": sum(sr["failed"] for sr in srs), "skipped": sum(sr["skipped"] for sr in srs),
            "series": _concat([_whole_seconds(sr["series"]) for sr in srs]),
            "series_txns": _concat([_whole_seconds(sr["series_txns"]) for sr in srs]),
            "series_lat_avg_ms": _concat([_whole_seconds(sr["series_lat_avg_ms"]) for sr in srs]),
            "series_lat_max_ms": _concat([_whole_seconds(sr["series_lat_max_ms"]) for sr in srs]),
            "argv": sr0["argv"]}
    comb["stall"] = stats.stall_metrics(comb["streams"][comb["main"]]["series"])
    comb["rows"] = sum(p.get("rows") or 0 for p in phs)
    ios = [p.get("io") or {} for p in phs]
    io = {k: _sum([x.get(k) for x in ios]) for k in _SUMMED}
    for k in _LAST:
        io[k] = ios[-1].get(k)
    io["norm_rows"] = comb["rows"]
    if io.get("elapsed_s"):
        if io.get("cpu_other_s") is not None:
            io["cpu_other_pct"] = 100.0 * io["cpu_other_s"] / (io["elapsed_s"] * NCPU)
        if io.get("cpu_steal_s") is not None:
            io["cpu_steal_pct"] = 100.0 * io["cpu_steal_s"] / (io["elapsed_s"] * NCPU)
    comb["io"] = io
    comb["sizes"] = phs[-1].get("sizes")
    comb["mem_max"] = max([p.get("mem_max") or 0 for p in phs]) or None
    # the server's per-second samples, on the slices' joint time axis
    ss, offset = [], 0.0
    for p in phs:
        for x in p.get("server_series") or []:
            y = dict(x)
            y["t"] = round(x["t"] + offset, 1)
            ss.append(y)
        offset += p.get("elapsed_s", 0)
    comb["server_series"] = ss
    return comb

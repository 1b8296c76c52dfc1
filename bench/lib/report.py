# fractam benchmark suite: report generation (markdown, CSV, PNG via gnuplot) from results.json.
# Usable on its own: bench/run --report-only <results dir>

import csv
import json
import os
import shutil
import subprocess

BASE = "heap-btree"


def num(x, digits=3):
    """Human-friendly number: thousands separators, ~3 significant digits for small values."""
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    ax = abs(x)
    if isinstance(x, int):
        return "{:,}".format(int(x))
    if ax >= 1000:
        return "{:,.0f}".format(x)
    if ax >= 100:
        return "%.0f" % x
    if ax >= 10:
        return "%.1f" % x
    if ax >= 1:
        return "%.2f" % x
    if ax == 0:
        return "0"
    return "%.*g" % (digits, x)


def fbytes(n):
    if n is None:
        return "-"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return ("%.0f %s" % (n, unit)) if unit == "B" else ("%.2f %s" % (n, unit))
        n /= 1024.0


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return float(a) / float(b)


def fratio(r):
    return "-" if r is None else ("%.2f×" % r if r < 100 else "%.0f×" % r)


def div(a, b):
    if a is None or not b:
        return None
    return float(a) / b


# ----------------------------------------------------------------------------------------------
# metric extraction: each metric is (label, function(phase) -> number or None, formatter)

def _io(k):
    return lambda ph: (ph.get("io") or {}).get(k)


def _per_row(k):
    return lambda ph: div((ph.get("io") or {}).get(k), ph.get("rows"))


def _data_bytes(ph):
    io = ph.get("io") or {}
    if io.get("srv_write_bytes") is None or io.get("wal_bytes") is None:
        return None
    return io["srv_write_bytes"] - io["wal_bytes"]


def _stream(name, f):
    def g(ph):
        sr = (ph.get("streams") or {}).get(name)
        return f(sr) if sr else None
    return g


def metrics_for(ph):
    """List of (label, fn, fmt) applicable to this phase."""
    unit = ph.get("unit", "rows")
    m = []
    if ph["kind"] == "pgbench":
        for sname, sr in ph["streams"].items():
            is_main = sname == ph.get("main")
            if sr["role"] == "query":
                m.append(("%s: queries/s" % sname, _stream(sname, lambda s: s["tps"]), num))
                m.append(("%s: queries" % sname, _stream(sname, lambda s: s["txns"]), num))
            else:
                u = unit if is_main else "rows"
                m.append(("%s: %s/s (mean)" % (sname, u), _stream(sname, lambda s: s["rows_per_s"]), num))
                m.append(("%s: %s" % (sname, u), _stream(sname, lambda s: s["rows"]), num))
                if sr.get("target_rows_per_s"):
                    m.append(("%s: %% of target rate %s rows/s" % (sname, num(sr["target_rows_per_s"])),
                              _stream(sname, lambda s: s.get("target_pct")), num))
                    m.append(("%s: 10-s windows below 95%% of target" % sname,
                              _stream(sname, lambda s: s.get("target_missed_windows")), num))
                if sr["txns"] != sr["rows"]:
                    m.append(("%s: transactions/s" % sname, _stream(sname, lambda s: s["tps"]), num))
            for p in ("p50", "p95", "p99", "max"):
                m.append(("%s: latency %s (ms)" % (sname, p),
                          _stream(sname, lambda s, p=p: s["lat_ms"].get(p)), num))
            if sr.get("failed") or sr.get("skipped"):
                m.append(("%s: failed/skipped transactions" % sname,
                          _stream(sname, lambda s: s["failed"] + s["skipped"]), num))
        main = ph.get("main")
        m.append(("%s: median 1-s rate" % main, lambda ph: (ph.get("stall") or {}).get("median"), num))
        m.append(("%s: mean rate over the last third" % main,
                  lambda ph: (ph.get("stall") or {}).get("last_third"), num))
        m.append(("%s: worst 1-s rate / median" % main, lambda ph: (ph.get("stall") or {}).get("worst1"), num))
        m.append(("%s: worst 10-s rate / median" % main, lambda ph: (ph.get("stall") or {}).get("worst10"), num))
        m.append(("%s: seconds with no progress" % main, lambda ph: (ph.get("stall") or {}).get("zero_secs"), num))
    else:
        m.append(("elapsed (s)", lambda ph: ph.get("elapsed_s"), num))
        if ph.get("rows_per_s"):
            m.append(("rows/s", lambda ph: ph.get("rows_per_s"), num))
        if ph.get("statement_secs"):
            for i in range(len(ph["statement_secs"])):
                m.append(("statement %d (s)" % (i + 1),
                          lambda ph, i=i: (ph.get("statement_secs") or [None] * (i + 1))[i]
                          if len(ph.get("statement_secs") or []) > i else None, num))
    per = "row" if ph["kind"] != "pgbench" or ph.get("unit") in ("rows", "queries") else ph.get("unit")
    m += [
        ("WAL bytes (pg_stat_wal)", _io("wal_bytes"), fbytes),
        ("WAL bytes / %s" % per, _per_row("wal_bytes"), fbytes),
        ("WAL full-page images", _io("wal_fpi"), num),
        ("server bytes written (WAL+data)", _io("srv_write_bytes"), fbytes),
        ("server bytes written / %s" % per, _per_row("srv_write_bytes"), fbytes),
        ("data-file bytes written / %s (server − WAL)" % per, lambda ph: div(_data_bytes(ph), ph.get("rows")), fbytes),
        ("shared buffers written (ckpt+bgwriter+backend)", _io("buffers_written_bytes"), fbytes),
        ("server bytes read from storage", _io("srv_read_bytes"), fbytes),
        ("server bytes read / %s" % per, _per_row("srv_read_bytes"), fbytes),
        ("device bytes written (whole device)", _io("dev_write_bytes"), fbytes),
        ("server CPU (s)", _io("cpu_server_s"), num),
        ("server CPU µs / %s" % per, lambda ph: div(_io("cpu_server_s")(ph), ph.get("rows") and ph["rows"] / 1e6), num),
        ("client CPU (s, pgbench+psql)", _io("cpu_client_s"), num),
        ("checkpoints", _io("checkpoints"), num),
        ("other processes' CPU on the host (% of all CPUs)", _io("cpu_other_pct"), num),
        ("CPU stolen by the hypervisor (% of all CPUs)", _io("cpu_steal_pct"), num),
        ("cgroup peak memory", lambda ph: ph.get("mem_max"), fbytes),
        ("database size after phase", _io("db_size_after"), fbytes),
    ]
    if ph.get("sizes_third"):
        m += [("tables' size a third into the phase", lambda ph: _tables_bytes(ph.get("sizes_third")), fbytes),
              ("tables' size after phase", lambda ph: _tables_bytes(ph.get("sizes")), fbytes)]
    return m


def _tables_bytes(sizes):
    """Bytes of the tables (TOAST included, indexes not) in a sizes() sample, or None."""
    if not sizes or not sizes.get("relations"):
        return None
    return sum(r["bytes"] for r in sizes["relations"] if r.get("kind") == "r")


def phase_table(phname, per_variant, variants):
    """per_variant: {variant: phase dict}. Markdown table with one row per metric."""
    ran = [v for v in variants if v in per_variant]
    if not ran:
        return ""
    # union of metric labels in order of first appearance
    seen, rows = set(), []
    for v in ran:
        for label, fn, fmt in metrics_for(per_variant[v]):
            if label not in seen:
                seen.add(label)
                rows.append((label, fn, fmt))
    others = [v for v in ran if v != BASE]
    hdr = ["metric"] + ran + ["%s / %s" % (v, BASE) for v in others if BASE in ran]
    out = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for label, fn, fmt in rows:
        vals = {}
        for v in ran:
            try:
                vals[v] = fn(per_variant[v])
            except (KeyError, TypeError, IndexError):
                vals[v] = None
        line = [label] + [fmt(vals[v]) for v in ran]
        if BASE in ran:
            line += [fratio(ratio(vals[v], vals[BASE])) for v in others]
        out.append("| " + " | ".join(line) + " |")
    return "\n".join(out)


def metric_rows(phname, per_variant, variants):
    """(metric, variant, value) triples for metrics.csv."""
    out = []
    for v in variants:
        ph = per_variant.get(v)
        if not ph:
            continue
        for label, fn, fmt in metrics_for(ph):
            try:
                val = fn(ph)
            except (KeyError, TypeError, IndexError):
                val = None
            out.append((label, v, val))
    return out


def fractam_shape_table(res, wl, variants):
    """Shape of the fractam indexes at the end of a workload (fractam_stats)."""
    out = []
    for v in variants:
        fs = ((res["runs"].get(v) or {}).get(wl) or {}).get("final_sizes") or {}
        st = fs.get("fractam_stats")
        if not st:
            continue
        if not out:
            out = ["| variant | index | height | leaf pages | buffer nodes (size) | of which level 2 (size) | "
                   "routing pages | entries in leaves | buffered messages (level 2) | "
                   "avg messages per flush | per move (level 2 to 1) |",
                   "|---|---|---|---|---|---|---|---|---|---|---|"]
        tot_b = 0
        tot_u = 0
        for r in st:
            upper = r.get("upper_buffer_pages") or 0
            tot_b += r["buffer_pages"]
            tot_u += upper
            out.append("| %s | %s | %d | %s | %s (%s) | %s (%s) | %s | %s | %s (%s) | %.1f | %.1f |" % (
                v, r["name"], r["height"], num(r["leaf_pages"]), num(r["buffer_pages"]),
                fbytes(r["buffer_pages"] * 8192), num(upper), fbytes(upper * 8192),
                num(r["routing_pages"]), num(r["leaf_items"]),
                num(r["buffered_messages"]), num(r.get("upper_buffered_messages") or 0),
                r["avg_flush_size"] or 0, r.get("avg_move_size") or 0))
        out.append("| %s | all | | | %s (%s) | %s (%s) | | | | | |" % (
            v, num(tot_b), fbytes(tot_b * 8192), num(tot_u), fbytes(tot_u * 8192)))
    return "\n".join(out)


def sizes_table(res, wl, variants):
    ran = [v for v in variants if wl in res["runs"].get(v, {})]
    rels = {}
    order = []
    for v in ran:
        fs = res["runs"][v][wl].get("final_sizes") or {}
        for r in fs.get("relations", []):
            key = r["name"]
            if key not in rels:
                rels[key] = {}
                order.append(key)
            rels[key][v] = r
    if not order:
        return ""
    others = [v for v in ran if v != BASE]
    hdr = ["relation"] + ran + (["%s / %s" % (v, BASE) for v in others] if BASE in ran else [])
    out = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    tot = {v: 0 for v in ran}
    tot_t = {v: 0 for v in ran}
    tot_i = {v: 0 for v in ran}
    for name in order:
        line = []
        for v in ran:
            r = rels[name].get(v)
            if r:
                tot[v] += r["bytes"]
                (tot_t if r["kind"] == "r" else tot_i)[v] += r["bytes"]
                line.append("%s (%s)" % (fbytes(r["bytes"]), r.get("am") or "-"))
            else:
                line.append("-")
        if BASE in ran:
            b = rels[name].get(BASE, {}).get("bytes")
            line += [fratio(ratio(rels[name].get(v, {}).get("bytes"), b)) for v in others]
        out.append("| %s | %s |" % (name, " | ".join(line)))
    for label, t in (("all tables", tot_t), ("all indexes", tot_i), ("**total**", tot)):
        line = [fbytes(t[v]) for v in ran]
        if BASE in ran:
            line += [fratio(ratio(t[v], t[BASE])) for v in others]
        out.append("| %s | %s |" % (label, " | ".join(line)))
    dbs = [(res["runs"][v][wl].get("final_sizes") or {}).get("db") for v in ran]
    line = [fbytes(x) for x in dbs]
    if BASE in ran:
        line += [fratio(ratio(dbs[ran.index(v)], dbs[ran.index(BASE)])) for v in others]
    out.append("| pg_database_size | %s |" % " | ".join(line))
    lr = [(res["runs"][v][wl].get("final_sizes") or {}).get("live_rows") for v in ran]
    if any(lr):
        out.append("| live rows (pg_stat_user_tables) | %s |" % " | ".join(
            [num(x) for x in lr] + (["%s" % fratio(ratio(lr[ran.index(v)], lr[ran.index(BASE)])) for v in others]
                                    if BASE in ran else [])))
        bpr = [div(tot[v], lr[i]) for i, v in enumerate(ran)]
        line = [fbytes(x) for x in bpr]
        if BASE in ran:
            line += [fratio(ratio(bpr[ran.index(v)], bpr[ran.index(BASE)])) for v in others]
        out.append("| tables+indexes bytes per live row | %s |" % " | ".join(line))
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# time series CSV and charts

def write_csv(res, outdir):
    path = os.path.join(outdir, "timeseries.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "variant", "phase", "stream", "second", "txns", "rows", "rows_per_s",
                    "lat_avg_ms", "lat_max_ms", "server_write_MBps", "server_read_MBps", "server_cpu_pct",
                    "cgroup_mem_MB"])
        for v, wls in res["runs"].items():
            for wl, run in wls.items():
                for ph in run["phases"]:
                    if ph["kind"] != "pgbench" or ph.get("status") != "ok":
                        continue
                    for sname, sr in ph["streams"].items():
                        for s, rows in enumerate(sr["series"]):
                            la = sr["series_lat_avg_ms"][s]
                            lm = sr["series_lat_max_ms"][s]
                            w.writerow([wl, v, ph["name"], sname, s, sr["series_txns"][s], rows, rows,
                                        "" if la is None else "%.3f" % la, "" if lm is None else "%.3f" % lm,
                                        "", "", "", ""])
                    for x in ph.get("server_series", []):
                        w.writerow([wl, v, ph["name"], "server", x["t"], "", "", "", "", "",
                                    "%.3f" % (x["write_Bps"] / 1e6), "%.3f" % (x["read_Bps"] / 1e6),
                                    "%.1f" % x["cpu_pct"], "" if x["mem"] is None else "%.1f" % (x["mem"] / 2 ** 20)])
    return path


def write_metrics_csv(res, outdir, tables):
    path = os.path.join(outdir, "metrics.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "phase", "metric", "variant", "value"])
        for wl, phname, per_variant in tables:
            for label, v, val in metric_rows(phname, per_variant, res["variants"]):
                w.writerow([wl, phname, label, v, "" if val is None else val])
    return path


def write_charts(res, outdir, wl, phase_names):
    """One PNG per workload: a panel per pgbench phase, main-stream rate per second per variant."""
    gp = shutil.which("gnuplot")
    if not gp:
        return None, "gnuplot not installed (apt-get install gnuplot-nox)"
    pdir = os.path.join(outdir, "plots")
    os.makedirs(pdir, exist_ok=True)
    panels = []
    for phname in phase_names:
        lines = []
        unit = "rows"
        label = phname
        for v in res["variants"]:
            ph = next((p for p in res["runs"].get(v, {}).get(wl, {}).get("phases", [])
                       if p["name"] == phname and p["kind"] == "pgbench" and p.get("status") == "ok"), None)
            if not ph:
                continue
            sr = ph["streams"][ph["main"]]
            unit = "queries" if sr["role"] == "query" else ph.get("unit", "rows")
            label = "%s: %s" % (phname, ph["label"])
            dat = os.path.join(pdir, "%s.%s.%s.dat" % (wl, phname, v))
            with open(dat, "w") as f:
                n = max(1, int(ph.get("elapsed_s") or len(sr["series"])))  # drop the partial last second
                for s, x in enumerate(sr["series"][:n]):
                    f.write("%d %d\n" % (s, x))
            lines.append((dat, v))
        if lines:
            panels.append((label, unit, lines))
    if not panels:
        return None, "no pgbench phases to plot"
    png = os.path.join(outdir, "%s-rate.png" % wl)
    script = os.path.join(pdir, "%s.gp" % wl)
    colors = {"heap-btree": "#1f77b4", "heap-fractam": "#d62728", "fractam-fractam": "#2ca02c"}
    with open(script, "w") as f:
        f.write("set terminal pngcairo size 1100,%d font ',9' noenhanced\n" % (40 + 230 * len(panels)))
        f.write("set output '%s'\n" % png)
        f.write("set multiplot layout %d,1 title '%s: rate per second per variant (%s)'\n"
                % (len(panels), wl, res.get("mode")))
        f.write("set grid\nset key outside right top\nset xlabel 'seconds since phase start'\n"
                "set yrange [0:*]\nset format y '%.0s%c'\n")
        for label, unit, lines in panels:
            f.write("set title '%s'\n" % label.replace("'", ""))
            f.write("set ylabel '%s/s'\n" % unit)
            f.write("plot " + ", ".join("'%s' using 1:2 with linespoints lw 1.5 pt 7 ps 0.3 lc rgb '%s' title '%s'"
                                        % (dat, colors.get(v, "black"), v) for dat, v in lines) + "\n")
        f.write("unset multiplot\n")
    r = subprocess.run([gp, script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode != 0:
        return None, "gnuplot failed: %s" % r.stdout[-500:]
    return os.path.basename(png), None


# ----------------------------------------------------------------------------------------------
# targets of ARCHITECTURE.md §5

def _phase(res, v, wl, name):
    run = res["runs"].get(v, {}).get(wl)
    if not run:
        return None
    return next((p for p in run["phases"] if p["name"] == name and p.get("status") == "ok"), None)


def targets(res):
    out = []
    st = res["settings"]
    lim = st.get("mem_limit")
    fr = [v for v in ("heap-fractam", "fractam-fractam") if v in res["runs"]]
    if BASE not in res["runs"] or not fr:
        return ["No fractam variant ran next to heap-btree in this run, so no target can be judged."]
    rows = []
    if "iibench" in res["workloads"]:
        base = _phase(res, BASE, "iibench", "l.i1")
        if base:
            dbsize = (base.get("io") or {}).get("db_size_after") or 0
            if lim and dbsize >= 5 * lim:
                regime = "larger than memory (heap-btree database %s = %.1f× the %s limit)" % (
                    fbytes(dbsize), dbsize / float(lim), fbytes(lim))
                io_bound = True
            elif (lim and dbsize <= 0.7 * lim) or (not lim):
                regime = "in memory (heap-btree database %s%s)" % (
                    fbytes(dbsize), (", %.2f× the %s limit" % (dbsize / float(lim), fbytes(lim))) if lim else
                    ", no memory limit")
                io_bound = False
            else:
                regime = "neither cached nor >= 5× memory (database %s, limit %s)" % (fbytes(dbsize), fbytes(lim))
                io_bound = None
            for v in fr:
                ph = _phase(res, v, "iibench", "l.i1")
                if not ph:
                    continue
                r_rate = ratio(ph["streams"]["insert"]["rows_per_s"], base["streams"]["insert"]["rows_per_s"])
                r_tail = ratio((ph.get("stall") or {}).get("last_third"),
                               (base.get("stall") or {}).get("last_third"))
                r_bytes = ratio(div(ph["io"].get("srv_write_bytes"), ph["rows"]),
                                div(base["io"].get("srv_write_bytes"), base["rows"]))
                if io_bound is True:
                    rows.append(("iiBench l.i1 insert rate ≥ 10× heap+btree (larger than memory)", v,
                                 fratio(r_rate), verdict(r_rate, ">=", 10)))
                    rows.append(("iiBench l.i1 insert rate over the last third ≥ 10× heap+btree "
                                 "(larger than memory)", v, fratio(r_tail), verdict(r_tail, ">=", 10)))
                    rows.append(("iiBench l.i1 WAL+data bytes written per row ≤ 1/8 of heap+btree", v,
                                 fratio(r_bytes), verdict(r_bytes, "<=", 0.125)))
                elif io_bound is False:
                    rows.append(("iiBench l.i1 insert rate ≥ 0.9× heap+btree (in memory)", v,
                                 fratio(r_rate), verdict(r_rate, ">=", 0.9)))
                    for qp in [p["name"] for p in res["runs"][BASE]["iibench"]["phases"]
                               if p["name"].startswith(("qr", "qp")) and p.get("status") == "ok"]:
                        b, x = _phase(res, BASE, "iibench", qp), _phase(res, v, "iibench", qp)
                        if b and x:
                            r = ratio(x["streams"]["query"]["lat_ms"].get("p50"),
                                      b["streams"]["query"]["lat_ms"].get("p50"))
                            rows.append(("iiBench %s query latency (p50) ≤ 1.5× heap+btree (in memory)" % qp, v,
                                         fratio(r), verdict(r, "<=", 1.5)))
                else:
                    rows.append(("iiBench targets", v, "insert rate %s, bytes/row %s" % (fratio(r_rate), fratio(r_bytes)),
                                 "n/a: " + regime))
            out.append("iiBench regime: %s." % regime)
    if "timeseries" in res["workloads"]:
        for v in fr:
            for pn in ("ts-unif", "ts-pare", "ts-unif-plain", "ts-pare-plain"):
                b, x = _phase(res, BASE, "timeseries", pn), _phase(res, v, "timeseries", pn)
                if not (b and x):
                    continue
                bi, xi = b["streams"]["insert"], x["streams"]["insert"]
                r = ratio(xi.get("rows_per_s"), bi.get("rows_per_s"))
                rows.append(("timeseries %s insert rate ≥ 1.0× heap+btree" % pn, v, fratio(r),
                             verdict(r, ">=", 1.0)))
                r = ratio(div(x["io"].get("cpu_server_s"), xi.get("rows")),
                          div(b["io"].get("cpu_server_s"), bi.get("rows")))
                rows.append(("timeseries %s server CPU per row ≤ heap+btree's" % pn, v, fratio(r),
                             verdict(r, "<=", 1.0)))
                if pn.endswith("-plain"):
                    continue
                r = ratio(x["io"].get("db_size_after"), b["io"].get("db_size_after"))
                zstd = "zstd" in (st.get("fractam_index_opts") or "") or any("zstd" in str(kv) for kv in st.get("extra_conf", []))
                rows.append(("timeseries %s on-disk size ≤ 1/4 of heap+btree (with zstd%s)" % (
                    pn, "" if zstd else "; this run did not ask for zstd"), v, fratio(r), verdict(r, "<=", 0.25)))
                w1 = (x.get("stall") or {}).get("worst1")
                rows.append(("timeseries %s: no second below half the median rate" % pn, v,
                             num(w1), verdict(w1, ">=", 0.5)))
    if rows:
        out.append("")
        out.append("| target | variant | measured | verdict |")
        out.append("|---|---|---|---|")
        for t, v, m, vd in rows:
            out.append("| %s | %s | %s | %s |" % (t, v, m, vd))
    if res.get("mode") == "quick":
        out.append("")
        out.append("Quick mode is a smoke test (seconds per phase, data in memory): the numbers are not "
                   "evidence for or against the targets; use the full runs in bench/README.md.")
    return out


def noise_pct(ph):
    """Share of the host's CPUs the server could not have: other processes plus hypervisor steal."""
    io = ph.get("io") or {}
    if io.get("cpu_other_pct") is None:
        return None
    return io["cpu_other_pct"] + (io.get("cpu_steal_pct") or 0)


def interleave_pair(res):
    """(other variant, heap-btree's l.i1, the other's l.i1, [per-round rate ratio other / heap-btree])
    of an --interleave run, or None."""
    ran = [v for v in res["variants"] if v in res["runs"]]
    if not res.get("interleave") or BASE not in ran or len(ran) != 2:
        return None
    other = [v for v in ran if v != BASE][0]
    b, x = _phase(res, BASE, "iibench", "l.i1"), _phase(res, other, "iibench", "l.i1")
    if not (b and x):
        return None
    ratios = [ratio(sx["rows_per_s"], sb["rows_per_s"]) for sb, sx in zip(b.get("slices", []), x.get("slices", []))]
    return other, b, x, ratios


def interleave_section(res):
    """Per-round rates of an --interleave run: both variants' slices of a round ran back to back."""
    pair = interleave_pair(res)
    if not pair:
        return []
    il = res["interleave"]
    other, b, x, ratios = pair
    out = ["## Interleaved insert phase (l.i1)", "",
           "Both servers were prepared (load, index, CHECKPOINT), then l.i1 ran as %d rounds of one %d-s slice "
           "per variant, back to back (order alternating AB, BA, ...), the idle server paused with SIGSTOP; "
           "after each slice the page cache was written back (`sync`, time not counted in the rates). A slow "
           "spell of the host therefore hits both variants alike: compare each round's ratio. The l.i1 "
           "numbers in the other tables are over all slices of a variant (the pauses not counted)." % (
               il["rounds"], il["slice_s"]), "",
           "| round | order | %s rows/s | %s rows/s | ratio | %s steal %% | %s steal %% | sync s (%s / %s) |" % (
               BASE, other, BASE, other, BASE, other),
           "|---|---|---|---|---|---|---|---|"]
    for i, (sb, sx, r) in enumerate(zip(b.get("slices", []), x.get("slices", []), ratios)):
        order = il["order"][i] if i < len(il.get("order", [])) else []
        out.append("| %d | %s | %s | %s | %s | %s | %s | %s / %s |" % (
            i + 1, " → ".join("B" if v == BASE else "F" for v in order), num(sb["rows_per_s"]),
            num(sx["rows_per_s"]), fratio(r), num(sb.get("cpu_steal_pct")), num(sx.get("cpu_steal_pct")),
            num(sb.get("sync_s")), num(sx.get("sync_s"))))
    if any(r is not None for r in ratios):
        out += ["", ratio_summary(other, ratios) + " (B = %s, F = %s.)" % (BASE, other)]
    out.append("")
    return out


def ratio_summary(other, ratios):
    ratios = [r for r in ratios if r is not None]
    srt = sorted(ratios)
    n = len(srt)
    med = srt[n // 2] if n % 2 else (srt[n // 2 - 1] + srt[n // 2]) / 2.0
    third = ratios[(2 * n) // 3:] or ratios
    return ("Per-round ratio %s / %s: median %s, min %s, max %s; mean over the last third of the rounds %s."
            % (other, BASE, fratio(med), fratio(srt[0]), fratio(srt[-1]), fratio(sum(third) / len(third))))


def verdict(x, op, lim):
    if x is None:
        return "n/a"
    ok = x >= lim if op == ">=" else x <= lim
    return "PASS" if ok else "FAIL"


# ----------------------------------------------------------------------------------------------

def phases_by_name(res, wl):
    names = []
    for v in res["variants"]:
        for p in res["runs"].get(v, {}).get(wl, {}).get("phases", []):
            if p["name"] not in names:
                names.append(p["name"])
    return names


def write_all(outdir):
    with open(os.path.join(outdir, "results.json")) as f:
        res = json.load(f)
    md = []
    st = res["settings"]
    h = res["host"]
    md.append("# fractam benchmark report (%s run)" % res.get("mode"))
    md.append("")
    md.append("- started %s, took %.0f s; command: `%s`%s" % (
        res.get("started"), res.get("elapsed_s", 0), res.get("command"),
        " — **INTERRUPTED**" if res.get("interrupted") else ""))
    md.append("- host: %s, %s CPUs (%s), %s RAM, kernel %s; %s; fractam tree %s" % (
        h.get("hostname"), h.get("ncpu"), h.get("cpu", "?"), fbytes(h.get("mem_total")), h.get("kernel"),
        h.get("pg_version"), h.get("repo_commit", "?")))
    if st.get("no_cgroup"):
        md.append("- memory: **NO MEMORY LIMIT** (--no-cgroup): the OS page cache can hold everything")
    else:
        md.append("- memory: the server (postmaster and every backend) runs in a cgroup limited to **%s**, "
                  "page cache included; pgbench runs outside it" % fbytes(st.get("mem_limit")))
    md.append("- server: shared_buffers %s, maintenance_work_mem %s, synchronous_commit=%s, fsync=on, "
              "full_page_writes=on, wal_compression=off, max_wal_size %s, checkpoint_timeout %s, data checksums "
              "%s, parallelism off, jit off%s%s" % (
                  fbytes(st.get("shared_buffers")), fbytes(st.get("maintenance_work_mem")),
                  st.get("synchronous_commit"), st.get("max_wal_size"), st.get("checkpoint_timeout"),
                  "on" if st.get("data_checksums") else "off",
                  "; shared_preload_libraries='fractam' in every variant" if st.get("preload_fractam") else "",
                  ("; extra: " + ", ".join("%s=%s" % tuple(kv) for kv in st["extra_conf"])) if st.get("extra_conf") else ""))
    md.append("- scratch data on device %s; one fresh cluster (initdb) per variant, one database per workload"
              % st.get("workdir_device"))
    md.append("")
    md.append("| variant | tables / indexes | status |")
    md.append("|---|---|---|")
    for v in res["variants"]:
        vs = res["variant_status"].get(v, {"status": "not run"})
        what = {"heap-btree": "heap table, btree PK and btree secondary indexes",
                "heap-fractam": "heap table, fractam secondary indexes; PK per workload (below)",
                "fractam-fractam": "fractam table, fractam indexes"}.get(v, v)
        status = vs["status"]
        if status == "skipped":
            status = "**SKIPPED**: %s" % vs.get("reason")
        else:
            fails = [wl for wl, r in res["runs"].get(v, {}).items() if r.get("status") != "ok"]
            if fails:
                status += "; **FAILED** in %s" % ", ".join(fails)
        md.append("| %s | %s | %s |" % (v, what, status))
    md.append("")
    busy = []
    for v, wls in res["runs"].items():
        for wl, run in wls.items():
            for ph in run["phases"]:
                x = noise_pct(ph)
                if x is not None and ph.get("elapsed_s", 0) >= 2:
                    busy.append((x, v, wl, ph["name"]))
    if busy and max(busy)[0] > 10:
        x, v, wl, pn = max(busy)
        md.append("**Noise warning:** other processes and the hypervisor (steal) took up to %.0f %% of the "
                  "host's CPUs during this run "
                  "(%s %s %s); rates and their ratios are unreliable on a busy machine — compare *server "
                  "CPU µs per row* and *bytes written per row*, or rerun on a quiet machine." % (x, v, wl, pn))
        md.append("")
    res["_busy_max"] = max(busy)[0] if busy else None

    # summary
    md.append("## Summary")
    md.append("")
    ran = [v for v in res["variants"] if v in res["runs"]]
    others = [v for v in ran if v != BASE]
    hdr = ["workload", "phase", "metric"] + ran + (["%s / %s" % (v, BASE) for v in others] if BASE in ran else [])
    md.append("| " + " | ".join(hdr) + " |")
    md.append("|" + "---|" * len(hdr))
    for wl in res["workloads"]:
        for phname in phases_by_name(res, wl):
            phs = {v: _phase(res, v, wl, phname) for v in ran}
            any_ph = next((p for p in phs.values() if p), None)
            if not any_ph:
                continue
            items = []
            if any_ph["kind"] == "pgbench":
                main = any_ph["main"]
                role = any_ph["streams"][main]["role"]
                if role == "query":
                    items.append(("queries/s", lambda p: p["streams"][p["main"]]["tps"], num))
                    items.append(("query p99 ms", lambda p: p["streams"][p["main"]]["lat_ms"].get("p99"), num))
                else:
                    items.append(("%s/s" % any_ph["unit"], lambda p: p["streams"][p["main"]]["rows_per_s"], num))
                    items.append(("%s/s, last third" % any_ph["unit"],
                                  lambda p: (p.get("stall") or {}).get("last_third"), num))
                    items.append(("worst 1-s / median", lambda p: (p.get("stall") or {}).get("worst1"), num))
                items.append(("bytes written/%s" % ("row" if any_ph["unit"] in ("rows", "queries") else any_ph["unit"]),
                              lambda p: div(p["io"].get("srv_write_bytes"), p.get("rows")), fbytes))
            elif any_ph.get("rows_per_s"):
                items.append(("rows/s", lambda p: p.get("rows_per_s"), num))
            else:
                items.append(("seconds", lambda p: p.get("elapsed_s"), num))
            for label, fn, fmt in items:
                vals = {}
                for v in ran:
                    try:
                        vals[v] = fn(phs[v]) if phs[v] else None
                    except (KeyError, TypeError):
                        vals[v] = None
                line = [wl, phname, label] + [fmt(vals[v]) for v in ran]
                if BASE in ran:
                    line += [fratio(ratio(vals[v], vals[BASE])) for v in others]
                md.append("| " + " | ".join(line) + " |")
        # final size
        vals = {v: ((res["runs"][v].get(wl) or {}).get("final_sizes") or {}).get("db") for v in ran}
        line = [wl, "end", "database size"] + [fbytes(vals[v]) for v in ran]
        if BASE in ran:
            line += [fratio(ratio(vals[v], vals[BASE])) for v in others]
        md.append("| " + " | ".join(line) + " |")
    md.append("")
    md.append("## Targets (ARCHITECTURE.md §5)")
    md.append("")
    md += targets(res)
    md.append("")
    md += interleave_section(res)

    tables = []
    for wl in res["workloads"]:
        md.append("## %s" % wl)
        md.append("")
        md += workload_setup(res, wl)
        for v in ran:
            run = res["runs"][v].get(wl)
            if run and run.get("status") != "ok":
                md.append("**%s FAILED**:" % v)
                md.append("")
                md.append("```")
                md.append(run.get("error", "?").strip())
                md.append("```")
                md.append("")
        png, why = write_charts(res, outdir, wl, phases_by_name(res, wl))
        if png:
            md.append("![%s rate per second](%s)" % (wl, png))
        else:
            md.append("(no chart: %s)" % why)
        md.append("")
        for phname in phases_by_name(res, wl):
            per_variant = {v: p for v in ran for p in res["runs"][v].get(wl, {}).get("phases", [])
                           if p["name"] == phname and p.get("status") == "ok"}
            any_ph = next(iter(per_variant.values()), None)
            label = any_ph["label"] if any_ph else phname
            md.append("### %s — %s" % (phname, label))
            md.append("")
            if per_variant:
                md.append(phase_table(phname, per_variant, ran))
                tables.append((wl, phname, per_variant))
                if any_ph.get("kind") == "pgbench":
                    for sname, sr in any_ph["streams"].items():
                        if len(sr.get("scripts", {})) > 1:
                            md.append("")
                            md += per_script_table(per_variant, sname, ran)
            else:
                md.append("(failed in every variant)")
            md.append("")
        md.append("### Sizes at the end of %s" % wl)
        md.append("")
        md.append(sizes_table(res, wl, ran))
        md.append("")
        shape = fractam_shape_table(res, wl, ran)
        if shape:
            md.append("Shape of the fractam indexes at the end (`fractam_stats`); the buffer nodes are the "
                      "part every insert touches, compare their size with shared_buffers:")
            md.append("")
            md.append(shape)
            md.append("")
        for v in ran:
            run = res["runs"][v].get(wl) or {}
            if run.get("plans"):
                md.append("<details><summary>%s: query plans</summary>" % v)
                md.append("")
                md.append("```")
                for q, plan in run["plans"]:
                    md.append(q)
                    md.append(plan)
                    md.append("")
                md.append("```")
                md.append("</details>")
                md.append("")
            if run.get("fractam_stats"):
                md.append("%s: `fractam_stats()` at the end:" % v)
                md.append("")
                keys = list(run["fractam_stats"][0].keys())
                md.append("| " + " | ".join(keys) + " |")
                md.append("|" + "---|" * len(keys))
                for r in run["fractam_stats"]:
                    md.append("| " + " | ".join(str(r.get(k)) for k in keys) + " |")
                md.append("")
    md += definitions()
    csv_path = write_csv(res, outdir)
    write_metrics_csv(res, outdir, tables)
    md.append("")
    md.append("Files: `results.json` (everything), `metrics.csv` (every metric above), `%s` (per-second "
              "series of every stream and of the server), `<variant>/<workload>/` (pgbench logs and output, "
              "server.log)." % os.path.basename(csv_path))
    path = os.path.join(outdir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(md) + "\n")
    return path


def per_script_table(per_variant, sname, ran):
    out = ["Per-operation latency of stream %s (ms):" % sname, ""]
    scripts = list(next(iter(per_variant.values()))["streams"][sname]["scripts"].keys())
    hdr = ["operation", "weight"] + ["%s p50 / p99 / max" % v for v in ran]
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "---|" * len(hdr))
    for sc in scripts:
        line = [sc.replace(".sql", ""), ""]
        for v in ran:
            s = per_variant.get(v, {}).get("streams", {}).get(sname, {}).get("scripts", {}).get(sc)
            if not s:
                line.append("-")
                continue
            line[1] = str(s["weight"])
            lat = s["lat_ms"]
            line.append("%s / %s / %s (n=%s)" % (num(lat.get("p50")), num(lat.get("p99")), num(lat.get("max")),
                                                 num(lat.get("n"))))
        out.append("| " + " | ".join(line) + " |")
    return out


def workload_setup(res, wl):
    st = res["settings"]
    out = []
    pks = ", ".join("%s: %s" % (v, r[wl]["pk"]) for v, r in res["runs"].items() if wl in r)
    if wl == "iibench":
        out.append("iiBench, %s's schema and value generation; %d inserting client(s). l.i0 %s rows in batches "
                   "of %d; l.i1 %s (batches of %d); l.i2 %s (batches of %d); query phases %s s each with a writer "
                   "at %s rows/s and %d query client(s). Primary key: %s." % (
                       st["ii_schema"].capitalize(), st["ii_clients"], num(st["load_rows"]), st["load_batch"],
                       ("%s rows" % num(st["insert_rows"])) if st.get("insert_rows") else "%s s" % st.get("insert_secs"),
                       st["insert_batch"],
                       ("%s rows" % num(st["fifo_rows"])) if st.get("fifo_rows") else "%s s" % st.get("fifo_secs"),
                       st["fifo_batch"], st["query_secs"], ",".join(str(x) for x in st["query_rates"]),
                       st.get("query_clients", 1), pks))
    elif wl == "timeseries":
        out.append("Percona timeseries: %d clients, each owning 1000 sensors; every transaction is one INSERT of "
                   "1000 rows (one per sensor) at the client's next ts; %s per distribution; fresh table per "
                   "distribution. Key: %s." % (st["ts_clients"], ("%d events per client" % st["ts_events"])
                                                if st.get("ts_events") else "%s s" % st.get("ts_secs"), pks))
    elif wl == "linkbench":
        out.append("LinkBench-like: %s nodes loaded (links: geometric out-degree, mean 4.74), covering index "
                   "id1_type built after the load, then LinkBench's operation mix with %d clients for %s s. "
                   "Keys: %s." % (num(st["lb_maxid"]), st["lb_clients"], st["lb_secs"], pks))
    elif wl == "tpcb":
        out.append("pgbench's built-in TPC-B-like script, scale %d, %d clients, %s s. Keys: %s." % (
            st["tpcb_scale"], st["tpcb_clients"], st["tpcb_secs"], pks))
    elif wl == "tables":
        out.append("Table access method: COPY FROM of %s rows (~100 bytes each) into a table with a primary "
                   "key and one secondary index, INSERT ... SELECT of them into a second such table, VACUUM "
                   "ANALYZE, 3 sequential scans and 3 index-only scans (count(*)) of the first, then point "
                   "and 100-row range queries through the primary key (1 client, %s s each). Keys: %s."
                   % (num(st["tb_rows"]), st["tb_secs"], pks))
    out.append("")
    return out


def definitions():
    return [
        "## How the numbers are measured",
        "",
        "- **Rates** come from pgbench per-transaction logs (`-l`): each transaction is counted in the second "
        "it completed, times the rows it inserted (iiBench batch size, 1000 for timeseries). *mean* = rows / "
        "(last end − first start). Query phases report queries/s of the unthrottled query stream and the rate "
        "achieved by the rate-limited writer (pgbench `-R`, Poisson arrivals; latency includes schedule lag).",
        "- **Stalls**: over the per-second series without its first and last (partial) seconds: worst 1-s rate "
        "/ median 1-s rate, worst sliding 10-s window mean / median 1-s rate, and seconds with no completed "
        "transaction.",
        "- **Latency** percentiles are per transaction (a whole batch for inserts) from a 1 %-resolution "
        "histogram; max is exact.",
        "- **WAL bytes**: `pg_stat_wal.wal_bytes` delta (FPIs: `wal_fpi`).",
        "- **Server bytes written**: Σ `/proc/<pid>/io` (write_bytes − cancelled_write_bytes) of the postmaster "
        "(which includes its exited children) and its live children: bytes of page-cache pages the server "
        "dirtied, i.e. what reaches storage, WAL included. *Data-file bytes* = that minus WAL bytes. *Server "
        "bytes read*: read_bytes (reads that missed the OS page cache). *Device bytes written*: "
        "`/proc/diskstats` of the data directory's device, whole device (includes other activity on the host).",
        "- **Shared buffers written**: `pg_stat_bgwriter` buffers_checkpoint + buffers_clean + buffers_backend "
        "× 8 KiB (updated by the checkpointer at checkpoint end, so it lags).",
        "- **CPU**: server = Σ utime+stime (+ children) of the postmaster tree from `/proc/<pid>/stat`; client = "
        "rusage of pgbench/psql.",
        "- **Sizes**: `pg_table_size` for tables (heap + TOAST + FSM + VM), `pg_total_relation_size` for each "
        "index, `pg_database_size` for the database.",
        "- **Ratios** are variant / heap-btree (for latencies, bytes and sizes lower is better; for rates higher "
        "is better).",
    ]


def console_summary(res):
    """Short plain-text summary for the terminal (the demo prints this)."""
    ran = [v for v in res["variants"] if v in res["runs"]]
    others = [v for v in ran if v != BASE]
    lines = []
    for v in res["variants"]:
        vs = res["variant_status"].get(v, {})
        if vs.get("status") == "skipped":
            lines.append("SKIPPED %s: %s" % (v, vs.get("reason")))
    hdr = ["workload", "phase", "metric"] + ran + (["%s/%s" % (v, BASE) for v in others] if BASE in ran else [])
    rows = [hdr]
    for wl in res["workloads"]:
        for phname in phases_by_name(res, wl):
            phs = {v: _phase(res, v, wl, phname) for v in ran}
            any_ph = next((p for p in phs.values() if p), None)
            if not any_ph:
                continue
            if any_ph["kind"] == "pgbench":
                main = any_ph["main"]
                q = any_ph["streams"][main]["role"] == "query"
                label = "queries/s" if q else "%s/s" % any_ph["unit"]
                vals = {v: (phs[v]["streams"][main]["tps"] if q else phs[v]["streams"][main]["rows_per_s"])
                        if phs[v] else None for v in ran}
            elif any_ph.get("rows_per_s"):
                label = "rows/s"
                vals = {v: phs[v].get("rows_per_s") if phs[v] else None for v in ran}
            else:
                continue
            row = [wl, phname, label] + [num(vals[v]) for v in ran]
            if BASE in ran:
                row += [fratio(ratio(vals[v], vals[BASE])) for v in others]
            rows.append(row)
            if any_ph["kind"] == "pgbench" and not q:
                t = {v: (phs[v].get("stall") or {}).get("last_third") if phs[v] else None for v in ran}
                row = ["", "", "%s, last third" % label] + [num(t[v]) for v in ran]
                if BASE in ran:
                    row += [fratio(ratio(t[v], t[BASE])) for v in others]
                rows.append(row)
            if any_ph["kind"] == "pgbench":
                b = {v: div(phs[v]["io"].get("srv_write_bytes"), phs[v].get("rows")) if phs[v] else None for v in ran}
                per = "row" if any_ph["unit"] in ("rows", "queries") else any_ph["unit"].rstrip("s")
                row = ["", "", "bytes written/%s" % per] + [fbytes(b[v]) for v in ran]
                if BASE in ran:
                    row += [fratio(ratio(b[v], b[BASE])) for v in others]
                rows.append(row)
                c = {v: div(phs[v]["io"].get("cpu_server_s"), phs[v].get("rows") and phs[v]["rows"] / 1e6)
                     if phs[v] else None for v in ran}
                row = ["", "", "server CPU us/%s" % per] + [num(c[v]) for v in ran]
                if BASE in ran:
                    row += [fratio(ratio(c[v], c[BASE])) for v in others]
                rows.append(row)
        vals = {v: ((res["runs"][v].get(wl) or {}).get("final_sizes") or {}).get("db") for v in ran}
        row = [wl, "end", "database size"] + [fbytes(vals[v]) for v in ran]
        if BASE in ran:
            row += [fratio(ratio(vals[v], vals[BASE])) for v in others]
        rows.append(row)
        for v in ran:
            fs = (res["runs"][v].get(wl) or {}).get("final_sizes") or {}
            idx = sum(r["bytes"] for r in fs.get("relations", []) if r["kind"] == "i")
            tab = sum(r["bytes"] for r in fs.get("relations", []) if r["kind"] == "r")
            lines.append("%s %s: tables %s, indexes %s" % (wl, v, fbytes(tab), fbytes(idx)))
        for v in ran:
            r = res["runs"][v].get(wl)
            if r and r.get("status") != "ok":
                lines.append("FAILED %s %s: %s" % (v, wl, (r.get("error") or "").strip().splitlines()[0:3]))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(hdr))]
    table = ["  ".join(str(c).rjust(widths[i]) if i >= 3 else str(c).ljust(widths[i]) for i, c in enumerate(r))
             for r in rows]
    busy = [noise_pct(ph) or 0 for wls in res["runs"].values() for run in wls.values()
            for ph in run["phases"] if ph.get("elapsed_s", 0) >= 2]
    if busy and max(busy) > 10:
        lines.append("NOTE: other processes and hypervisor steal took up to %.0f%% of the host CPUs during the "
                     "run: rates are noisy "
                     "(see 'server CPU us / row' in the report)" % max(busy))
    pair = interleave_pair(res)
    if pair and any(r is not None for r in pair[3]):
        lines.append("interleaved l.i1 (%d-s slices): %s" % (res["interleave"]["slice_s"],
                                                             ratio_summary(pair[0], pair[3])))
    mem = "no memory limit" if res["settings"].get("no_cgroup") else "memory limit %s" % fbytes(res["settings"].get("mem_limit"))
    return "\n".join(["fractam benchmark (%s, %s, shared_buffers %s)" % (
        res.get("mode"), mem, fbytes(res["settings"].get("shared_buffers")))] + table + [""] + lines)

#!/usr/bin/env python3
# bench/lib/demo_summary.py: the plain-words summary that bench/demo prints at its end.
#
#   demo_summary.py LARGER_THAN_MEMORY_DIR CACHED_DIR [TIMESERIES_DIR]
#
# Each DIR is a bench/run --out directory (results.json): the first two of iiBench with the variants
# heap-btree and heap-fractam, the third of timeseries with heap-btree and fractam-fractam.  Reads only those files; prints what the numbers mean, for someone who has just run
# the demo.
import json
import os
import sys

BASE, FT = "heap-btree", "heap-fractam"


def load(d):
    with open(os.path.join(d, "results.json")) as f:
        return json.load(f)


def phase(res, variant, name):
    for ph in res["runs"][variant]["iibench"]["phases"]:
        if ph.get("name") == name:
            return ph
    return None


def insert_numbers(res, variant):
    ph = phase(res, variant, "l.i1")
    if ph is None or "insert" not in ph.get("streams", {}):
        return None
    s = ph["streams"]["insert"]
    io = ph.get("io") or {}
    rows = s.get("rows") or 0
    written = io.get("srv_write_bytes")
    return {"rate": s.get("rows_per_s") or 0.0,
            "written_per_row": (written / rows) if written and rows else None,
            "cpu_per_row_us": (io["cpu_server_s"] * 1e6 / rows) if io.get("cpu_server_s") and rows else None,
            "db": io.get("db_size_after")}


def index_bytes(res, variant):
    sizes = res["runs"][variant]["iibench"].get("final_sizes") or {}
    total = 0
    for rel in sizes.get("relations", []):
        if rel.get("kind") == "i" and not rel["name"].endswith("_pkey"):
            total += rel.get("bytes") or 0
    return total or None, sizes.get("live_rows")


def mib(b):
    return "%.0f MiB" % (b / 1048576.0)


def ratio(a, b):
    return a / b if a and b else None


def describe(title, res, larger):
    b, f = insert_numbers(res, BASE), insert_numbers(res, FT)
    if not b or not f:
        return ["%s: no insert phase was measured (see the run's report.md)." % title]
    lim = res["settings"].get("mem_limit")
    r = ratio(f["rate"], b["rate"])
    out = ["%s" % title]
    if lim and b.get("db") and b["db"] > lim:
        out.append("  The heap+btree database ended at %s, %.1f times the server's memory limit of %s"
                   % (mib(b["db"]), b["db"] / float(lim), mib(lim)))
        out.append("  (shared buffers and the kernel's page cache included)%s."
                   % (", so most index pages it\n  needs are on disk" if larger else ""))
    elif lim and b.get("db"):
        out.append("  The heap+btree database ended at %s: it fits in the server's %s of memory."
                   % (mib(b["db"]), mib(lim)))
    out.append("  Inserts (3 secondary indexes): heap+btree %s rows/s, heap+fractam %s rows/s: %.2f times."
               % ("{:,.0f}".format(b["rate"]), "{:,.0f}".format(f["rate"]), r))
    bs, fs = phase(res, BASE, "l.i1").get("slices"), phase(res, FT, "l.i1").get("slices")
    if bs and fs and len(bs) >= 2 and len(fs) >= 2:
        out.append("  Per slice of the interleaved run, first to last: btree %s -> %s rows/s, fractam %s -> %s."
                   % tuple("{:,.0f}".format(x) for x in (bs[0]["rows_per_s"], bs[-1]["rows_per_s"],
                                                         fs[0]["rows_per_s"], fs[-1]["rows_per_s"])))
    if b["written_per_row"] and f["written_per_row"]:
        out.append("  Bytes written per row (WAL and data files): btree %.1f KiB, fractam %.1f KiB (%.2f times)."
                   % (b["written_per_row"] / 1024, f["written_per_row"] / 1024,
                      f["written_per_row"] / b["written_per_row"]))
    if b["cpu_per_row_us"] and f["cpu_per_row_us"]:
        out.append("  Server CPU per row: btree %.0f us, fractam %.0f us."
                   % (b["cpu_per_row_us"], f["cpu_per_row_us"]))
    bi, brows = index_bytes(res, BASE)
    fi, frows = index_bytes(res, FT)
    if bi and fi and brows and frows:
        out.append("  Secondary indexes at the end: btree %.0f bytes per row, fractam %.0f bytes per row."
                   % (bi / float(brows), fi / float(frows)))
    if larger:
        if r and r >= 1.5:
            out.append("  What it means: a btree insert reads a random leaf from disk for each index and")
            out.append("  writes it back whole; fractam buffers the inserts high in the tree and writes each")
            out.append("  leaf once for many of them, so it keeps inserting at memory speed.")
        else:
            out.append("  The two did not part in this short run: give it more rows (--load-rows) or less")
            out.append("  memory (--mem-limit) so that the btree indexes outgrow memory.")
    else:
        out.append("  What it means: in memory a btree insert costs no I/O either, so fractam's buffering")
        out.append("  has nothing to save; it applies inserts to its leaves directly and aims at parity.")
    return out


def ts_numbers(res, variant):
    run = res["runs"].get(variant, {}).get("timeseries") or {}
    phases = [ph for ph in run.get("phases", []) if ph.get("status") == "ok"]
    if not phases:
        return None
    ph = phases[-1]
    sizes = ph.get("sizes") or {}
    table = sum(r.get("bytes") or 0 for r in sizes.get("relations", []) if r.get("kind") == "r")
    index = sum(r.get("bytes") or 0 for r in sizes.get("relations", []) if r.get("kind") == "i")
    s = ph.get("streams", {}).get("insert", {})
    return {"rate": s.get("rows_per_s") or 0.0, "rows": sizes.get("live_rows"),
            "table": table, "index": index, "label": ph.get("label", ""),
            "worst": (ph.get("stall") or {}).get("worst1")}


def describe_timeseries(title, res):
    b, f = ts_numbers(res, BASE), ts_numbers(res, "fractam-fractam")
    if not b or not f or not b["rows"] or not f["rows"]:
        return ["%s: no timeseries phase was measured (see the run's report.md)." % title]
    out = [title, "  %s." % b["label"]]
    for name, x in (("heap + btree primary key", b), ("fractam table + fractam key, zstd", f)):
        out.append("  %-34s %s rows/s; table %s + key %s for %s rows: %.0f bytes per row."
                   % (name + ":", "{:,.0f}".format(x["rate"]), mib(x["table"]), mib(x["index"]),
                      "{:,}".format(x["rows"]), (x["table"] + x["index"]) / float(x["rows"])))
    per_b = (b["table"] + b["index"]) / float(b["rows"])
    per_f = (f["table"] + f["index"]) / float(f["rows"])
    r = ratio(f["rate"], b["rate"]) or 0
    out.append("  So fractam stores a row in %.2f times heap+btree's space, and inserts at %.2f times"
               % (per_f / per_b, r))
    out.append("  its rate.  What it means: each inserting session merges the full leaves behind the")
    out.append("  points where it appends (the table's end, and each sensor's entries in the key) into")
    out.append("  zstd-compressed pages as it goes, the table's rows column by column (integers as")
    out.append("  offsets or steps, decimal doubles as scaled integers), and reuses the pages")
    out.append("  that frees, while heap keeps each row with a 23-byte header in an uncompressed page,")
    out.append("  and btree each key in an uncompressed leaf.")
    if r < 1:
        out.append("  The fractam table inserts slower than heap here: compressing every row as it comes")
        out.append("  costs CPU, and the table access method under concurrent appenders costs more than")
        out.append("  heap's even uncompressed (README, Measured).")
    return out


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: demo_summary.py LARGER_THAN_MEMORY_DIR CACHED_DIR [TIMESERIES_DIR]",
              file=sys.stderr)
        return 2
    ltm, cached = load(argv[1]), load(argv[2])
    lines = ["", "=" * 78, "What the demo measured (heap table; btree or fractam secondary indexes)", "=" * 78]
    lines += describe("1. Indexes larger than memory", ltm, True)
    lines.append("")
    lines += describe("2. Everything in memory (for honesty)", cached, False)
    lines.append("")
    if len(argv) == 4:
        lines += describe_timeseries("3. Timeseries: a compressed fractam table against heap", load(argv[3]))
        lines.append("")
    lines.append("Compression is off by default (WITH (compression = 'zstd'), or")
    lines.append("fractam.default_compression); see README.  The charts of rows/s over time are in")
    lines.append("each run's directory:")
    for d in argv[1:]:
        lines.append("  %s" % os.path.join(d, "report.md"))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

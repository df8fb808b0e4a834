#!/usr/bin/env python3
"""Turns the raw figures of scripts/bench.sh into docs/benchmarks.md and a plot.

Reads the work directory the script filled (results.tsv, the plans' `memplan show
--json`, the replay stats as JSON Lines, the profiler output sizes) and writes
Markdown tables of medians [min-max] with ratios against glibc, a plain list of
where memplan loses, and an SVG bar chart (written directly, no plotting library,
so the only dependency is python3).

The findings list is computed from the numbers, never written by hand, so that a
rerun on another machine cannot leave a stale claim in the document.

The sections that other scripts or measurements write into the document, each
between "<!-- NAME: begin -->" and "<!-- NAME: end -->" (scripts/bench/instructions.sh's,
the planner's), are carried over when the document is written anew, since they are
made separately.
"""
import argparse
import glob
import json
import math
import re
import os
import statistics
import sys
from collections import defaultdict

ALLOC_LABEL = {
    "glibc": "glibc",
    "jemalloc": "jemalloc",
    "mimalloc": "mimalloc",
    "tcmalloc": "tcmalloc",
    "memplan": "memplan replay",
}
# The sections of the document that are made separately (instructions.sh's, ...).
KEPT_SECTION = re.compile(r"<!-- ([\w.-]+): begin -->.*?<!-- \1: end -->", re.S)

ALLOC_COLOUR = {
    "glibc": "#7f7f7f",
    "jemalloc": "#1f77b4",
    "mimalloc": "#2ca02c",
    "tcmalloc": "#ff7f0e",
    "memplan": "#d62728",
}


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("=")
            meta[key] = value
    return meta


def read_results(path):
    """{(phase, workload, tool): [row, ...]} with floats for wall and MiB."""
    rows = defaultdict(list)
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            r = dict(zip(header, line.rstrip("\n").split("\t")))
            try:
                r["wall"] = float(r["wall_s"])
            except ValueError:
                r["wall"] = float("nan")
            r["rss_mib"] = int(r["maxrss_kib"] or 0) / 1024.0
            try:
                r["cpu"] = float(r.get("cpu_s") or "nan")
            except ValueError:
                r["cpu"] = float("nan")
            r["ok"] = r["status"] == "0"
            r["same"] = r["same_output"] == "1"
            # A run counts only if it succeeded and, under an allocator or memplan
            # record, printed what glibc's run printed (heaptrack adds its own
            # output).
            r["usable"] = r["ok"] and (r["tool"] == "heaptrack" or r["same"])
            rows[(r["phase"], r["workload"], r["tool"])].append(r)
    return rows


def summary(values):
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def fmt_num(v):
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3f" % v


def fmt_cell(s, base=None):
    if s is None:
        return "n/a"
    med, lo, hi = s
    text = "%s [%s–%s]" % (fmt_num(med), fmt_num(lo), fmt_num(hi))
    if base:
        text += " (%.2f×)" % (med / base[0])
    return text


def fmt_bytes(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%.0f %s" if unit == "B" else "%.1f %s") % (n, unit)
        n /= 1024.0
    return str(n)


def replay_stats(work, wl):
    """Per repetition, the statistics line of the run's main process (the one that
    made the most allocation calls), with the number of processes in "images"."""
    reps = []
    for path in sorted(glob.glob(os.path.join(work, "stats", wl + ".*.jsonl"))):
        lines = []
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    lines.append(json.loads(line))
        if not lines:
            continue
        main_line = max(lines, key=lambda o: o.get("allocs", 0))
        main_line["images"] = len(lines)
        reps.append(main_line)
    return reps


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def main_image(show):
    """The image of a plan's `memplan show --json` that made the most allocations."""
    images = show.get("images") or [{}]
    return max(images, key=lambda i: i.get("allocations", 0))


def read_kept_sections(path):
    """The separately made sections of an existing document, markers included, in
    their order, or None."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    kept = [m.group(0) for m in KEPT_SECTION.finditer(text)]
    return "\n\n".join(kept) if kept else None


def read_sizes(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split() if x.strip()]
    except OSError:
        return []


def svg_chart(meta, rows, workloads, allocators, elsewhere, path):
    """Three panels, wall time, CPU time and peak RSS, each bar the ratio of an
    allocator's median to glibc's on a log2 axis (bars grow up when worse, down when
    better), with min-max whiskers and the ratio printed. Workloads in elsewhere
    (replayed on another run than the recorded one) are marked with an asterisk."""
    panel_h, top, left, right = 300, 80, 70, 20
    width = max(960, left + right + 100 * len(workloads))
    gap = 60
    panels = (("wall", "Wall time"), ("cpu", "CPU time (user + system)"), ("rss_mib", "Peak RSS"))
    height = top + len(panels) * panel_h + (len(panels) - 1) * gap + 80
    plot_w = width - left - right
    lo_exp, hi_exp = -3, 5  # 1/8x .. 32x
    out = []
    out.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
               'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">'
               % (width, height, width, height))
    out.append('<rect width="100%" height="100%" fill="white"/>')
    out.append('<text x="%d" y="22" font-size="15" font-weight="bold">memplan benchmarks: '
               'relative to glibc (median of %s runs; whiskers: min–max)</text>'
               % (left, meta.get("reps", "?")))
    out.append('<text x="%d" y="40" fill="#444">%s, %s CPUs, %s. Log scale: '
               'above 1× is slower / larger than glibc, below is faster / smaller.</text>'
               % (left, esc(meta.get("cpu", "")), meta.get("nproc", "?"),
                  esc(meta.get("date", ""))))
    if elsewhere:
        out.append('<text x="%d" y="56" fill="#444">* memplan replays this workload with '
                   'the plan of a shorter run (another input or other arguments).</text>'
                   % left)

    def y_of(ratio, y0):
        e = math.log2(max(min(ratio, 2 ** hi_exp), 2 ** lo_exp))
        return y0 + panel_h * (hi_exp - e) / (hi_exp - lo_exp)

    group_w = plot_w / len(workloads)
    bar_w = group_w * 0.8 / len(allocators)
    for p, (metric, title) in enumerate(panels):
        y0 = top + p * (panel_h + gap)
        out.append('<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>'
                   % (left, y0 - 8, title))
        for e in range(lo_exp, hi_exp + 1):
            y = y_of(2 ** e, y0)
            label = ("%g×" % (2 ** e)) if e >= 0 else "1/%d×" % (2 ** -e)
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" '
                       'stroke-width="%s"/>' % (left, width - right, y, y,
                                                "#000" if e == 0 else "#ddd",
                                                "1.2" if e == 0 else "1"))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                       % (left - 6, y + 4, label))
        for g, wl in enumerate(workloads):
            base = summary([r[metric] for r in rows.get(("allocator", wl, "glibc"), [])
                            if r["usable"]])
            gx = left + g * group_w + group_w * 0.1
            out.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="12">%s</text>'
                       % (left + (g + 0.5) * group_w, y0 + panel_h + 16,
                          esc(wl) + ("*" if wl in elsewhere else "")))
            if not base:
                continue
            for a, alloc in enumerate(allocators):
                s = summary([r[metric] for r in rows.get(("allocator", wl, alloc), [])
                             if r["usable"]])
                if not s:
                    continue
                med, lo, hi = (v / base[0] for v in s)
                x = gx + a * bar_w
                y1, ym = y_of(1.0, y0), y_of(med, y0)
                out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s">'
                           '<title>%s on %s: %.3f× glibc</title></rect>'
                           % (x + 1, min(y1, ym), bar_w - 2, max(abs(ym - y1), 1),
                              ALLOC_COLOUR[alloc], ALLOC_LABEL[alloc], esc(wl), med))
                cx = x + bar_w / 2
                out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#000"/>'
                           % (cx, cx, y_of(lo, y0), y_of(hi, y0)))
                ty = ym - 4 if med >= 1 else ym + 12
                out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="9">'
                           '%.2f</text>' % (cx, ty, med))
    ly = top + len(panels) * panel_h + (len(panels) - 1) * gap + 45
    for a, alloc in enumerate(allocators):
        x = left + a * 150
        out.append('<rect x="%d" y="%d" width="14" height="14" fill="%s"/>'
                   % (x, ly - 11, ALLOC_COLOUR[alloc]))
        out.append('<text x="%d" y="%d" font-size="12">%s</text>'
                   % (x + 20, ly, ALLOC_LABEL[alloc]))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def esc(s):
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--markdown", required=True)
    ap.add_argument("--svg", required=True)
    args = ap.parse_args()

    meta = read_meta(args.meta)
    rows = read_results(os.path.join(args.work, "results.tsv"))
    workloads = meta["workloads"].split()
    allocators = meta["allocators"].split()
    reps = meta.get("reps", "?")
    # Workloads replayed on another run than the one recorded.
    elsewhere = [wl for wl in workloads if "rec." + wl in meta]
    kept = read_kept_sections(args.markdown)

    def mark(wl):
        return wl + ("\\*" if wl in elsewhere else "")

    def stat(phase, wl, tool, metric):
        return summary([r[metric] for r in rows.get((phase, wl, tool), []) if r["usable"]])

    md = []
    w = md.append
    w("# Benchmarks")
    w("")
    w("Written by `scripts/bench.sh`; rerun it to refresh every figure here. "
      "Do not edit by hand.")
    w("")
    if meta.get("quick") == "1":
        w("**This is a quick smoke run (BENCH_QUICK=1): small inputs, few repetitions. "
          "Its figures are not meant for comparison.**")
        w("")
    w("- Command: `%s` (%s repetition%s; the timed part took %s s)"
      % (meta["command"], reps, "" if reps == "1" else "s", meta.get("elapsed_s", "?")))
    w("- Date: %s" % meta["date"])
    w("- Machine: %s, %s CPUs (nproc), %s RAM, Linux %s, %s"
      % (meta["cpu"], meta["nproc"], meta["mem"], meta["kernel"], meta["os"]))
    w("- Load average (1 min) at the start and end of the timed part: %s, %s"
      % (meta.get("load_start", "?"), meta.get("load_end", "?")))
    w("- memplan %s, built with `--buildtype=release`; glibc %s, jemalloc %s, "
      "mimalloc %s, tcmalloc-minimal %s, heaptrack %s (Debian packages)"
      % (meta["commit"], meta["glibc"], meta["jemalloc"], meta["mimalloc"],
         meta["tcmalloc"], meta["heaptrack"]))
    w("")
    w("## Method")
    w("")
    w("- `scripts/bench.sh` installs what it needs, builds memplan in release mode and "
      "runs everything below. `BENCH_REPS=N` sets the repetitions, `BENCH_QUICK=1` makes "
      "a short smoke run, `BENCH_REV=REV` measures a committed revision, "
      "`BENCH_KEEP_DIR=DIR` keeps the raw figures (see the head of the script).")
    w("- Each figure is the median of %s runs, with the minimum and maximum in "
      "brackets. Within a repetition every allocator runs once, one after the other, "
      "and the first allocator rotates between repetitions, so slow drift of the "
      "machine is shared out evenly." % reps)
    w("- Wall time and peak resident set (RSS) come from `bench-run` "
      "(`tests/bench/bench_run.c`): `CLOCK_MONOTONIC` around `fork`/`exec`/`wait4`, "
      "and `ru_maxrss` from `wait4`.")
    w("- jemalloc, mimalloc and tcmalloc are loaded with `LD_PRELOAD` of the Debian "
      "shared objects. memplan replay uses the raw form (`MEMPLAN_MODE=replay "
      "MEMPLAN_PLAN=… LD_PRELOAD=libmemplan.so`), so the CLI's start-up is not "
      "counted. Each workload's plan was recorded once, before any timed run, with "
      "`memplan record -o PLAN --` on the workload's recorded run: the replayed run itself, "
      "except for the workloads marked below, whose plan comes from a shorter run.")
    w("- Every run's output is compared with glibc's; a run that fails or prints "
      "something else is left out of the figures and listed below.")
    w("- `PYTHONHASHSEED=0` is set for every run, so CPython allocates the same way "
      "each time.")
    w("")
    w("## Workloads")
    w("")
    w("In the commands, `BUILD` is memplan's release build directory; the inputs are "
      "written by `scripts/bench/gen_sql.py` and `scripts/bench/gen_lines.py` from "
      "fixed seeds.")
    w("")
    w("| workload | what it does | command (run under every allocator) | recorded run "
      "(the plan memplan replays it with) |")
    w("| --- | --- | --- | --- |")
    for wl in workloads:
        rec = meta.get("rec." + wl)
        w("| %s | %s | `%s` | %s |" % (wl, meta["what." + wl], meta["cmd." + wl],
                                       "`%s`" % rec if rec else "the same"))
    w("")
    if elsewhere:
        w("**Replayed on another run than the recorded one:** %s. Each of these was "
          "recorded once on a short run (a shorter input from another seed, or smaller "
          "arguments, as in the last column) and its plan serves the longer run timed "
          "here, as a plan recorded once serves later runs in use "
          "([steady-state.md](steady-state.md)). Every other workload replays the very "
          "run that was recorded."
          % ", ".join(elsewhere))
        w("")

    header = "| workload | " + " | ".join(ALLOC_LABEL[a] for a in allocators) + " |"
    sep = "| --- |" + " ---: |" * len(allocators)
    for metric, title, unit, note in (
            ("wall", "Wall time", "seconds", None),
            ("cpu", "CPU time", "seconds",
             "User plus system time. Other load on the machine inflates it much less "
             "than wall time, so read this table too when the load average above is "
             "high."),
            ("rss_mib", "Peak RSS", "MiB", None)):
        w("## %s (%s, median [min–max], ratio to glibc's median)" % (title, unit))
        w("")
        if note:
            w(note)
            w("")
        w(header)
        w(sep)
        for wl in workloads:
            base = stat("allocator", wl, "glibc", metric)
            cells = []
            for a in allocators:
                s = stat("allocator", wl, a, metric)
                cells.append(fmt_cell(s, base if a != "glibc" else None))
            w("| %s | %s |" % (mark(wl), " | ".join(cells)))
        w("")
    if elsewhere:
        w("\\* replayed with the plan of a shorter run (see Workloads).")
        w("")

    w("## memplan replay: arena share and footprint")
    w("")
    w("Figures of the run's main process (the statistics line with the most allocation "
      "calls), median over runs. *From the arena*: calls served from the arena, of "
      "all allocation calls; *steady state*: those of them served by a site's pools or "
      "tail past its exact entries, and *spare space*: by the arena's free granules "
      "where the steady state had no place ([steady-state.md](steady-state.md)), both "
      "again of all calls. *Stacks walked*: calls whose stack the per-thread caches of "
      "call sites did not know, of all calls, median [min–max] over runs: a run whose hot "
      "stacks evicted each other stands out ([call-sites.md](call-sites.md)). "
      "*Image*: how replay found the process's image in the plan (`exact`: "
      "same executable and arguments; `same_exe`: same executable, nearest arguments). "
      "Arena and recorded lower bound (the most bytes live at once in the recorded "
      "run) are those of that image.")
    w("")
    w("| workload | image | allocation calls | from the arena | steady state | spare space "
      "| stacks walked | misses by reason | arena | recorded lower bound | arena / lower bound "
      "| memplan peak RSS | smallest peer peak RSS |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    hit_rates = {}
    for wl in workloads:
        reps_stats = replay_stats(args.work, wl)
        show_image = main_image(read_json(os.path.join(args.work, "plans", wl + ".json")))
        arena = show_image.get("arena_bytes", 0)
        lower = show_image.get("lower_bound_bytes", 0)
        if reps_stats:
            rates = [s["hits"] / s["allocs"] if s["allocs"] else 0.0 for s in reps_stats]
            steady = [s.get("steady_hits", 0) / s["allocs"] if s["allocs"] else 0.0
                      for s in reps_stats]
            spare = [s.get("spare_hits", 0) / s["allocs"] if s["allocs"] else 0.0
                     for s in reps_stats]
            walks = [s.get("walks", 0) / s["allocs"] if s["allocs"] else 0.0
                     for s in reps_stats]
            rate = statistics.median(rates)
            spare_text = "%.1f%%" % (100 * statistics.median(spare))
            walks_text = "%.2f%% [%.2f–%.2f]" % (100 * statistics.median(walks),
                                                 100 * min(walks), 100 * max(walks))
            hit_rates[wl] = (rate, statistics.median(steady),
                             "/".join(sorted({s.get("match", "?") for s in reps_stats})))
            calls = statistics.median([s["allocs"] for s in reps_stats])
            misses = defaultdict(int)
            for s in reps_stats:
                for k, v in s.get("misses", {}).items():
                    misses[k] += v
            miss_text = ", ".join("%s %d" % (k, round(v / len(reps_stats)))
                                  for k, v in sorted(misses.items(), key=lambda kv: -kv[1])
                                  if round(v / len(reps_stats))) or "none"
            rate_text = "%.1f%% [%.1f–%.1f]" % (100 * rate, 100 * min(rates), 100 * max(rates))
            steady_text = "%.1f%%" % (100 * hit_rates[wl][1])
            match_text = hit_rates[wl][2]
            processes = max(s["images"] for s in reps_stats)
            if processes > 1:
                match_text += " (1 of %d processes)" % processes
            arena = reps_stats[-1].get("arena_bytes", arena)
            lower = reps_stats[-1].get("lower_bound_bytes", lower)
        else:
            calls, rate_text, steady_text, miss_text, match_text = 0, "n/a", "n/a", "n/a", "n/a"
            spare_text = walks_text = "n/a"
        mp_rss = stat("allocator", wl, "memplan", "rss_mib")
        peers = [(stat("allocator", wl, a, "rss_mib"), a) for a in allocators if a != "memplan"]
        peers = [(s[0], a) for s, a in peers if s]
        best_peer = min(peers) if peers else None
        w("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            mark(wl), match_text, calls, rate_text,
            steady_text, spare_text, walks_text, miss_text, fmt_bytes(arena), fmt_bytes(lower),
            "%.3f" % (arena / lower) if lower else "n/a",
            "%s MiB" % fmt_num(mp_rss[0]) if mp_rss else "n/a",
            "%s MiB (%s)" % (fmt_num(best_peer[0]), best_peer[1]) if best_peer else "n/a"))
    w("")
    w("Miss reasons are averaged per run. `occurrence_beyond`: past a site's exact "
      "entries, with no pools or tail to go on in; `pool_full`: every slot or place "
      "tried was busy; `slot_busy`: the planned place was still occupied (the run "
      "diverged from the recording, e.g. threads interleaved differently); "
      "`size_too_large`: the request was larger than the planned block or every slot; "
      "`unknown_site`: a call site the recording never saw.")
    w("")

    w("## Plans and the length of the run")
    w("")
    w("A plan holds at most 4096 exact entries per call site (16,384 for a site whose "
      "blocks pile up), and pools for what goes on past them, so its size is bounded "
      "by the program's call sites, not by the length of the run: a longer recording "
      "adds entries only to sites that had not yet filled theirs. For the workloads "
      "replayed on a longer run, the longer run was also recorded once (that plan is "
      "not used) to compare the sizes.")
    w("")
    w("| workload | recorded run: allocations | plan file | exact entries | pools "
      "| replayed run: allocations | its plan, had it been recorded | plan size ratio |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for wl in workloads:
        image = main_image(read_json(os.path.join(args.work, "plans", wl + ".json")))
        size = read_sizes(os.path.join(args.work, "plans", wl + ".size"))
        cells = [mark(wl),
                 "%d" % image.get("allocations", 0) if image else "n/a",
                 fmt_bytes(size[0]) if size else "n/a",
                 "%d" % image.get("exact_entries", 0) if image else "n/a",
                 "%d" % image.get("pools", 0) if image else "n/a"]
        if wl in elsewhere:
            long_image = main_image(read_json(
                os.path.join(args.work, "plans", wl + ".replayed.json")))
            long_size = read_sizes(os.path.join(args.work, "plans", wl + ".replayed.size"))
            cells += ["%d" % long_image.get("allocations", 0),
                      fmt_bytes(long_size[0]) if long_size else "n/a",
                      "%.2f×" % (long_size[0] / size[0]) if size and long_size else "n/a"]
        else:
            cells += ["the same", "–", "–"]
        w("| " + " | ".join(cells) + " |")
    w("")

    w("## Profilers: memplan record against heaptrack")
    w("")
    w("Both profile the workload's recorded run (for the workloads marked \\*, the short "
      "one). `memplan record -o PLAN -- CMD` here includes packing each process's "
      "recording at its exit, planning the arena once CMD has ended and storing the "
      "call sites' symbols in the plan; `heaptrack -o FILE CMD` includes "
      "interpreting and compressing its trace. Peak RSS is the largest single process (heaptrack runs the program, its "
      "interpreter and a compressor as separate processes). *Command alone* is the "
      "recorded command run plainly, in turn with the two: no profiler that runs in the "
      "program's process can take less, so its ratio to heaptrack is the floor of "
      "memplan's.")
    w("")
    w("| workload | memplan record (s) | heaptrack (s) | time, memplan / heaptrack "
      "| command alone (s) | floor: alone / heaptrack "
      "| memplan record peak RSS (MiB) | heaptrack peak RSS (MiB) "
      "| peak RSS, memplan / heaptrack | plan file | heaptrack file |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    prof_ratio = {}
    for wl in workloads:
        m = stat("profiler", wl, "memplan record", "wall")
        h = stat("profiler", wl, "heaptrack", "wall")
        alone = stat("profiler", wl, "plain", "wall")
        mr = stat("profiler", wl, "memplan record", "rss_mib")
        hr = stat("profiler", wl, "heaptrack", "rss_mib")
        ps = read_sizes(os.path.join(args.work, "prof", wl + ".memplan.size"))
        hs = read_sizes(os.path.join(args.work, "prof", wl + ".heaptrack.size"))
        if not m and not h:
            continue  # not profiled (shell-loop: heaptrack follows one process)
        ratio = m[0] / h[0] if m and h else None
        prof_ratio[wl] = ratio
        w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            mark(wl), fmt_cell(m), fmt_cell(h),
            "%.2f×" % ratio if ratio else "n/a", fmt_cell(alone),
            "%.2f×" % (alone[0] / h[0]) if alone and h else "n/a",
            fmt_cell(mr), fmt_cell(hr),
            "%.2f×" % (mr[0] / hr[0]) if mr and hr else "n/a",
            fmt_bytes(statistics.median(ps)) if ps else "n/a",
            fmt_bytes(statistics.median(hs)) if hs else "n/a"))
    w("")

    w("## What the numbers say")
    w("")
    w("Computed from the tables above: memplan replay against glibc, and against the best "
      "of the four others when one of them does better. Where the min–max ranges of two "
      "allocators overlap, the difference is within this run's noise and is marked so.")
    w("")

    def overlap(a, b):
        return a[1] <= b[2] and b[1] <= a[2]

    for wl in workloads:
        parts = []
        for metric, noun, unit in (("wall", "wall time", "s"), ("cpu", "CPU time", "s"),
                                   ("rss_mib", "peak RSS", "MiB")):
            mp = stat("allocator", wl, "memplan", metric)
            base = stat("allocator", wl, "glibc", metric)
            if not mp or not base:
                parts.append("no %s figure for memplan" % noun)
                continue
            others = [(stat("allocator", wl, a, metric), a)
                      for a in allocators if a != "memplan"]
            others = [(s[0], a, s) for s, a in others if s]
            best = min(others)
            verdict = "%s %s %s vs glibc %s %s (%.2f×%s)" % (
                noun, fmt_num(mp[0]), unit, fmt_num(base[0]), unit, mp[0] / base[0],
                ", within noise" if overlap(mp, base) else "")
            if mp[0] > best[0]:
                verdict += "; **worse than %s** (%s %s, memplan is %.2f× that%s)" % (
                    best[1], fmt_num(best[0]), unit, mp[0] / best[0],
                    ", within noise" if overlap(mp, best[2]) else "")
            else:
                runner_up = min((o for o in others), key=lambda o: o[0])
                verdict += "; the lowest of all five%s" % (
                    " (within noise of %s)" % runner_up[1]
                    if overlap(mp, runner_up[2]) else "")
            parts.append(verdict)
        line = "- **%s**%s: memplan replay %s." % (
            wl, " (replayed with the plan of a shorter run)" if wl in elsewhere else "",
            "; ".join(parts))
        if wl in hit_rates:
            rate, steady, match = hit_rates[wl]
            line += " %.1f%% of allocation calls from the arena (%.1f%% by the steady " \
                    "state), image matched %s." % (100 * rate, 100 * steady, match)
        if prof_ratio.get(wl):
            m = stat("profiler", wl, "memplan record", "wall")
            h = stat("profiler", wl, "heaptrack", "wall")
            line += " Recording took %.2f× heaptrack's time (%s)." % (
                prof_ratio[wl], "within noise" if overlap(m, h)
                else "slower" if prof_ratio[wl] > 1 else "faster")
        w(line)
    w("")
    w("## Reading the figures")
    w("")
    w("- memplan replay must identify each allocation's call site and occurrence before "
      "it can use the arena, work that a general-purpose allocator's fast path does not "
      "do. Programs made of millions of small, short-lived allocations (churn, sqlite3) "
      "pay it on every call; churn-touch, which writes only 8 bytes of each block, "
      "shows that cost with little else around it.")
    w("- A plan holds each call site's first 4096 occurrences exactly (16,384 if its "
      "blocks pile up), and what goes on past them as pools of slots or a tail of places (the plan-size table). Each "
      "replayed process reads the plan's image keys and its own image's tables, and each call "
      "site's entries with pread into a small window, so the plan adds little to the peak "
      "RSS; the rest of memplan's RSS above the arena is its own code and "
      "tables, libgcc's unwinder, and the allocations that went to libc.")
    w("- Where allocations are few and large (layers), the arena is mapped once and its "
      "pages stay resident, so the program neither waits for the allocator nor "
      "page-faults again in later iterations.")
    w("- CPython serves objects of 512 bytes or less from its own pools, so only a few "
      "thousand of its allocations reach malloc at all; every allocator sees almost the "
      "same program there.")
    w("- With several threads, a site's occurrences can be taken in a different order "
      "than when recording; a block whose planned slot is still in use then takes free "
      "room of the arena, or is a `slot_busy` miss that falls back to libc.")
    w("- A run longer than the recorded one is served by the steady state once a site's "
      "exact entries run out; what the steady state cannot hold (a site whose live "
      "blocks grow with the input, sizes beyond every slot) goes to libc, as the miss "
      "reasons show.")
    w("")

    failures = []
    for (phase, wl, tool), rs in sorted(rows.items()):
        for r in rs:
            if not r["ok"]:
                failures.append("%s %s on %s, repetition %s: exit status %s"
                                % (phase, tool, wl, r["rep"], r["status"]))
            elif tool != "heaptrack" and not r["same"]:
                failures.append("%s on %s, repetition %s: output differs from glibc's "
                                "(left out)" % (tool, wl, r["rep"]))
    w("## Failed or divergent runs")
    w("")
    if failures:
        for f in failures:
            w("- " + f)
    else:
        w("None: every run exited 0 and printed what glibc's run printed.")
    w("")
    w("## Plot")
    w("")
    w("![Wall time, CPU time and peak RSS relative to glibc](benchmarks.svg)")
    w("")
    if kept:
        w(kept)
        w("")

    with open(args.markdown, "w") as f:
        f.write("\n".join(md))
    svg_chart(meta, rows, workloads, allocators, set(elsewhere), args.svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())

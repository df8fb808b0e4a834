#!/usr/bin/env python3
"""Instructions per malloc, calloc, realloc and free, from callgrind profiles.

Reads one callgrind output file per allocator and adds up the calls a program makes
into the malloc family: each call arc whose caller is a function of the program's
own executable (main excepted, whose one-off calls, such as the calloc of the
churn's rings, are not the allocation pattern measured) and whose callee is malloc,
calloc, realloc or free, whichever library defines it. An arc's cost is inclusive:
everything the allocator did for those calls, down to the system calls' entry.
Prints a Markdown table of instructions per call, and one of cache misses per call
when the profiles simulated caches (callgrind --cache-sim=yes); with --write FILE,
also puts them into FILE as a section between markers, replacing the section if
FILE has one (scripts/bench/report.py carries the section over when it writes FILE
anew).

usage: callgrind_calls.py --exe NAME [--write FILE] [--note TEXT]... LABEL=CALLGRIND_OUT...
"""
import argparse
import re
import sys

ENTRY_POINTS = ("malloc", "calloc", "realloc", "free")
BEGIN = "<!-- instructions.sh: begin -->"
END = "<!-- instructions.sh: end -->"
# The kinds of compressed names in callgrind's format, by the key that names them.
NAME_KIND = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl",
             "cfl": "fl", "fn": "fn", "cfn": "fn"}


def call_arcs(path):
    """({(caller object, caller function, callee function): [calls, inclusive costs]},
    the events the costs count, Ir first)."""
    names = {"ob": {}, "fl": {}, "fn": {}}

    def name(kind, value):
        # "(id) name" defines a compressed name, "(id)" refers to it again.
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), "???")

    arcs = {}
    ob = fn = cfn = None
    pending = None
    events = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if pending is not None:
                # The line after calls= holds the call's position and its inclusive
                # costs, one per event in order (those left out are 0).
                costs = [int(v) for v in line.split()[1:]]
                arc = arcs.setdefault((ob, fn, cfn), [0, [0] * len(events)])
                arc[0] += pending
                for i, v in enumerate(costs[:len(events)]):
                    arc[1][i] += v
                pending = cfn = None
                continue
            key, eq, value = line.partition("=")
            if key == "calls" and eq:
                pending = int(value.split()[0])
            elif key in NAME_KIND and eq:
                n = name(NAME_KIND[key], value)
                if key == "ob":
                    ob = n
                elif key == "fn":
                    fn = n
                elif key == "cfn":
                    cfn = n
            elif line.startswith("events:"):
                events = line.split()[1:]
    if not events or events[0] != "Ir":
        sys.exit("callgrind_calls: %s does not count Ir first" % path)
    return arcs, events


def entry_point(function):
    """malloc, calloc, realloc or free if the function is that entry point (under
    any of the names an allocator may give it), else None."""
    base = re.sub(r"@.*$", "", function or "")
    base = re.sub(r"^(je_|tc_|mi_|__libc_)", "", base)
    return base if base in ENTRY_POINTS else None


def program_calls(path, exe):
    """{entry point: (calls, {event: inclusive cost})} of the calls made by exe's
    functions."""
    arcs, events = call_arcs(path)
    totals = {e: [0, {ev: 0 for ev in events}] for e in ENTRY_POINTS}
    for (ob, fn, cfn), (calls, costs) in arcs.items():
        e = entry_point(cfn)
        if e and ob and ob.rsplit("/", 1)[-1] == exe and fn != "main":
            totals[e][0] += calls
            for ev, v in zip(events, costs):
                totals[e][1][ev] += v
    return totals


def misses(costs, level):
    """Data misses (reads and writes) at level D1 or DL of one entry point's costs,
    None if the profile did not simulate caches."""
    keys = (level + "mr", level + "mw")
    return sum(costs[k] for k in keys) if all(k in costs for k in keys) else None


def total_ir(path):
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    return 0


def program_totals(path):
    """The whole profile's totals by event name (Ir, D1mr, ...)."""
    events = None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith(("summary:", "totals:")) and events:
                return dict(zip(events, map(int, line.split()[1:])))
    return {}


def program_table(results):
    """results: [(label, totals)] of whole programs, the first one the baseline."""
    out = []
    w = out.append
    w("| allocator | instructions (Ir) | ratio | D1 misses | ratio | LL misses | ratio |")
    w("| --- |" + " ---: |" * 6)
    base = None
    for label, t in results:
        row = (t.get("Ir", 0), misses(t, "D1") or 0, misses(t, "DL") or 0)
        if base is None:
            base = row
        w("| %s | %s |" % (label, " | ".join(
            "{:,} | {:.2f}×".format(v, v / b if b else float("nan")) for v, b in zip(row, base))))
    return out


def table(results):
    """results: [(label, totals, program Ir)], the first one the baseline."""
    out = []
    w = out.append
    w("| allocator | " + " | ".join("%s (Ir/call)" % e for e in ENTRY_POINTS)
      + " | all four (Ir/call) | ratio to %s | whole program (Ir) |" % results[0][0])
    w("| --- |" + " ---: |" * (len(ENTRY_POINTS) + 3))
    base = None
    for label, totals, program in results:
        calls = sum(c for c, _ in totals.values())
        ir = sum(costs["Ir"] for _, costs in totals.values())
        mean = ir / calls if calls else float("nan")
        if base is None:
            base = mean
        cells = ["%.1f" % (costs["Ir"] / c) if c else "n/a" for c, costs in totals.values()]
        w("| %s | %s | %.1f | %.2f× | %s |" % (label, " | ".join(cells), mean, mean / base,
                                              "{:,}".format(program)))
    if all(misses(costs, "D1") is not None
           for _, totals, _ in results for _, costs in totals.values()):
        w("")
        w(CACHE_NOTE)
        w("")
        w("| allocator | " + " | ".join("%s (D1 misses/call)" % e for e in ENTRY_POINTS)
          + " | all four (D1 misses/call) | all four (LL misses/call) | D1 misses, ratio to %s |"
          % results[0][0])
        w("| --- |" + " ---: |" * (len(ENTRY_POINTS) + 3))
        base = None
        for label, totals, _ in results:
            calls = sum(c for c, _ in totals.values())
            d1 = sum(misses(costs, "D1") for _, costs in totals.values())
            ll = sum(misses(costs, "DL") for _, costs in totals.values())
            mean = d1 / calls if calls else float("nan")
            if base is None:
                base = mean
            cells = ["%.2f" % (misses(costs, "D1") / c) if c else "n/a"
                     for c, costs in totals.values()]
            w("| %s | %s | %.2f | %.3f | %.2f× |" % (label, " | ".join(cells), mean,
                                                    ll / calls if calls else float("nan"),
                                                    mean / base if base else float("nan")))
    counts = [tuple(c for c, _ in totals.values()) for _, totals, _ in results]
    if len(set(counts)) == 1:
        w("")
        w("Calls counted: " + ", ".join("%s %s" % (e, "{:,}".format(c))
                                        for e, c in zip(ENTRY_POINTS, counts[0])) + ".")
    else:
        w("")
        w("**The allocators were not called the same number of times:** "
          + "; ".join("%s %s" % (label, "/".join(str(c) for c in cs))
                      for (label, _, _), cs in zip(results, counts)))
    return out


CACHE_NOTE = ("Data cache misses, as callgrind's simulation of the caches counts them "
              "(reads and writes; D1: the first-level data cache, LL: the last level "
              "simulated), per call, inclusive as above. A simulation, not the "
              "processor's counters: it models two levels, no prefetcher, and its "
              "figures only compare allocators run alike.")


def write_section(path, section):
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    begin = text.find(BEGIN)
    end = text.find(END, begin)
    if begin >= 0 and end >= 0:
        text = text[:begin] + section + text[end + len(END):]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section + "\n"
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True, help="the program's executable file name")
    ap.add_argument("--write", metavar="FILE")
    ap.add_argument("--heading", default="## Instructions and cache misses per allocation call (callgrind)")
    ap.add_argument("--note", action="append", default=[],
                    help="a paragraph written before the table (repeatable)")
    ap.add_argument("--program", action="append", default=[], metavar="LABEL=CALLGRIND_OUT",
                    help="a whole program's profile, for a table of its totals (repeatable)")
    ap.add_argument("--program-note", action="append", default=[],
                    help="a paragraph written before that table (repeatable)")
    ap.add_argument("profiles", nargs="+", metavar="LABEL=CALLGRIND_OUT")
    args = ap.parse_args()
    results = []
    for spec in args.profiles:
        label, _, path = spec.partition("=")
        results.append((label, program_calls(path, args.exe), total_ir(path)))
    rows = table(results)
    if args.program:
        rows += [""]
        for note in args.program_note:
            rows += [note, ""]
        rows += program_table([(label, program_totals(path)) for label, _, path in
                               (spec.partition("=") for spec in args.program)])
    print("\n".join(rows))
    if args.write:
        section = [BEGIN, args.heading, ""]
        for note in args.note:
            section += [note, ""]
        section += rows + [END]
        write_section(args.write, "\n".join(section))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Kernel count and summed kernel time per category over the same
training steps, from a tscope dump and from a torch.profiler trace.

Both inputs go through `tscope-report trace --no-analysis` first
(tscope_out.export_trace), so both are categorized by the analyzer's one
categorizer and read by the same code here.  A kernel belongs to a step
when it starts inside the step's window: for the dump, the windows
train_gpt.py wrote (CLOCK_REALTIME; each ends after the loss was read
back, so the step's GPU work is done); for the trace, its ProfilerStep#N
ranges.  The same N picks the same step in both runs.
"""

import re

STEP_RANGE = re.compile(r"^ProfilerStep#(\d+)$")


def profiler_windows(events):
    """{step: (start_us, end_us)} from the trace's ProfilerStep#N ranges."""
    out = {}
    for e in events:
        m = STEP_RANGE.match(e.get("name", "")) if e.get("cat") == "range" else None
        if m:
            out[int(m.group(1))] = (e["ts"], e["ts"] + e.get("dur", 0))
    return out


def summary_windows(step_windows_ns, origin_ns):
    """{step: (start_us, end_us)} from train_gpt.py's step_windows_ns, on
    the exported trace's time axis."""
    return {i: ((a - origin_ns) / 1000.0, (b - origin_ns) / 1000.0)
            for i, (a, b) in enumerate(step_windows_ns)}


def totals(events, windows):
    """{category: [count, microseconds]} of kernels starting in windows."""
    spans = sorted(windows.values())
    out = {}
    for e in events:
        if e.get("cat") != "kernel" or e.get("ph") != "X":
            continue
        ts = e["ts"]
        if any(a <= ts < b for a, b in spans):
            cat = (e.get("args") or {}).get("category", "other")
            t = out.setdefault(cat, [0, 0.0])
            t[0] += 1
            t[1] += e.get("dur", 0.0)
    return out


# The summed kernel time's margin.  The dump and the trace come from two
# runs of the job (tscope steps aside when torch.profiler starts, so one
# process cannot hold both): the same kernels, but each run on the GPU's
# own clocks at the time (boost and memory clocks move with power and
# temperature by a few percent between runs), so their durations differ
# by more than measurement error.  5% is that spread with room; a lost or
# doubled kernel is caught by the count, which must be equal.
TIME_MARGIN = 0.05


def compare(ours, theirs, tolerance=TIME_MARGIN, minor_share=0.01):
    """Rows (category, ours, theirs, count_diff, time_diff, verdict).

    verdict: "ok" when the counts are equal and the time within tolerance
    (relative to the profiler's figure); "off" otherwise; "minor" off but
    the category holds less than minor_share of the profiler's kernel
    time (a few microseconds of a rare kernel say little about the
    capture).  A category in one input only is "off" unless minor."""
    total = sum(t for _, t in theirs.values()) or 1.0
    rows = []
    for cat in sorted(set(ours) | set(theirs)):
        a, b = ours.get(cat, [0, 0.0]), theirs.get(cat, [0, 0.0])
        dc = (a[0] - b[0]) / b[0] if b[0] else float("inf") if a[0] else 0.0
        dt = (a[1] - b[1]) / b[1] if b[1] else float("inf") if a[1] else 0.0
        ok = a[0] == b[0] and abs(dt) <= tolerance
        minor = max(a[1], b[1]) < minor_share * total
        rows.append((cat, a, b, dc, dt, "ok" if ok else "minor" if minor else "off"))
    return rows


def overall(ours, theirs):
    """(count ours, count theirs, us ours, us theirs, time difference):
    every category together."""
    na, nb = sum(n for n, _ in ours.values()), sum(n for n, _ in theirs.values())
    ta, tb = sum(t for _, t in ours.values()), sum(t for _, t in theirs.values())
    return na, nb, ta, tb, ((ta - tb) / tb if tb else float("inf") if ta else 0.0)


def format_rows(rows):
    lines = [f"  {'category':12} {'tscope n':>9} {'profiler n':>10} {'tscope us':>12} "
             f"{'profiler us':>12} {'dn':>7} {'dt':>7}"]
    for cat, a, b, dc, dt, v in rows:
        lines.append(f"  {cat:12} {a[0]:9d} {b[0]:10d} {a[1]:12.1f} {b[1]:12.1f} "
                     f"{dc * 100:+6.2f}% {dt * 100:+6.2f}% {v}")
    return "\n".join(lines)


def check_steps(v, name, ev_dump, origin_ns, step_windows_ns, ev_trace):
    """The verdicts of the cross-check: the kernels of the steps both runs
    hold, from the dump (train_gpt.py's step windows) and from the trace
    (its ProfilerStep#N ranges): the counts equal, the summed time within
    TIME_MARGIN; per category a row each, WARN where one is off."""
    wp = profiler_windows(ev_trace)
    wt = summary_windows(step_windows_ns, origin_ns)
    steps = sorted(s for s in wp if s in wt)
    if not v.check(bool(steps), f"{name}: the profiler trace has ProfilerStep#N ranges of the "
                   "run's steps", f"trace steps {sorted(wp)}"):
        return
    ours = totals(ev_dump, {s: wt[s] for s in steps})
    theirs = totals(ev_trace, {s: wp[s] for s in steps})
    rows = compare(ours, theirs)
    print(f"  steps {steps}\n" + format_rows(rows), flush=True)
    na, nb, ta, tb, dt = overall(ours, theirs)
    v.check(na == nb and nb > 0, f"{name}: kernel count equal to torch.profiler's over the same "
            "steps", f"{na} vs {nb} kernels in steps {steps[0]}-{steps[-1]}")
    v.check(nb > 0 and abs(dt) <= TIME_MARGIN, f"{name}: summed kernel time within "
            f"{TIME_MARGIN:.0%} of torch.profiler's", f"{ta:.1f} vs {tb:.1f} us ({dt * 100:+.2f}%)")
    for cat, a, b, dc, dtc, verdict in rows:
        if verdict != "ok":
            v.add("WARN", f"{name}: kernels '{cat}' differ from torch.profiler's",
                  f"count {a[0]} vs {b[0]}, time {a[1]:.1f} vs {b[1]:.1f} us ({dtc * 100:+.2f}%)"
                  + (" (under 1% of the kernel time)" if verdict == "minor" else ""))

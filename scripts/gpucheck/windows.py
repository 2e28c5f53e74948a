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


def compare(ours, theirs, tolerance=0.02, minor_share=0.01):
    """Rows (category, ours, theirs, count_diff, time_diff, verdict).

    verdict: "ok" within tolerance (relative to the profiler's figure) for
    both count and time; "off" outside it; "minor" outside it but the
    category holds less than minor_share of the profiler's kernel time
    (a few microseconds of a rare kernel say little about the capture).
    A category in one input only is "off" unless minor."""
    total = sum(t for _, t in theirs.values()) or 1.0
    rows = []
    for cat in sorted(set(ours) | set(theirs)):
        a, b = ours.get(cat, [0, 0.0]), theirs.get(cat, [0, 0.0])
        dc = (a[0] - b[0]) / b[0] if b[0] else float("inf") if a[0] else 0.0
        dt = (a[1] - b[1]) / b[1] if b[1] else float("inf") if a[1] else 0.0
        ok = abs(dc) <= tolerance and abs(dt) <= tolerance
        minor = max(a[1], b[1]) < minor_share * total
        rows.append((cat, a, b, dc, dt, "ok" if ok else "minor" if minor else "off"))
    return rows


def format_rows(rows):
    lines = [f"  {'category':12} {'tscope n':>9} {'profiler n':>10} {'tscope us':>12} "
             f"{'profiler us':>12} {'dn':>7} {'dt':>7}"]
    for cat, a, b, dc, dt, v in rows:
        lines.append(f"  {cat:12} {a[0]:9d} {b[0]:10d} {a[1]:12.1f} {b[1]:12.1f} "
                     f"{dc * 100:+6.2f}% {dt * 100:+6.2f}% {v}")
    return "\n".join(lines)

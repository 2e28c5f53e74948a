"""Checks of black-box mode on a GPU (docs/blackbox.md): what the CPU
test bed cannot show, because it has no GPU records.  The per-step
summaries must stay small with a GPU's extras in them, the data stall and
the MFU estimate must be measured (not "not recorded") on a job that
copies its batches to the device and runs cuBLAS GEMMs, a window asked for
with `tscope-ctl capture` must hold the GPU's records, and the summaries'
MFU over the window's steps must agree with the full report of the window.
They read `tscope-report blackbox --json` and the window's report JSON."""

import statistics

from . import tscope_out

BYTES_PER_STEP_MAX = 1024   # issue 24's bound on disk per rank per step
MFU_AGREE = 1.25            # summaries vs the window's report, either way


def summary_json(report, dumps):
    """`tscope-report blackbox DUMPS --json --every` (a row per step) as
    an object (None when it is not JSON) and the exit status."""
    return tscope_out.report_json(report, "blackbox", dumps, "--json", "--every")


def capture_json(report, dumps, wid):
    """The report of window `wid`, every step of it (no warm-up skipped:
    the summaries' MFU is compared over the same steps), as an object
    (None when not JSON), and the exit status."""
    return tscope_out.report_json(report, "blackbox", dumps, "--capture", wid, "--json",
                                  "--warmup", "0")


def _rows_after(bb, first_step):
    return [row for row in bb.get("timeline", []) if row.get("first", 0) >= first_step]


def summaries(v, name, bb, steps_run, ranks=1):
    """The summary files: one per rank, every step, at most
    BYTES_PER_STEP_MAX bytes a step; data stall and MFU measured after the
    first steps (the warm-up's first GEMMs and copies come before the
    device's peak and the copy records are known)."""
    if not v.check(bb is not None, f"{name}: tscope-report blackbox --json reads the folder"):
        return False
    rs = bb.get("ranks", [])
    v.check(len(rs) == ranks, f"{name}: one summary file per rank", f"{len(rs)} of {ranks}")
    steps = [r.get("steps", 0) for r in rs]
    # train_gpt.py's step ends with the loss read back; the summaries count
    # steps by the collective pattern, which may cut the first one or two
    v.check(steps and all(steps_run - 3 <= s <= steps_run + 1 for s in steps),
            f"{name}: a summary for every step", f"{steps} summarized, {steps_run} run")
    worst = max((r.get("bytes_per_step", 0) for r in rs), default=0)
    v.check(rs and 0 < worst <= BYTES_PER_STEP_MAX,
            f"{name}: at most {BYTES_PER_STEP_MAX} B on disk per rank per step",
            f"{worst:.1f} B (the CPU test bed: ~76, the CUDA stand-in: ~116)")
    rows = _rows_after(bb, 3)
    stalled = [row for row in rows if row.get("stall_rank_steps", 0) > 0]
    v.check(rows and len(stalled) == len(rows), f"{name}: data stall measured in every row after "
            "step 2", f"{len(stalled)} of {len(rows)} rows; largest "
            f"{max((row.get('max_data_stall_ns') or 0 for row in stalled), default=0) / 1e6:.3f} ms")
    mfus = [row["mfu"] for row in rows if row.get("mfu") is not None]
    v.check(rows and len(mfus) == len(rows) and all(0 < m <= 1 for m in mfus),
            f"{name}: an MFU estimate in every row after step 2, between 0 and 1",
            f"{len(mfus)} of {len(rows)} rows; median "
            f"{statistics.median(mfus) if mfus else float('nan'):.3f}")
    return True


def ctl_window(v, name, bb, want_steps):
    """The one window `tscope-ctl capture --next K` asked for: its id, or
    None."""
    wins = [w for w in (bb or {}).get("windows", []) if w.get("reason") == "ctl"]
    w = wins[0] if len(wins) == 1 else None
    got = (w["last"] - w["first"] + 1) if w else 0
    ok = v.check(w is not None and got == want_steps, f"{name}: the window tscope-ctl asked for",
                 f"{len(wins)} ctl windows; steps {w['steps'] if w else '-'} ({got} of "
                 f"{want_steps}); other windows: "
                 f"{[x.get('id') for x in (bb or {}).get('windows', []) if x not in wins]}")
    return w if ok else None


def window_report(v, name, bb, w, cap):
    """The window's full report has the GPU's kernels, and its MFU agrees
    with the summaries' over the same steps within MFU_AGREE either way."""
    if not v.check(cap is not None, f"{name}: the window's report reads"):
        return
    kernels = sum(c.get("count", 0) for c in cap.get("kernel_categories", []))
    v.check(kernels > 0, f"{name}: the window holds GPU kernels", f"{kernels} kernels")
    rows = [row for row in bb.get("timeline", [])
            if w["first"] <= row.get("first", -1) and row.get("last", -1) <= w["last"]]
    num = sum(row.get("gemm_peak_ns") or 0 for row in rows)
    den = sum(row.get("mfu_step_ns") or 0 for row in rows)
    ours = num / den if den else None
    theirs = (cap.get("budget") or {}).get("mfu")
    agree = bool(ours and theirs) and 1 / MFU_AGREE <= ours / theirs <= MFU_AGREE
    v.check(agree, f"{name}: the summaries' MFU agrees with the window's report",
            f"summaries {ours if ours is not None else 'none'}, report "
            f"{theirs if theirs is not None else 'none'} over steps {w['steps']}", level="WARN")

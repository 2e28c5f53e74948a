"""The overhead targets of the GPU capture, decided from interleaved runs.

Each run reports its median step time (train_gpt.py, after 10 warm-up
steps); runs of the four configurations are interleaved so that drift
(clocks, temperature) falls on all alike; a configuration's figure is the
median over its runs.  Targets: light <= 0.5% and full <= 2% above no
preload, and both below torch.profiler (default activities)."""

import statistics

TARGETS = {"light": 0.5, "full": 2.0}


def decide(per_run):
    """per_run: {config: [median step seconds of each run]}.  Returns
    (rows, verdicts): rows (config, median s, overhead %, runs);
    verdicts [(ok, name, detail)]."""
    med = {c: statistics.median(v) for c, v in per_run.items() if v}
    base = med.get("none")
    rows = [(c, m, (m / base - 1) * 100 if base else None, len(per_run[c]))
            for c, m in med.items()]
    verdicts = []
    if not base:
        return rows, [(False, "overhead: no run without the preload", "")]
    runs = per_run["none"]
    noise = (max(runs) - min(runs)) / base * 100 if len(runs) > 1 else None
    noise_note = f"; run-to-run spread without the preload {noise:.2f}%" if noise is not None \
        else ""
    for mode, limit in TARGETS.items():
        if mode not in med:
            verdicts.append((False, f"overhead {mode}", "no run"))
            continue
        pct = (med[mode] / base - 1) * 100
        verdicts.append((pct <= limit, f"overhead {mode} <= {limit}%",
                         f"{pct:+.2f}% ({med[mode] * 1e3:.3f} ms vs {base * 1e3:.3f} ms per "
                         f"step{noise_note})"))
        if "profiler" in med:
            verdicts.append((med[mode] < med["profiler"], f"{mode} cheaper than torch.profiler",
                             f"{med[mode] * 1e3:.3f} ms vs {med['profiler'] * 1e3:.3f} ms"))
        else:
            verdicts.append((False, f"{mode} cheaper than torch.profiler", "no profiler run"))
    return rows, verdicts


def self_cost_line(measured_pct, report):
    """What tscope recorded of its own cost in a run (docs/self-cost.md),
    next to the step-time overhead measured from outside (None: unknown);
    and whether its budget stepped down in that run, which then recorded
    less than its mode's full detail."""
    sc = (report or {}).get("self_cost")
    if not sc:
        return "not recorded"
    meas = f"{measured_pct:+.2f}%" if measured_pct is not None else "unknown"
    line = (f"recorded {sc['pct_of_run']:.2f}% of the run ({sc['cpu_ms']:.1f} ms CPU, "
            f"{sc['mb_written']:.2f} MB written) against {meas} step time measured")
    stepped = []
    for r in report.get("per_rank") or []:
        c = r.get("self_cost") or {}
        for ch in c.get("level_changes_kept") or []:
            if ch.get("to", 0) > ch.get("from", 0) and ch.get("what") not in stepped:
                stepped.append(ch.get("what"))
    if stepped:
        line += "; the budget stepped down (" + ", ".join(stepped) + "): thinner than the mode"
    return line


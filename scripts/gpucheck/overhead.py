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

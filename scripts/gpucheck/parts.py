"""The GPU checks, in parts that each fit in one call of at most 10
minutes on an H100 (times measured by the first GPU session belong in
docs/validation.md).  Each part builds tscope first if the work folder
has no build yet, so any part can run on a fresh machine."""

import glob
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time

from . import blackbox, dumpchecks, overhead, plugin, procmaps, tscope_out, windows

STEPS = 24          # checked runs: enough steps for 5 profiled ones after 7
OVERHEAD_STEPS = 120


class Ctx:
    """What every part needs: paths, the verdicts, the launcher."""

    def __init__(self, root, work, v, launcher, report, preload, evidence, reps):
        self.root, self.work, self.v, self.L = root, work, v, launcher
        self.report, self.preload, self.evidence, self.reps = report, preload, evidence, reps


def ran(ctx, run):
    """The run finished cleanly and wrote its summary.  A run the deadline
    cut is CUT, not FAIL: it says nothing about tscope."""
    if run.cut:
        ctx.v.add("CUT", f"{run.name}: cut by the deadline", f"after {run.elapsed_s:.0f} s, "
                  f"{run.steps_done()} steps done")
        return False
    ok = run.rc == 0 and not run.hung and run.summary is not None
    ctx.v.check(ok, f"{run.name}: train_gpt.py ran", f"exit {run.rc}, {run.elapsed_s:.0f} s"
                + (", killed after the time limit" if run.hung else "")
                + ("" if ok else "\n" + run.stderr[-2500:]))
    for line in run.tscope_lines():
        ctx.v.info(f"{run.name}: stderr", line)
    return ok


def same_losses(ctx, name, a, b, prefix=False):
    """b's losses bitwise equal to a's; prefix: over the steps both ran (a
    shorter run of the same job, same seeds and data, is a prefix)."""
    la, lb = a.summary["losses"], b.summary["losses"]
    n = min(len(la), len(lb)) if prefix else max(len(la), len(lb))
    diff = [i for i, (x, y) in enumerate(zip(la, lb)) if x != y]
    rel = max((abs(float.fromhex(x) - float.fromhex(y)) / abs(float.fromhex(y))
               for x, y in zip(la, lb) if x != y and float.fromhex(y)), default=0.0)
    ctx.v.check((prefix or len(la) == len(lb)) and n > 0 and not diff,
                f"{name}: losses bitwise equal with and without the preload",
                f"{n} steps{' (the shorter run is a prefix)' if prefix else ''}; first "
                f"difference at step {diff[0] if diff else '-'}, largest relative difference "
                f"{rel:.3g}")


# ----------------------------------------------------------------- part 1

def environment(ctx):
    """Where this part runs; False (the part stops) without a CUDA device."""
    v = ctx.v
    v.section("environment")
    if shutil.which("nvidia-smi"):
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], stdout=subprocess.PIPE, text=True)
        v.info("nvidia-smi", smi.stdout.strip())
    probe = subprocess.run([ctx.L.python, "-c", ENV_PROBE], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        env = json.loads(probe.stdout)
    except json.JSONDecodeError:
        env = {"error": probe.stderr.strip()[-500:]}
    return v.check(env.get("cuda_available"), "PyTorch sees a CUDA device",
                   ", ".join(f"{k} {x}" for k, x in env.items()))


ENV_PROBE = """import json, torch
e = {"torch": torch.__version__, "cuda": torch.version.cuda,
     "cuda_available": torch.cuda.is_available()}
if e["cuda_available"]:
    e["device"] = torch.cuda.get_device_name(0)
    e["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
print(json.dumps(e))"""


def part_setup(ctx):
    v = ctx.v
    torch_lib = subprocess.run(
        [ctx.L.python, "-c", "import os, torch; print(os.path.join(os.path.dirname("
         "torch.__file__), 'lib'))"], stdout=subprocess.PIPE, text=True).stdout.strip()

    v.section("how PyTorch links NCCL, cuBLAS and CUPTI")
    libs = procmaps.torch_libs(torch_lib)
    for name, d in libs.items():
        v.info(name, f"NEEDED {d['needed']}, cupti functions defined inside: {d['cupti_defined']}")
    cuda_needed = libs.get("libtorch_cuda.so", {}).get("needed", [])
    v.check(any("libnccl" in n for n in cuda_needed), "libnccl is a dynamic dependency "
            "(ncclAllReduce can be interposed)", str(cuda_needed), "WARN")
    v.check(any("libcublas" in n for n in cuda_needed), "libcublas is a dynamic dependency",
            str(cuda_needed), "WARN")
    static = [n for n, d in libs.items() if d["cupti_defined"]]
    v.check(not static, "no CUPTI linked statically into PyTorch (a second instance beside "
            "libcupti)", f"cupti functions defined in {static}" if static else "")
    if ctx.preload.endswith(".so"):
        nm = subprocess.run(["nm", "-D", "--defined-only", ctx.preload], stdout=subprocess.PIPE,
                            text=True).stdout
        v.check(" InitializeInjection" in nm, "the preload exports InitializeInjection")

    v.section("injection: CUDA_INJECTION64_PATH read at context creation")
    run = ctx.L.train("inject", "full", ["--steps", "12"])
    if not ran(ctx, run):
        return
    cupti = injection(ctx, run)
    v.info("libcupti NEEDED by libtorch_cpu/libtorch_cuda",
           str([n for d in libs.values() for n in d["needed"] if "cupti" in n]))
    d, _ = dumpchecks.read(v, ctx.report, run)
    if d:
        status = d.meta.get("cupti_status")
        v.check(status is not None, "InitializeInjection ran (the driver honoured "
                "CUDA_INJECTION64_PATH)", "no cupti_status: it was never called" if status is None
                else f"cupti_status={status}, cupti_version={d.meta.get('cupti_version')}, "
                f"mode={d.meta.get('cupti_mode')}, libcupti={cupti}")
        dumpchecks.metadata(v, run, d, "full")


# ----------------------------------------------------------------- part 2

def part_full(ctx):
    v, L = ctx.v, ctx.L
    common = ["--steps", str(STEPS), "--deterministic"]
    v.section(f"full mode, {STEPS} deterministic steps, against a run without the preload "
              "and a torch.profiler run of the same steps")
    base = L.train("base", None, common)
    full = L.train("full", "full", common)
    prof = L.train("prof", None, common + ["--profile", "{run}/trace"])
    if all(ran(ctx, r) for r in (base, full, prof)):
        full_checks(ctx, base, full, prof)
        keep_evidence(ctx, full, prof)


def full_checks(ctx, base, full, prof):
    """Injection, losses, the dump's checks, the cross-check (the runs
    ran)."""
    injection(ctx, full)
    same_losses(ctx, "full", base, full)
    dumpchecks.of_mode(ctx.v, ctx.report, full, "full")
    cross_check(ctx, full, prof)


def injection(ctx, run):
    """The driver loaded the preload as its injection library: the job saw
    CUDA_INJECTION64_PATH naming it, one libcupti and one preload mapped."""
    v = ctx.v
    inj = run.summary["injection"]
    v.check(bool(inj["CUDA_INJECTION64_PATH"]) and os.path.realpath(inj["CUDA_INJECTION64_PATH"])
            == os.path.realpath(ctx.preload), f"{run.name}: the preload's constructor set "
            "CUDA_INJECTION64_PATH to itself, and the job sees it",
            str(inj["CUDA_INJECTION64_PATH"]))
    cupti = procmaps.cupti_copies(inj["mapped"])
    mine = [p for p in inj["mapped"] if p.endswith("libtscope_preload.so")]
    v.check(len(cupti) == 1, f"{run.name}: exactly one libcupti mapped in the training process",
            str(cupti))
    v.check(len(mine) == 1, f"{run.name}: the preload mapped once (the driver's dlopen of "
            "CUDA_INJECTION64_PATH found the preloaded copy)", str(mine))
    return cupti


def cross_check(ctx, run, prof):
    """Kernel count and summed kernel time over the same steps."""
    v = ctx.v
    v.section("against torch.profiler: kernels over the same steps")
    if not v.check(bool(run.dump_files()), "a dump to compare with torch.profiler", run.dumps):
        return
    ev_t, origin = tscope_out.export_trace(ctx.report, run.dumps,
                                           os.path.join(run.dir, "as-trace.json"))
    ev_p, _ = tscope_out.export_trace(ctx.report, prof.profile,
                                      os.path.join(prof.dir, "as-trace.json"))
    windows.check_steps(v, run.name, ev_t, origin, run.summary["step_windows_ns"], ev_p)


def keep_evidence(ctx, run, prof):
    """The dump and the profiler trace of the same steps, with how they
    were made, for tests/data/gpu-<device>/."""
    if not ctx.evidence:
        return
    os.makedirs(ctx.evidence, exist_ok=True)
    for f in run.dump_files() + glob.glob(os.path.join(prof.profile, "*.json*")):
        shutil.copy2(f, ctx.evidence)
    for r in (run, prof):
        shutil.copy2(r.summary_path, os.path.join(ctx.evidence, f"summary-{r.name}.json"))
    s = run.summary
    with open(os.path.join(ctx.evidence, "README.txt"), "w") as f:
        f.write(f"Made by scripts/gpu-check part 2 on {time.strftime('%Y-%m-%d')}: "
                f"{s.get('device_name')}, torch {s.get('torch')}, CUDA {s.get('cuda')}, "
                f"NCCL {s.get('nccl')}.\nThe .tsd: `{open(os.path.join(run.dir, 'command.txt')).read().strip()}`\n"
                f"The trace: the same job without the preload, torch.profiler on steps "
                f"5+2 (wait, warm-up) then 5 active: "
                f"`{open(os.path.join(prof.dir, 'command.txt')).read().strip()}`\n")
    ctx.v.info("evidence kept", f"{ctx.evidence}: {sorted(os.listdir(ctx.evidence))}")


# ----------------------------------------------------------------- part 3

def part_variants(ctx):
    v, L = ctx.v, ctx.L
    v.section("light mode")
    light = L.train("light", "light", ["--steps", str(STEPS)])
    if ran(ctx, light):
        dumpchecks.of_mode(v, ctx.report, light, "light")

    v.section("full mode, PyTorch expandable segments (cuMemCreate/cuMemMap)")
    exp = L.train("expandable", "full", ["--steps", str(STEPS)],
                  {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
    if ran(ctx, exp):
        d, _ = dumpchecks.read(v, ctx.report, exp)
        if d:
            dumpchecks.memory(v, exp, d)

    coexist(ctx)
    sigterm_halfway(ctx)


def coexist(ctx):
    """torch.profiler starts while tscope holds CUPTI: tscope steps aside
    with one line, both outputs stay intact."""
    v = ctx.v
    v.section("with torch.profiler at the same time")
    run = ctx.L.train("coexist", "full", ["--steps", "20", "--profile", "{run}/trace"])
    if not ran(ctx, run):
        return
    lines = [x for x in run.tscope_lines() if "CUPTI" in x]
    v.check(len(lines) == 1, "one tscope line about the CUPTI hand-over", f"{len(lines)}: {lines}")
    files, rc = tscope_out.info(ctx.report, run.profile)
    rec = files[0].get("records", {}) if files else {}
    v.check(rc == 0 and rec.get("kernels", 0) > 0 and rec.get("profiler_steps", 0) > 0,
            "torch.profiler's trace intact", f"exit {rc}, {rec}")
    d, _ = dumpchecks.read(v, ctx.report, run)
    if d:
        first = run.summary["step_windows_ns"][5][0]  # the profiler starts warming up here
        before = [k for k in d.kernels() if k["start_ns"] < first]
        v.check(len(before) > 0, "the dump keeps the kernels from before the hand-over",
                f"{len(before)} kernels; cupti_status {d.meta.get('cupti_status')}")


# What a SIGTERM may cost, judged inside the job's own process: its dump's
# END record (end_realtime_ns) is written by tscope's handler after it
# flushed CUPTI, on the clock of its GPU records (clock_status ok).  The
# job launches work up to the signal, and each step ends with loss.item(),
# so the GPU is at most one step behind the host: the last GPU record
# must end within one step (the slowest NVTX step range seen) of the
# signal's arrival, plus the handler's flush and write, which
# SIGTERM_HANDLER_S bounds (CUPTI's forced flush and a dump of a few MiB;
# 1 s is ten times the CUPTI flush period, TSCOPE_CUPTI_FLUSH_MS=100).
# The old check compared the checker's own clock at kill() with the job's
# records: two processes, and torchrun's forwarding delay in between.
SIGTERM_HANDLER_S = 1.0


def sigterm_gap(d, end_ns):
    """(seconds from the last GPU record's end to END, the bound)."""
    last = max((r["end_ns"] for r in d.gpu()), default=0)
    steps = [r["end_ns"] - r["start_ns"] for r in d["nvtx"]
             if r.get("name", "").startswith(dumpchecks.USER_NVTX_PREFIX + "step ")]
    step_s = max(steps, default=0) / 1e9
    return ((end_ns - last) / 1e9 if last and end_ns else None), step_s + SIGTERM_HANDLER_S


def sigterm_halfway(ctx, timeout=120):
    v = ctx.v
    v.section("SIGTERM to torchrun halfway")
    run = ctx.L.start("sigterm", "full", ["--steps", "3000"])
    deadline = time.monotonic() + min(timeout, 300)
    while run.proc.poll() is None and run.steps_done() < 20 and time.monotonic() < deadline:
        time.sleep(0.1)
    if run.proc.poll() is None:
        run.proc.send_signal(signal.SIGTERM)
    ctx.L.wait(run, timeout=max(5, deadline - time.monotonic() + 30))
    v.check(not run.hung, "the job ends after SIGTERM (no hang)",
            f"exit {run.rc} after {run.steps_done()} steps")
    files, rc = tscope_out.info(ctx.report, run.dumps)
    if not v.check(len(files) == 1, "one dump after SIGTERM", str(len(files))):
        return
    f = files[0]
    meta = f.get("meta", {})
    v.check(f.get("status") == "ok" and meta.get("end_reason") == "signal:15",
            "the dump is readable and ends with end_reason signal:15",
            f"status {f.get('status')}, end_reason {meta.get('end_reason')}, "
            f"problems {f.get('problems', [])[:3]}")
    lost = tscope_out.loss_counters(f)
    v.info("loss counters after SIGTERM", ", ".join(f"{k}={n}" for k, n in sorted(lost.items())))
    d, _, _ = tscope_out.dump(ctx.report, run.dumps)
    gap, bound = sigterm_gap(d, int(d.meta.get("end_realtime_ns") or 0))
    v.check(gap is not None and gap <= bound, "GPU records reach the signal (within one step and "
            "the handler's flush of the dump's END)",
            f"the last GPU record ends {gap if gap is None else round(gap, 3)} s before END, "
            f"bound {bound:.3f} s; counted losses {lost}")


# ----------------------------------------------------------------- part 4

def part_graphs(ctx):
    v, L = ctx.v, ctx.L
    v.section("a whole step captured once (torch.cuda.graphs) and replayed")
    g = L.train("graph", "full", ["--steps", str(STEPS), "--cuda-graph"])
    if ran(ctx, g):
        graph_checks(ctx, g, first_replayed=1)  # step 0 warms up and captures

    v.section('torch.compile(mode="reduce-overhead")')
    c = L.train("compile", "full", ["--steps", "30", "--compile"])
    d = graph_checks(ctx, c, first_replayed=10) if ran(ctx, c) else None
    if d:
        triton = [k for k in d.kernels() if "triton" in k["name"]]
        v.check(len(triton) > 0, "compile: Inductor's Triton kernels recorded", str(len(triton)))

    v.section("FSDP (world size 1), against a run without the preload")
    args = ["--steps", "16", "--wrap", "fsdp", "--deterministic"]
    base, fsdp = L.train("fsdp-base", None, args), L.train("fsdp", "full", args)
    if ran(ctx, base) and ran(ctx, fsdp):
        same_losses(ctx, "fsdp", base, fsdp)
        d, _ = dumpchecks.read(v, ctx.report, fsdp)
        if d:
            dumpchecks.records(v, fsdp, d, "full")
            dumpchecks.nccl_joins(v, fsdp, d, "full")


def graph_checks(ctx, run, first_replayed):
    """Replayed steps: their kernels recorded and inside the step; their
    GEMM FLOPs and NCCL work not lost (issue 21: the GEMM and NCCL
    wrappers run only at capture, so these two FAIL until replays are
    attributed to the captured work).  Returns the dump."""
    v = ctx.v
    d, _ = dumpchecks.read(v, ctx.report, run)
    if not d:
        return None
    win = run.summary["step_windows_ns"][first_replayed:]
    graph_k = [k for k in d.kernels() if k.get("graph_id")]
    per_step = [sum(1 for k in graph_k if a <= k["start_ns"] < b) for a, b in win]
    v.check(per_step and min(per_step) > 0, f"{run.name}: every replayed step has graph "
            "kernels", f"per step min {min(per_step, default=0)}, max {max(per_step, default=0)}")
    kinds = sum(1 for n in run.summary.get("probe_calls", {}).values() if n)  # per step
    nccl_per = [sum(1 for n in d["nccl"] if a <= n["start_ns"] < b) for a, b in win]
    v.check(nccl_per and min(nccl_per) >= kinds, f"{run.name}: NCCL work of each replayed step "
            "attributed", f"NCCL records per replayed step {sorted(set(nccl_per))}, "
            f"{kinds} probe collectives in each step", "FAIL" if kinds else "WARN")
    dumpchecks.gemm_flops(v, run, d, note=" (replays: issue 21)")
    losses = [float.fromhex(x) for x in run.summary["losses"]]
    v.check(all(math.isfinite(x) for x in losses), f"{run.name}: losses finite",
            f"first {losses[0]:.4f}, last {losses[-1]:.4f}")
    return d


# ----------------------------------------------------------------- part 5

def part_overhead(ctx):
    v, L = ctx.v, ctx.L
    v.section(f"overhead: {ctx.reps} interleaved rounds of none / light / full / torch.profiler, "
              f"{OVERHEAD_STEPS} steps each, median step time")
    per_run = {"none": [], "light": [], "full": [], "profiler": []}
    last_dumps = {}
    prof_args = ["--profile", "{run}/trace", "--profile-wait", "0", "--profile-warmup", "1",
                 "--profile-steps", str(OVERHEAD_STEPS - 1)]
    for rep in range(ctx.reps):
        for cfg in per_run:
            mode = cfg if cfg in ("light", "full") else None
            extra = prof_args if cfg == "profiler" else []
            r = L.train(f"ovh-{cfg}-{rep}", mode, ["--steps", str(OVERHEAD_STEPS), *extra])
            if ran(ctx, r):
                per_run[cfg].append(r.summary["median_step_s"])
                last_dumps[cfg] = r.dumps
    rows, verdicts = overhead.decide(per_run)
    for cfg, med, pct, n in rows:
        print(f"  {cfg:9} median step {med * 1e3:8.3f} ms "
              + (f"{pct:+6.2f}% vs none" if pct is not None else "") + f" ({n} runs)")
    for ok, name, detail in verdicts:
        v.check(ok, name, detail)
    # What tscope measured of its own cost in the same runs (docs/self-cost.md),
    # next to the step-time overhead above.
    measured = {cfg: pct for cfg, _, pct, _ in rows}
    for cfg in ("light", "full"):
        if cfg in last_dumps:
            j, _ = tscope_out.report_json(ctx.report, last_dumps[cfg], "--json")
            v.info(f"overhead {cfg}: tscope's own cost as recorded",
                   overhead.self_cost_line(measured.get(cfg), j))


# ----------------------------------------------------------------- part 6

NCCL_PROBE = """import json, torch
print(json.dumps({"nccl": ".".join(map(str, torch.cuda.nccl.version())),
                  "gpus": torch.cuda.device_count()}))"""


def part_plugin(ctx):
    """tscope as NCCL's profiler plugin (docs/nccl-plugin.md): loaded in
    the version this NCCL asks for, results unchanged, every collective
    joined or a replay, nothing lost; on two GPUs also kernel channels and
    graph replays."""
    v, L = ctx.v, ctx.L
    probe = subprocess.run([L.python, "-c", NCCL_PROBE], stdout=subprocess.PIPE, text=True)
    env = json.loads(probe.stdout or "{}")
    nccl, gpus = env.get("nccl", "?"), env.get("gpus", 1)
    v.section(f"NCCL {nccl} loads tscope as its profiler plugin ({gpus} GPU(s))")
    args = ["--steps", "16", "--deterministic"]
    off = L.train("plugin-off", "light", args, {"TSCOPE_NCCL_PROFILER": "off"})
    full = L.train("plugin-full", "light", args, {"TSCOPE_NCCL_PROFILER": "full"})
    if ran(ctx, off) and ran(ctx, full):
        same_losses(ctx, "plugin", off, full)
        d, _ = dumpchecks.read(v, ctx.report, full)
        if d:
            plugin.loaded(v, full.name, d.meta, nccl, "full")
        p, _ = plugin.plugin_json(ctx.report, full.dumps)
        plugin.records(v, full.name, p, 1)
    g = L.train("plugin-graph", "light", ["--steps", "16", "--cuda-graph"],
                {"TSCOPE_NCCL_PROFILER": "full"})
    if ran(ctx, g):
        p, _ = plugin.plugin_json(ctx.report, g.dumps)
        plugin.records(v, g.name, p, 1, graph=True)
    if gpus < 2:
        v.info("plugin: two ranks", "one GPU: no proxy ops, kernel channels or replays to see")
        return
    L.nproc = 2
    try:
        for name, extra in (("plugin-2rank", []), ("plugin-2rank-graph", ["--cuda-graph"])):
            r = L.train(name, "light", ["--steps", "16", *extra], {"TSCOPE_NCCL_PROFILER": "full"})
            if ran(ctx, r):
                dumpchecks.read(v, ctx.report, r, expect=2)
                p, _ = plugin.plugin_json(ctx.report, r.dumps)
                plugin.records(v, name, p, 2, graph=bool(extra))
    finally:
        L.nproc = 1


# ----------------------------------------------------------------- part 7

BB_STEPS, BB_WINDOW = 60, 5
# The black-box run's trigger period.  Each rank's writer reads
# TSCOPE_OUT/triggers/ once a flush period (TSCOPE_FLUSH_MS, default
# 1000 ms), and a `--next K` window starts at the step it is read in.  The
# window is asked for at step 20 of 60, and on an H100 the remaining 40
# steps last about 0.5 s: at the default period the trigger may be read
# after the last step.  100 ms reads it within a few steps.
BB_ENV = {"TSCOPE_MODE": "blackbox", "TSCOPE_FLUSH_MS": "100"}


def part_blackbox(ctx):
    """Black-box mode (docs/blackbox.md) on the GPU: results unchanged,
    small summaries with the data stall and MFU measured, and a window
    asked for mid-run with `tscope-ctl capture` holding the GPU's
    records."""
    ctx.v.section("black-box mode: summaries with a GPU's figures, a window asked for mid-run")
    none = ctx.L.train("bb-none", None, ["--steps", str(BB_STEPS), "--deterministic"])
    if ran(ctx, none):
        blackbox_run(ctx, none)


def blackbox_run(ctx, base, prefix=False, timeout=300):
    """The black-box run, its losses against base's (a run of the same job
    without the preload; prefix: a shorter one)."""
    v, L = ctx.v, ctx.L
    args = ["--steps", str(BB_STEPS), "--deterministic"]
    run = L.start("blackbox", "light", args, BB_ENV)
    deadline = time.monotonic() + timeout
    while run.proc.poll() is None and run.steps_done() < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    ctl = subprocess.run(["sh", os.path.join(ctx.root, "launcher", "tscope-ctl.in"), "capture",
                          "--next", str(BB_WINDOW), run.dumps],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    v.check(ctl.returncode == 0, "tscope-ctl capture --next 5 mid-run",
            f"at step {run.steps_done()}: {ctl.stdout.strip()[:300]}")
    L.wait(run, timeout=max(5, deadline - time.monotonic()))
    if not ran(ctx, run):
        return
    same_losses(ctx, "blackbox", base, run, prefix)
    bb, rc = blackbox.summary_json(ctx.report, run.dumps)
    v.check(rc == 0, "tscope-report blackbox exits 0", f"exit {rc}")
    if not blackbox.summaries(v, "blackbox", bb, BB_STEPS):
        return
    w = blackbox.ctl_window(v, "blackbox", bb, BB_WINDOW)
    if w:
        cap, rc = blackbox.capture_json(ctx.report, run.dumps, w["id"])
        v.check(rc == 0, "the window's report exits 0", f"exit {rc}")
        blackbox.window_report(v, "blackbox", bb, w, cap)


PARTS = {"1": ("setup", part_setup), "2": ("full", part_full), "3": ("variants", part_variants),
         "4": ("graphs", part_graphs), "5": ("overhead", part_overhead),
         "6": ("plugin", part_plugin), "7": ("blackbox", part_blackbox)}


def lookup(name):
    """A part by number or name."""
    for num, (title, fn) in PARTS.items():
        if name in (num, title):
            return num, title, fn
    raise KeyError(name)


if __name__ == "__main__":
    sys.exit("run scripts/gpu-check")

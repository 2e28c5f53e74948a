"""gpu-check --cpu-selftest: everything of gpu-check that runs without a
GPU, so that its first real run gives true answers.

  * the checks' decisions on inputs with a known answer: each must PASS
    where it should and FAIL where it should (a check that cannot fail
    proves nothing);
  * the readers on real data: torch.profiler traces recorded by other
    people (../shared/corpus/kineto) and a dump written by tscope's own
    writer (tsc-gen-job), through the same tscope-report JSON the GPU run
    uses;
  * scripts/train_gpt.py itself on the CPU (Debian's python3-torch, gloo),
    with and without the preload, and its torch.profiler trace.

Paths come from TSCOPE_REPORT, TSCOPE_GEN_JOB, TSCOPE_PRELOAD (default:
ROOT/build).  A part whose input is missing is skipped and says so."""

import contextlib
import copy
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

from . import (blackbox, dumpchecks, joins, outbox, overhead, parts, plugin, procmaps, quick,
               runs, selftest_standin, tscope_out, verdicts, windows)
from .selftest_quiet import levels, quiet


class Self:
    def __init__(self):
        self.failed, self.skipped = 0, 0

    def ok(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        self.failed += not cond

    def skip(self, what):
        print("skip " + what, flush=True)
        self.skipped += 1


def test_overhead(t):
    base = {"none": [0.100, 0.101, 0.099], "light": [0.1003], "full": [0.1015],
            "profiler": [0.110]}
    _, vs = overhead.decide(base)
    t.ok(all(ok for ok, _, _ in vs) and len(vs) == 4, "overhead: on-target runs all PASS")
    for cfg, val, name in (("light", [0.1008], "overhead light"), ("full", [0.1030], "overhead full"),
                           ("profiler", [0.1010], "full cheaper")):
        bad = dict(base, **{cfg: val})
        _, vs = overhead.decide(bad)
        t.ok(any(not ok and name in n for ok, n, _ in vs), f"overhead: {cfg}={val[0]} FAILs '{name}'")
    _, vs = overhead.decide({"light": [1.0]})
    t.ok(vs and not vs[0][0], "overhead: no baseline run FAILs")
    rep = {"self_cost": {"pct_of_run": 0.42, "cpu_ms": 12.5, "mb_written": 0.3},
           "per_rank": [{"self_cost": {"level_changes_kept": []}}]}
    line = overhead.self_cost_line(1.5, rep)
    t.ok("0.42% of the run" in line and "+1.50% step time" in line and "stepped" not in line,
         f"overhead: the recorded figure next to the measured one ({line})")
    rep["per_rank"][0]["self_cost"]["level_changes_kept"] = [
        {"from": 0, "to": 1, "what": "no per-kernel records (light)"}]
    t.ok("stepped down (no per-kernel records (light))" in overhead.self_cost_line(None, rep),
         "overhead: a run the budget stepped down says so")
    t.ok(overhead.self_cost_line(1.0, {}) == "not recorded", "overhead: no figure: not recorded")


def test_plugin(t):
    """The plugin checks' version table and verdicts on report objects."""
    want = {"2.22.3": 0, "2.23.4": 1, "2.24.3": 2, "2.26.6": 3, "2.27.7": 4, "2.28.9": 5,
            "2.29.7": 6, "2.30.4": 6, "x": None}
    t.ok(all(plugin.expected_version(k) == w for k, w in want.items()),
         "plugin: the version each NCCL asks for")
    good = {"version_max": 5, "collectives": 10, "joined": 7, "without_call": 3,
            "captured_calls": 1, "kernel_channels": 20, "kernel_us_median": 12.5,
            "events_lost": 0, "graph_replays": [{"seq": 4}]}
    _, lv = quiet(plugin.records, "x", good, 2, True)
    t.ok(lv and all(x in ("PASS", "INFO") for x, _ in lv), "plugin: a good report PASSes")
    for key, val, word in (("events_lost", 2, "lost"), ("joined", 6, "joined"),
                           ("kernel_channels", 0, "kernel channels"),
                           ("captured_calls", 0, "captured"), ("without_call", 0, "replayed")):
        bad = dict(good, **{key: val})
        if key == "without_call":
            bad["joined"] = 10
        _, lv = quiet(plugin.records, "x", bad, 2, True)
        t.ok("FAIL" in levels(lv, word), f"plugin: {key}={val} FAILs '{word}'")
    _, lv = quiet(plugin.loaded, "x", {"nccl_profiler": "v5 full"}, "2.28.9", "full")
    t.ok(levels(lv, "loaded") == ["PASS"], "plugin: v5 on NCCL 2.28 PASSes")
    _, lv = quiet(plugin.loaded, "x", {"nccl_profiler": "v5 full"}, "2.29.2", "full")
    t.ok(levels(lv, "loaded") == ["FAIL"], "plugin: v5 on NCCL 2.29 FAILs")


def test_plugin_one_gpu(t):
    """On one GPU NCCL calls the plugin for no collective: nothing may PASS
    on that."""
    empty = {"version_max": 5, "collectives": 0, "joined": 0, "without_call": 0,
             "events_lost": 0}
    _, lv = quiet(plugin.records, "x", empty, 1, True)
    t.ok(lv and not levels(lv, "joined") and not levels(lv, "lost") and "WARN" in
         levels(lv, "not checked"), f"plugin: nothing recorded on one GPU WARNs, no PASS ({lv})")


def synthetic_dump(records):
    return tscope_out.Dump(json.dumps(dict(r, rank=0)) for r in records)


def test_joins(t):
    """The NCCL joins on records made from what NCCL 2.28 does at world
    size 1 (an AVG all-reduce: oneRankReduce through cudaLaunchKernel, no
    "nccl" in its name; an AllGather: a device copy) and the work each of
    train_gpt.py's probes must be joined to."""
    call = {"kind": "nccl", "op": "AllReduce", "redop": "avg", "tid": 7, "seq": 3,
            "start_ns": 1000, "end_ns": 2000}
    gather = dict(call, op="AllGather", redop="none", seq=4, start_ns=3000, end_ns=4000)
    one_rank = {"kind": "kernel_launch", "name": "oneRankReduce", "tid": 7,
                "correlation": 50, "start_ns": 1500, "end_ns": 1600,
                "launch": {"name": "cudaLaunchKernel", "start_ns": 1200, "end_ns": 1300}}
    copy_rec = {"kind": "memcpy", "correlation": 51, "start_ns": 3500, "end_ns": 3600}
    copy_api = {"kind": "api", "name": "cudaMemcpyAsync", "tid": 7, "correlation": 51,
                "start_ns": 3100, "end_ns": 3200}
    after = dict(one_rank, correlation=52, launch={"name": "cudaLaunchKernel", "start_ns": 2100,
                                                   "end_ns": 2200})
    d = synthetic_dump([call, gather, one_rank, copy_rec, copy_api, after])
    got = joins.tally(joins.join(d), {"AllReduce/avg": "kernel", "AllGather": "copy"})
    t.ok(got == {"AllReduce/avg": (1, 1, {"thread+time": 1}),
                 "AllGather": (1, 1, {"thread+time": 1})},
         f"joins: oneRankReduce (no NCCL name) and a device copy joined by thread and time, "
         f"the launch after the call not ({got})")
    other_thread = synthetic_dump([call, dict(one_rank, tid=8)])
    got = joins.tally(joins.join(other_thread), {"AllReduce/avg": "kernel"})
    t.ok(got["AllReduce/avg"][:2] == (1, 0), "joins: a kernel launched on another thread is not "
         "the call's")
    by_ext = synthetic_dump([call, dict(one_rank, tid=8, correlation=60),
                             {"kind": "extcorr", "correlation": 60,
                              "external_id": hex((1 << 63) | (9 << 32) | 3)}])
    got = joins.tally(joins.join(by_ext), {"AllReduce/avg": "kernel"})
    t.ok(got["AllReduce/avg"] == (1, 1, {"correlation": 1}), "joins: tscope's external id joins "
         "a launch whatever its thread")

    class R:
        def __init__(self, world):
            self.summary = {"world_size": world, "probe_calls": {"AllReduce_avg": 2,
                                                                 "AllGather": 2,
                                                                 "ReduceScatter": 2}}
    t.ok(dumpchecks.expected_nccl_work(R(1), "full") == {"AllReduce/avg": "kernel",
                                                         "AllGather": "copy",
                                                         "ReduceScatter": "copy"}
         and dumpchecks.expected_nccl_work(R(1), "light") == {"AllGather": "copy",
                                                              "ReduceScatter": "copy"}
         and dumpchecks.expected_nccl_work(R(2), "light") == {"AllReduce/avg": "launch",
                                                              "AllGather": "launch",
                                                              "ReduceScatter": "launch"},
         "dumpchecks: what each probe must be joined to, by mode and world size")


def test_quick(t, root, tmp):
    """The single-call mode's deadline, its runs cut by it, and what it
    leaves in $OUT when it stops early."""
    now = [100.0]
    dl = quick.Deadline(60, clock=lambda: now[0])
    dl.start_stage(20)
    now[0] += 5
    first = dl.left()
    dl.start_stage(500)
    t.ok(first == 15 and dl.left() == 55, "quick: a stage's cap and the overall deadline bound "
         "the time left")
    t.ok(quick.QUICK_DEADLINE_S <= 8 * 60 and sum(c for _, c in quick.STAGES) >=
         quick.QUICK_DEADLINE_S, "quick: the deadline is at most 8 minutes, and the stages' caps "
         "leave none of it unused")

    sleeper = os.path.join(tmp, "sleeper")
    with open(sleeper, "w") as f:
        f.write("#!/bin/sh\nexec sleep 30\n")
    os.chmod(sleeper, 0o755)
    L = runs.Launcher(root, tmp, "", python=sleeper, torchrun=False)
    run = L.start("sleeper", None, [])
    L.time_left = lambda: 1.0  # the deadline comes while it runs
    L.wait(run)
    ctx = parts.Ctx(root, tmp, verdicts.Verdicts(), L, "", "", "", 1)
    with contextlib.redirect_stdout(io.StringIO()):
        parts.ran(ctx, run)
    t.ok(run.cut and run.elapsed_s < 10 and [lv for lv, _, _ in ctx.v.lines] == ["CUT"],
         f"quick: a run the deadline kills is CUT, not FAIL ({run.elapsed_s:.1f} s)")
    L.time_left = lambda: runs.MIN_RUN_S - 1
    try:
        L.start("late", None, [])
        t.ok(False, "quick: no run starts without the time for one")
    except runs.OutOfTime:
        t.ok(True, "quick: no run starts without the time for one")

    # Here CUDA is missing: the smoke test fails and the call stops early,
    # its verdicts and evidence already in --out.
    pack, out = os.path.join(tmp, "pack"), os.path.join(tmp, "out")
    build = os.path.join(root, "build")
    os.makedirs(os.path.join(pack, "lib"))
    for src in (os.environ.get("TSCOPE_PRELOAD") or os.path.join(build, "preload",
                                                                 "libtscope_preload.so"),
                os.environ.get("TSCOPE_REPORT") or os.path.join(build, "analyzer",
                                                                "tscope-report")):
        os.symlink(os.path.abspath(src), os.path.join(pack, os.path.basename(src)))
    r = subprocess.run([sys.executable, os.path.join(root, "scripts", "gpu-check"), "--quick",
                        "--prebuilt", pack, "--work", os.path.join(tmp, "qwork"), "--out", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    summary = os.path.join(out, outbox.SUMMARY)
    text = open(summary).read() if os.path.exists(summary) else ""
    with tarfile.open(os.path.join(out, outbox.EVIDENCE)) as tar:
        names = tar.getnames()
    t.ok(r.returncode == 1 and "FAIL a one-tensor CUDA run" in text and "stopped after the smoke"
         in text and "== 2 full" not in text and "smoke/stderr.txt" in names
         and sorted(os.listdir(out)) == [outbox.EVIDENCE, outbox.SUMMARY],
         f"quick: without CUDA it stops after the smoke test, the summary and the evidence in "
         f"--out ({sorted(os.listdir(out))}, {names})" + ("" if r.returncode == 1 else r.stdout))


def bb_good(steps=60):
    """A black-box summary document as `blackbox --json --every` writes
    one, every figure where a GPU job has it, a window at 20-24."""
    rows = [{"first": i, "last": i, "stall_rank_steps": 1, "max_data_stall_ns": 1000,
             "gemm_peak_ns": 400000, "mfu_step_ns": 1000000, "mfu": 0.4} for i in range(steps)]
    return {"ranks": [{"rank": 0, "steps": steps, "bytes_per_step": 116.4}], "timeline": rows,
            "windows": [{"id": "ctl-1", "reason": "ctl", "steps": "20-24", "first": 20,
                         "last": 24}]}


def bb_levels(bb, cap):
    def all_checks(v):
        blackbox.summaries(v, "bb", bb, 60)
        w = blackbox.ctl_window(v, "bb", bb, 5)
        if w:
            blackbox.window_report(v, "bb", bb, w, cap)
    return quiet(all_checks)[1]


def test_blackbox(t, root, report, tmp):
    """Part 7's decisions on documents with a known answer, then on the
    summaries of a real black-box run of the CUDA stand-in (with a window
    asked for before it started) through the same tscope-report."""
    cap = {"kernel_categories": [{"count": 72}], "budget": {"mfu": 0.38}}
    lv = bb_levels(bb_good(), cap)
    t.ok(lv and all(x == "PASS" for x, _ in lv), f"blackbox: a good run PASSes ({lv})")
    for what, change, word, level in (
            ("1.5 KiB a step", lambda b: b["ranks"][0].update(bytes_per_step=1500), "B on disk",
             "FAIL"),
            ("a step without MFU", lambda b: b["timeline"][30].update(mfu=None), "MFU estimate",
             "FAIL"),
            ("a step without data stall", lambda b: b["timeline"][9].update(stall_rank_steps=0),
             "data stall", "FAIL"),
            ("steps missing", lambda b: b["ranks"][0].update(steps=40), "every step", "FAIL"),
            ("no window", lambda b: b.update(windows=[]), "tscope-ctl asked", "FAIL")):
        bad = copy.deepcopy(bb_good())
        change(bad)
        t.ok(levels(bb_levels(bad, cap), word) == [level], f"blackbox: {what} {level}s '{word}'")
    lv = bb_levels(bb_good(), {"kernel_categories": [{"count": 72}], "budget": {"mfu": 0.2}})
    t.ok(levels(lv, "agrees") == ["WARN"], "blackbox: an MFU half the report's WARNs")
    lv = bb_levels(bb_good(), {"kernel_categories": [], "budget": {"mfu": 0.4}})
    t.ok(levels(lv, "GPU kernels") == ["FAIL"], "blackbox: a window without kernels FAILs")

    job, launch = os.environ.get("TSCOPE_STANDIN_JOB"), os.environ.get("TSCOPE_LAUNCH")
    preload = os.environ.get("TSCOPE_PRELOAD", "")
    if not (job and launch and os.path.exists(job) and os.path.exists(preload)):
        t.skip("blackbox: the CUDA stand-in is not built")
        return
    out, rdzv = os.path.join(tmp, "bb-standin"), os.path.join(tmp, "bb-rdzv")
    os.makedirs(out)
    os.makedirs(rdzv)
    ctl = os.path.join(root, "launcher", "tscope-ctl.in")
    subprocess.run(["sh", ctl, "capture", "--steps", "20-24", out], check=True,
                   stdout=subprocess.DEVNULL)
    env = {k: v for k, v in os.environ.items() if k != "CUDA_INJECTION64_PATH"}
    env.update(FAKENCCL_NO_KERNEL="1", TSCOPE_MODE="blackbox", TSCOPE_OUT=out, LD_PRELOAD=preload,
               LD_LIBRARY_PATH=os.environ["TSCOPE_STANDIN_DIR"] + ":"
               + os.environ["TSCOPE_FAKENCCL_DIR"])
    r = subprocess.run([launch, "-n", "1", "--rdzv", rdzv, "--", job, "--steps", "60",
                        "--launches", "20", "--gemms", "4", "--kernel-ns", "100000",
                        "--batch-bytes", "1048576", "--sync-first"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    t.ok(r.returncode == 0, f"blackbox: the stand-in job ran (exit {r.returncode})"
         + ("" if r.returncode == 0 else "\n" + r.stdout[-1500:]))
    if r.returncode:
        return
    bb, rc = blackbox.summary_json(report, out)
    w = [x for x in (bb or {}).get("windows", []) if x.get("reason") == "ctl"]
    cap = blackbox.capture_json(report, out, w[0]["id"])[0] if w else None
    lv = bb_levels(bb, cap)
    # Under load the stand-in's early GEMM records can reach the writer after
    # their step was summarized, and the window report's figures then differ:
    # those two checks are statistical here; every other must PASS.
    timing = ("MFU estimate in every row", "MFU agrees")
    firm = [(x, n) for x, n in lv if not any(w in n for w in timing)]
    t.ok(rc == 0 and len(firm) == len(lv) - 2 and all(x == "PASS" for x, _ in firm),
         f"blackbox: the stand-in's summaries and window PASS every check but the two "
         f"timing-dependent ones ({lv})")


def test_verdicts(t, tmp):
    path = os.path.join(tmp, "results.jsonl")
    with contextlib.redirect_stdout(io.StringIO()):
        a = verdicts.Verdicts(path, "1 setup")
        a.check(False, "x")
        b = verdicts.Verdicts(path, "1 setup")  # the part run again
        b.check(True, "x")
        verdicts.Verdicts(path, "2 full").check(False, "y", "numbers")
    text, failed = verdicts.summarize(path)
    t.ok(failed == 1 and "part 1 setup: 1 PASS" in text and "FAIL y: numbers" in text,
         "verdicts: summary keeps each part's latest run")


def test_procmaps(t):
    maps = ("7f00-7f01 r-xp 0 08:01 1 /usr/local/cuda/lib64/libcupti.so.13\n"
            "7f01-7f02 r--p 0 08:01 1 /usr/local/cuda/lib64/libcupti.so.13\n"
            "7f02-7f03 r-xp 0 08:01 2 /x/torch/lib/libcupti-1a2b3c.so.13\n"
            "7f03-7f04 r-xp 0 08:01 3 /x/torch/lib/libtorch_cpu.so\n"
            "7f04-7f05 rw-p 0 00:00 0 [heap]\n")
    t.ok(len(procmaps.cupti_copies(procmaps.mapped_files(maps))) == 2,
         "procmaps: two distinct libcupti files counted as two (a wheel's hashed copy too)")
    with open("/proc/self/maps") as f:
        t.ok(procmaps.cupti_copies(procmaps.mapped_files(f.read())) == [],
             "procmaps: this process maps no libcupti")


def corpus_trace(root, report, tmp):
    src = os.path.join(root, "..", "shared", "corpus", "kineto", "trace_diff_control")
    if not os.path.isdir(src):
        return None
    return tscope_out.export_trace(report, src, os.path.join(tmp, "corpus.json"))[0]


def test_windows(t, root, report, tmp):
    ev = corpus_trace(root, report, tmp)
    if ev is None:
        t.skip("windows: ../shared/corpus/kineto not here")
        return
    win = windows.profiler_windows(ev)
    t.ok(len(win) >= 2, f"windows: ProfilerStep#N ranges read from a real trace ({sorted(win)})")
    mine = windows.totals(ev, win)
    rows = windows.compare(mine, copy.deepcopy(mine))
    t.ok(rows and all(r[5] == "ok" for r in rows), "windows: a trace against itself is ok")
    big = max(mine, key=lambda c: mine[c][1])
    kern = [e for e in ev if e.get("cat") == "kernel" and (e.get("args") or {}).get("category") == big]

    def changed(drop=0, scale=1.0, cat=big):
        out = []
        n = 0
        for e in ev:
            if e.get("cat") == "kernel" and (e.get("args") or {}).get("category") == cat:
                n += 1
                if drop and n % drop == 0:
                    continue
                e = dict(e, dur=e.get("dur", 0) * scale)
            out.append(e)
        return windows.totals(out, win)

    verdict = {r[0]: r[5] for r in windows.compare(changed(drop=len(kern)), mine)}
    t.ok(verdict[big] == "off", f"windows: one '{big}' kernel fewer of {len(kern)} is off "
         "(counts must be equal)")
    verdict = {r[0]: r[5] for r in windows.compare(changed(scale=1.04), mine)}
    t.ok(verdict[big] == "ok", f"windows: '{big}' 4% longer is within the 5% margin")
    verdict = {r[0]: r[5] for r in windows.compare(changed(scale=1.06), mine)}
    t.ok(verdict[big] == "off", f"windows: '{big}' 6% longer is off")
    total = sum(x[1] for x in mine.values())
    theirs = dict(mine, rare=[2, total * 0.001])
    ours = dict(mine, rare=[4, total * 0.002])
    verdict = {r[0]: r[5] for r in windows.compare(ours, theirs)}
    t.ok(verdict["rare"] == "minor" and verdict[big] == "ok",
         "windows: a category under 1% of the time, doubled, is minor (WARN, not FAIL)")
    shifted = {s: (a + 1e9, b + 1e9) for s, (a, b) in win.items()}
    t.ok(windows.totals(ev, shifted) == {}, "windows: windows off the trace hold no kernel")


class FakeRun:
    """What dumpchecks reads of a run, for a generated dump."""

    def __init__(self, dumps, summary, wall):
        self.name, self.dumps, self.summary = "gen", dumps, summary
        self.wall0, self.wall1 = wall
        self.env_note = ""

    def dump_files(self):
        return sorted(os.path.join(self.dumps, f) for f in os.listdir(self.dumps)
                      if f.endswith(".tsd"))


def test_dump_readers(t, report, gen, tmp):
    if not (gen and os.path.exists(gen)):
        t.skip("dump readers: tsc-gen-job not built")
        return
    out = os.path.join(tmp, "gen")
    steps, flops = 6, 2e12
    subprocess.run([gen, "-o", out, "--ranks", "1", "--steps", str(steps), "--flops", str(flops),
                    "--mem-base", "64"], check=True, stdout=subprocess.DEVNULL)
    files, rc = tscope_out.info(report, out)
    lost = tscope_out.loss_counters(files[0])
    t.ok(rc == 0 and "dropped_events" in lost and not any(lost.values()),
         f"tscope_out: loss counters found in info, all zero ({sorted(lost)})")
    hurt = copy.deepcopy(files[0])
    hurt["meta"]["cupti_dropped_records"] = "12"
    hurt["chunks"]["missing"] = 1
    t.ok(tscope_out.loss_counters(hurt).get("meta.cupti_dropped_records") == 12 and
         tscope_out.loss_counters(hurt).get("chunks.missing") == 1,
         "tscope_out: a CUPTI loss and a missing chunk are counted")
    d, rc, _ = tscope_out.dump(report, out)
    corr = d.nccl_correlations()
    nk = [k for k in d["kernel"] if k.get("nccl_op")]
    t.ok(rc == 0 and corr and all(k["correlation"] in corr for k in nk) and len(nk) > 0,
         f"tscope_out: NCCL external ids name the NCCL kernels' correlations ({len(nk)} kernels)")
    t.ok(len(d.launch_of()) > 0 and d.thread_names(), "tscope_out: launches and thread names")
    gpu = d.gpu()
    wall = (min(r["start_ns"] for r in gpu) - 1, max(r["end_ns"] for r in gpu) + 1)
    summary = {"steps": steps, "linear_flops_per_step": flops, "linear_count": 4,
               "world_size": 1, "probe_calls": {}, "max_memory_reserved": 64 << 20}
    run = FakeRun(out, summary, wall)
    _, lv = quiet(dumpchecks.gemm_flops, run, d)
    t.ok(levels(lv, "GEMM FLOPs") == ["PASS"], "dumpchecks: GEMM FLOPs equal to the analytic count PASS")
    run.summary = dict(summary, linear_flops_per_step=flops * 1.2)
    _, lv = quiet(dumpchecks.gemm_flops, run, d)
    t.ok(levels(lv, "GEMM FLOPs") == ["FAIL"], "dumpchecks: 20% fewer GEMM FLOPs FAIL")
    run.summary = summary
    _, lv = quiet(dumpchecks.records, run, d, "full")
    t.ok(levels(lv, "wall window") == ["PASS"], "dumpchecks: records inside the wall window PASS")
    run.wall0 = wall[0] + 10**9
    _, lv = quiet(dumpchecks.records, run, d, "full")
    t.ok(levels(lv, "wall window") == ["FAIL"], "dumpchecks: records before the process FAIL")
    run.wall0 = wall[0]
    _, lv = quiet(dumpchecks.memory, run, d)
    t.ok(levels(lv, "peak reserved") == ["PASS"], "dumpchecks: peak reserved replayed from "
         "the memory records")
    _, lv = quiet(dumpchecks.threads, run, d)
    t.ok(bool(levels(lv, "pt_autograd")), "dumpchecks: thread checks run on a dump")
    _, lv = quiet(dumpchecks.nvtx, run, d)
    t.ok(levels(lv, "one user NVTX range") == ["FAIL"], "dumpchecks: a dump without the "
         "user's NVTX ranges FAILs")
    ev, origin = tscope_out.export_trace(report, out, os.path.join(tmp, "gen.json"))
    win = windows.summary_windows([[wall[0], wall[1]]], origin)
    mine = windows.totals(ev, win)
    t.ok(sum(n for n, _ in mine.values()) == len(d["kernel"]),
         f"windows: a dump's kernels all fall in its wall window on the exported axis "
         f"({sum(n for n, _ in mine.values())} of {len(d['kernel'])})")


def torch_python():
    for py in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if py and subprocess.run([py, "-c", "import torch.distributed"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL).returncode == 0:
            return py
    return None


def test_train_cpu(t, root, report, preload, tmp):
    py = torch_python()
    if not py:
        t.skip("train_gpt.py on the CPU: no python3 here has torch")
        return
    if not os.path.exists(preload):
        t.skip("train_gpt.py on the CPU: the preload is not built")
        return
    L = runs.Launcher(root, tmp, preload, python=py, torchrun=False)
    small = ["--device", "cpu", "--steps", "9", "--batch", "2", "--seq", "32", "--dim", "32",
             "--layers", "1", "--heads", "2", "--vocab", "128", "--workers", "2"]
    base = L.train("cpu-base", None, small)
    pre = L.train("cpu-pre", "full", small + ["--profile", "{run}/trace", "--profile-wait", "2",
                                               "--profile-warmup", "1", "--profile-steps", "3"])
    ctx = parts.Ctx(root, tmp, None, L, report, preload, "", 1)
    for r in (base, pre):
        ctx.v = verdicts.Verdicts()
        with contextlib.redirect_stdout(io.StringIO()):
            ok = parts.ran(ctx, r)
        how = "under the preload" if r is pre else "without the preload"
        t.ok(ok, f"train_gpt.py --device cpu {how} ran (exit {r.rc})"
             + ("" if ok else "\n" + r.stderr[-1500:]))
    if not (base.summary and pre.summary):
        return
    s = pre.summary
    t.ok(len(s["step_windows_ns"]) == 9 and all(a < b for a, b in s["step_windows_ns"]),
         "train_gpt.py: one increasing step window per step")
    t.ok(s["injection"]["CUDA_INJECTION64_PATH"] and os.path.samefile(
        s["injection"]["CUDA_INJECTION64_PATH"], preload),
        "train_gpt.py sees the CUDA_INJECTION64_PATH the preload's constructor set")
    t.ok(not procmaps.cupti_copies(s["injection"]["mapped"]) and
         any("libtscope_preload" in p for p in s["injection"]["mapped"]),
         "train_gpt.py: the preload mapped, no libcupti without CUDA")
    ctx.v = verdicts.Verdicts()
    with contextlib.redirect_stdout(io.StringIO()):
        parts.same_losses(ctx, "cpu", base, pre)
    t.ok([lv for lv, _, _ in ctx.v.lines] == ["PASS"], "train_gpt.py: the same losses, bitwise, "
         "with and without the preload")
    t.ok(pre.dump_files() == [], "train_gpt.py on CPU and gloo: no dump (nothing to record)")
    t.ok(not pre.tscope_lines(), "train_gpt.py on CPU: the preload prints nothing")
    traces = [f for f in os.listdir(pre.profile)] if os.path.isdir(pre.profile) else []
    t.ok(len(traces) == 1, f"train_gpt.py --profile wrote one torch.profiler trace ({traces})")
    if traces:
        ev, _ = tscope_out.export_trace(report, pre.profile, os.path.join(tmp, "cpu-trace.json"))
        t.ok(windows.totals(ev, {0: (float("-inf"), float("inf"))}) == {},
             "a CPU torch.profiler trace read through tscope-report: no kernel")
        # No dump and no kernel: the cross-check must not call that a match.
        _, lv = quiet(lambda v: parts.cross_check(ctx_with(ctx, v), pre, pre))
        t.ok(lv and all(level == "FAIL" for level, _ in lv),
             f"cross-check: a run with no dump and a CPU trace FAILs ({lv})")


def ctx_with(ctx, v):
    ctx.v = v
    return ctx


def main(root):
    t = Self()
    build = os.path.join(root, "build")
    report = os.environ.get("TSCOPE_REPORT", os.path.join(build, "analyzer", "tscope-report"))
    gen = os.environ.get("TSCOPE_GEN_JOB", os.path.join(build, "tests", "analyzer", "tsc-gen-job"))
    preload = os.environ.get("TSCOPE_PRELOAD", os.path.join(build, "preload",
                                                            "libtscope_preload.so"))
    if not os.path.exists(report):
        print(f"SKIP: {report} not built")
        return 77
    tmp = tempfile.mkdtemp(prefix="gpu-check-selftest-")
    try:
        test_verdicts(t, tmp)
        test_overhead(t)
        test_plugin(t)
        test_plugin_one_gpu(t)
        test_joins(t)
        test_quick(t, root, tmp)
        test_blackbox(t, root, report, tmp)
        test_procmaps(t)
        test_windows(t, root, report, tmp)
        test_dump_readers(t, report, gen, tmp)
        test_train_cpu(t, root, report, preload, tmp)
        selftest_standin.test(t, report, preload, tmp)
        selftest_standin.test_helpers(t, report, preload, tmp)
        selftest_standin.test_other_client(t, report, preload, tmp)
    finally:
        if not t.failed:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"cpu-selftest: {t.failed} failed, {t.skipped} skipped" +
          (f" (work folder kept: {tmp})" if t.failed else ""))
    return 1 if t.failed else 0

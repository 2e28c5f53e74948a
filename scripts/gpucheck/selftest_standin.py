"""The single-call mode's dump and trace checks, end to end on the CUDA
stand-in (no PyTorch): the stand-in job runs under the preload (full and
light capture) and once without it under a second CUPTI client that writes
a torch.profiler-shaped trace of the same steps; the checks gpu-check
--quick makes on a GPU then read them through the same tscope-report.

A correct run must PASS every check that does not need PyTorch; a mutated
dump (a kernel dropped, a join broken, a GEMM lost, a stray launch kept in
light mode, a step's range lost, the kernels 6% longer) must FAIL the check
that owns it, and only that one.  The mutations are made on what the
checks read (tscope-report's JSON), never on tscope's previous verdicts.

What the stand-in job did comes from its own truth file (tsc-standin-job
--truth): its steps' windows, its GEMMs' FLOPs."""

import copy
import os
import subprocess
import time

from . import dumpchecks, parts, tscope_out, windows
from .selftest_quiet import levels, quiet

STEPS, LAUNCHES, GEMMS = 8, 20, 2
# Besides the runtime's launches and NCCL's cuLaunchKernelEx, the job
# launches as cuBLASLt (cuLaunchKernelEx) and Triton (cuLaunchKernel) do:
# light mode must keep none of them.
LIBRARY_LAUNCHES = 2
JOB_ARGS = ["--steps", str(STEPS), "--launches", str(LAUNCHES), "--gemms", str(GEMMS), "--nvtx",
            "--lt-launches", str(LIBRARY_LAUNCHES), "--triton-launches", str(LIBRARY_LAUNCHES)]


class StandinRun:
    """What the checks read of a run (parts.Run's fields), for a stand-in
    job: its summary is made from the job's truth file."""

    def __init__(self, name, dumps, wall, truth):
        self.name, self.dumps = name, dumps
        self.wall0, self.wall1 = wall
        self.env_note = ""
        self.truth = truth
        steps = int(truth["steps"])
        self.summary = {
            "steps": steps,
            "step_windows_ns": [[int(truth[f"step_start.{i}"]), int(truth[f"step_end.{i}"])]
                                for i in range(steps)],
            "linear_flops_per_step": float(truth["gemm_flops"]) / steps,
            "linear_count": GEMMS,
            "world_size": 1,
            # the test NCCL launches one kernel per all-reduce (cuLaunchKernelEx)
            "nccl_gpu_work": {"AllReduce/sum": "kernel"},
            "pin_memory": False,      # the job copies from pageable memory
            "nvtx_step_prefix": "train_step",
        }

    def dump_files(self):
        return sorted(os.path.join(self.dumps, f) for f in os.listdir(self.dumps)
                      if f.endswith(".tsd"))


def read_truth(path):
    with open(path) as f:
        return dict(line.strip().split("=", 1) for line in f if "=" in line)


def job(tmp, name, env_extra, args):
    """Run the stand-in job once: (folder, exit status, output, wall)."""
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "rdzv"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_INJECTION64_PATH", "LD_PRELOAD") and not k.startswith("TSCOPE_")}
    env.update(LD_LIBRARY_PATH=os.environ["TSCOPE_STANDIN_DIR"] + ":"
               + os.environ["TSCOPE_FAKENCCL_DIR"], **env_extra)
    t0 = time.time_ns()
    r = subprocess.run([os.environ["TSCOPE_LAUNCH"], "-n", "1", "--rdzv", os.path.join(d, "rdzv"),
                        "--", os.environ["TSCOPE_STANDIN_JOB"], *args, "--truth",
                        os.path.join(d, "truth")], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    return d, r.returncode, r.stdout, (t0, time.time_ns())


def captured(tmp, name, mode, preload):
    # the GEMMs launch as cuBLASLt does on sm90: cuLaunchKernelEx, inside
    # tscope's GEMM wrapper (its own external id, not NCCL's)
    d, rc, out, wall = job(tmp, name, {"LD_PRELOAD": preload, "TSCOPE_CUPTI": mode,
                                       "TSCOPE_OUT": os.path.join(tmp, name, "out"),
                                       "STANDIN_CUBLAS_LAUNCH_EX": "1"}, JOB_ARGS)
    if rc:
        return None, f"exit {rc}: {out[-1500:]}"
    return StandinRun(name, os.path.join(d, "out"), wall, read_truth(d + "/truth.0")), ""


def full_checks(v, report, run, d, ev, origin, trace_ev):
    """What gpu-check --quick's stage 2 checks of a dump, less what only a
    PyTorch job has (losses, the allocator's peak, the autograd thread)."""
    dumpchecks.metadata(v, run, d, "full")
    dumpchecks.records(v, run, d, "full")
    dumpchecks.nccl_joins(v, run, d, "full")
    dumpchecks.gemm_flops(v, run, d)
    dumpchecks.nvtx(v, run, d)
    windows.check_steps(v, run.name, ev, origin, run.summary["step_windows_ns"], trace_ev)
    gap, bound = parts.sigterm_gap(d, int(d.meta.get("end_realtime_ns") or 0))
    v.check(gap is not None and gap <= bound, "GPU records reach the END record",
            f"{gap} s, bound {bound} s")


def drop_first(records, pred):
    for i, r in enumerate(records):
        if pred(r):
            del records[i]
            return True
    return False


def mutations(d, ev, origin, run):
    """(what, mutated Dump, mutated trace events, the check's word that
    must be the one FAIL).  Each changes one thing the checks read."""
    win = [((a - origin) / 1e3, (b - origin) / 1e3) for a, b in run.summary["step_windows_ns"]]

    def in_step(e):
        return e.get("cat") == "kernel" and any(a <= e["ts"] < b for a, b in win)

    out = []
    e2 = copy.deepcopy(ev)
    drop_first(e2, in_step)
    out.append(("a kernel dropped", d, e2, "kernel count equal"))

    d2 = copy.deepcopy(d)
    nccl_k = [k for k in d2["kernel_launch"] if k.get("nccl_op")]
    nccl_k[len(nccl_k) // 2]["tid"] = 1  # launched, it now says, from another thread
    out.append(("a join broken (an NCCL kernel's launching thread)", d2, ev, "joined to its GPU"))

    d3 = copy.deepcopy(d)
    d3.by_kind["gemm"].pop()
    out.append(("a GEMM lost", d3, ev, "GEMM FLOPs"))

    d4 = copy.deepcopy(d)
    drop_first(d4.by_kind["nvtx"], lambda r: r.get("name") == "train_step")
    out.append(("a step's NVTX range lost", d4, ev, "NVTX range per step"))

    e5 = [dict(e, dur=e["dur"] * 1.06) if e.get("cat") == "kernel" else e for e in ev]
    out.append(("every kernel 6% longer", d, e5, "summed kernel time"))
    return out


def test_helpers(t, report, preload, tmp):
    """Only the job's processes count as ranks: a process that only
    initialised CUDA and queried the device leaves no dump; a single-GPU
    job without NCCL keeps its dump and gets its report."""
    for mode in ("full", "light"):
        name = f"sj-init-{mode}"
        out = os.path.join(tmp, name, "out")
        _, rc, text, _ = job(tmp, name, {"LD_PRELOAD": preload, "TSCOPE_CUPTI": mode,
                                         "TSCOPE_OUT": out}, ["--init-only"])
        left = [f for f in os.listdir(out) if f.endswith(".tsd")] if os.path.isdir(out) else []
        t.ok(rc == 0 and not left, f"stand-in: a process that only initialised CUDA leaves no "
             f"dump ({mode}: exit {rc}, {left})")
    out = os.path.join(tmp, "sj-solo", "out")
    _, rc, text, _ = job(tmp, "sj-solo", {"LD_PRELOAD": preload, "TSCOPE_CUPTI": "full",
                                          "TSCOPE_OUT": out},
                         ["--no-nccl", "--steps", "3", "--launches", "4"])
    files, info_rc = tscope_out.info(report, out) if rc == 0 else ([], None)
    r = subprocess.run([report, out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True) if files else None
    t.ok(rc == 0 and len(files) == 1 and files[0].get("status") == "ok" and r is not None
         and r.returncode == 0 and "ranks 1" in r.stdout,
         f"stand-in: a single-GPU job without NCCL keeps its dump and gets its report "
         f"(exit {rc}, {len(files)} dump(s))")


def test_other_client(t, report, preload, tmp):
    """A CUPTI client that subscribes before CUDA is initialised (before
    tscope could) keeps CUPTI: the dump, `info` and the report's header
    name it."""
    out = os.path.join(tmp, "sj-first", "out")
    _, rc, text, _ = job(tmp, "sj-first", {"LD_PRELOAD": preload, "TSCOPE_OUT": out},
                         ["--kineto-first", "--steps", "3", "--launches", "4"])
    files, _ = tscope_out.info(report, out) if rc == 0 else ([], None)
    meta = files[0].get("meta", {}) if files else {}
    info = subprocess.run([report, "info", out], stdout=subprocess.PIPE, text=True).stdout
    head = subprocess.run([report, out], stdout=subprocess.PIPE, text=True).stdout.split(
        "\n")[:4]
    who = "cuptiSubscribe_v2 from libsim_kineto.so"
    t.ok(rc == 0 and meta.get("cupti_status") == "another client started first"
         and who in meta.get("cupti_other_client", "") and who in info
         and any(who in line and "CUPTI held by another client" in line for line in head),
         f"stand-in: a CUPTI client that subscribed first is named in the dump, info and the "
         f"report's header ({meta.get('cupti_status')}; {meta.get('cupti_other_client')}; "
         f"{head})")


def test(t, report, preload, tmp):
    need = ("TSCOPE_STANDIN_JOB", "TSCOPE_LAUNCH", "TSCOPE_STANDIN_DIR", "TSCOPE_FAKENCCL_DIR")
    if not all(os.environ.get(k) for k in need) or not os.path.exists(preload):
        t.skip("stand-in end to end: the CUDA stand-in is not built")
        return
    run, err = captured(tmp, "sj-full", "full", preload)
    os.makedirs(os.path.join(tmp, "sj-trace", "trace"))
    trace_dir, rc, out, _ = job(tmp, "sj-trace", {"SIM_KINETO_TRACE": os.path.join(
        tmp, "sj-trace", "trace", "trace.json")}, JOB_ARGS + ["--kineto-at", "0"])
    t.ok(run is not None and rc == 0, f"stand-in end to end: the jobs ran ({err or 'full ok'}; "
         f"traced: exit {rc})")
    if run is None or rc:
        return
    d, rc, _ = tscope_out.dump(report, run.dumps)
    ev, origin = tscope_out.export_trace(report, run.dumps, os.path.join(tmp, "sj-full.json"))
    trace_ev, _ = tscope_out.export_trace(report, os.path.join(trace_dir, "trace"),
                                          os.path.join(tmp, "sj-trace.json"))

    def all_checks(v, dd=d, e=ev):
        dumpchecks.read(v, report, run)
        full_checks(v, report, run, dd, e, origin, trace_ev)

    _, lv = quiet(all_checks)
    bad = [(x, n) for x, n in lv if x not in ("PASS", "INFO")]
    t.ok(len(lv) > 15 and not bad, f"stand-in end to end: a correct full run PASSes every check "
         f"({sum(x == 'PASS' for x, _ in lv)} PASS; not PASS: {bad})")
    for what, dd, e, word in mutations(d, ev, origin, run):
        _, lv = quiet(lambda v: full_checks(v, report, run, dd, e, origin, trace_ev))
        fails = [n for x, n in lv if x == "FAIL"]
        t.ok(len(fails) == 1 and word in fails[0],
             f"stand-in end to end: {what} FAILs '{word}' and nothing else ({fails})")

    light, err = captured(tmp, "sj-light", "light", preload)
    if not light:
        t.ok(False, f"stand-in end to end: the light job ran ({err})")
        return
    _, lv = quiet(dumpchecks.of_mode, report, light, "light", torch_job=False)
    bad = [(x, n) for x, n in lv if x not in ("PASS", "INFO")]
    t.ok(len(lv) > 10 and not bad, f"stand-in end to end: a correct light run PASSes every check "
         f"({sum(x == 'PASS' for x, _ in lv)} PASS; not PASS: {bad})")
    dl, _, _ = tscope_out.dump(report, light.dumps)
    left_out = dl.meta.get("gpu_light_launches_not_nccl")
    lt = int(light.truth["lt_launches"]) + int(light.truth["gemm_kernels"])
    t.ok(left_out is not None and int(left_out) == lt > 0,
         f"stand-in end to end: light mode left out exactly the job's cuBLASLt-like "
         f"cuLaunchKernelEx calls, inside its GEMMs and outside ({left_out} of {lt})")
    stray = copy.deepcopy(dl)
    ex = [a for a in stray["api"] if a.get("name") == "cuLaunchKernelEx"]
    moved = dict(ex[0], start_ns=ex[0]["start_ns"] - 10**6, end_ns=ex[0]["end_ns"] - 10**6,
                 correlation=10**9)
    stray.by_kind["api"].append(moved)  # a cuLaunchKernelEx outside any NCCL call
    _, lv = quiet(dumpchecks.light_only, light, stray)
    t.ok(levels(lv, "outside NCCL") == ["FAIL"], "stand-in end to end: a launch call kept "
         "outside NCCL's calls in light mode FAILs")
    unjoined = copy.deepcopy(dl)
    for a in unjoined["api"]:
        if a.get("name") == "cuLaunchKernelEx":
            a.update(tid=1, correlation=10**9)  # neither thread nor external id ties it
            break
    _, lv = quiet(dumpchecks.nccl_joins, light, unjoined, "light")
    t.ok(levels(lv, "joined") == ["FAIL"], "stand-in end to end: light: an NCCL launch call "
         "tied to no call FAILs the join")

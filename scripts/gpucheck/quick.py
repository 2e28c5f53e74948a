"""gpu-check --quick: the checks that matter most, in one call of a lent
GPU, under a deadline written here.

A lent GPU gives a session 15 minutes of device time in all (the machine's
start takes 1-2 of them) and one call at most 10 minutes.  The stages run
in the order of what they prove, each with a time cap, and every verdict
goes to $OUT at once (outbox.py), so a call cut off at its limit still
brings back everything proved until then:

  1 smoke      <= 30 s, the rest is skipped if it fails: glibc, the
               preload loads, a one-tensor CUDA run under it with CUPTI
               attached (status, version, which libcupti, exactly one),
               which attention kernels ran
  2 full       three 24-step runs (without the preload, full capture,
               torch.profiler): injection, records, losses bitwise equal,
               kernel count and time against the profiler, GEMM FLOPs, NCCL
               joins, the autograd thread
  3 light      light mode; torch.profiler while tscope holds CUPTI;
               SIGTERM to torchrun halfway
  4 graph      a step captured as a CUDA graph and replayed; black box with
               a short trigger period (its losses against stage 2's run
               without the preload, a prefix of the same job)
  5 overhead   one round of none / light / full, reported (INFO), not judged

torch.compile, FSDP and the NCCL plugin on several GPUs stay in the long
mode (--part), for a session with time to spare.
"""

import glob
import json
import os
import platform
import shutil
import subprocess
import time

from . import dumpchecks, outbox, parts, runs, tscope_out, verdicts

# The overall deadline.  A call runs at most 10 minutes and the call in
# docs/gpu-capture.md asks for timeout_s=540; 480 s leaves a minute for
# packing the evidence and for the machine's own start-up of the command,
# and keeps the rest of the 15 minutes for one rerun.
QUICK_DEADLINE_S = 480

SMOKE_S = 30            # the smoke test, all of it
OVERHEAD_STEPS = 120
# (stage, cap in seconds).  The caps add up to more than the deadline: a
# stage that finishes early leaves its time to the next; a stage that hangs
# cannot take the later ones' time beyond its cap.
STAGES = (("smoke", SMOKE_S), ("full", 170), ("light", 130), ("graph", 110),
          ("overhead", 90))


class Deadline:
    def __init__(self, seconds, clock=time.monotonic):
        self.clock = clock
        self.end = clock() + seconds
        self.stage_end = self.end

    def left(self):
        return min(self.end, self.stage_end) - self.clock()

    def start_stage(self, cap):
        self.stage_end = min(self.end, self.clock() + cap)


SMOKE_JOB = r"""
import json, os, time
import torch
import torch.nn.functional as F
out = {"injection": os.environ.get("CUDA_INJECTION64_PATH"), "torch": torch.__version__,
       "cuda": torch.version.cuda}
x = torch.ones(4, device="cuda")
out["device"] = torch.cuda.get_device_name(0)
out["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
out["value"] = (x * 2).sum().item()
torch.cuda.synchronize()
windows = {}
for name, det in (("default", False), ("deterministic", True)):
    b = torch.backends.cuda
    b.enable_flash_sdp(not det)
    b.enable_mem_efficient_sdp(not det)
    if hasattr(b, "enable_cudnn_sdp"):
        b.enable_cudnn_sdp(not det)
    q, k, v = (torch.randn(2, 12, 256, 64, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    torch.cuda.synchronize()
    a = time.time_ns()
    F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
    torch.cuda.synchronize()
    windows[name] = [a, time.time_ns()]
out["attention_windows_ns"] = windows
with open("/proc/self/maps") as f:
    out["mapped"] = sorted({l.split(None, 5)[5].strip() for l in f if len(l.split(None, 5)) == 6
                            and ("libcupti" in l or "tscope" in l)})
print(json.dumps(out))
"""


def glibc():
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):
        return platform.libc_ver()[1]


def smi():
    """nvidia-smi's name, driver and memory of the GPUs, or ''."""
    if not shutil.which("nvidia-smi"):
        return ""
    r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                        "--format=csv,noheader"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=10)
    return "nvidia-smi: " + r.stdout.strip().replace("\n", "; ")


def smoke(ctx):
    """False when a check failed: the rest would only repeat it."""
    v = ctx.v
    v.section("1 smoke test")
    lib = glibc()
    ver = tuple(int(x) for x in lib.split()[-1].split(".")[:2]) if lib else (0, 0)
    v.check(ver >= (2, 34), "glibc 2.34 or newer (the pack's binaries need it)", lib)
    r = subprocess.run(["true"], env=dict(os.environ, LD_PRELOAD=ctx.preload),
                       stderr=subprocess.PIPE, text=True, timeout=10)
    v.check(r.returncode == 0 and "ld.so" not in r.stderr, "the preload loads (LD_PRELOAD=... "
            "true)", r.stderr.strip()[:300])
    out = os.path.join(ctx.work, "runs", "smoke")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = ctx.L.env(None, None, {"LD_PRELOAD": ctx.preload, "TSCOPE_OUT": out,
                                 "TSCOPE_CUPTI": "full"})
    try:
        p = subprocess.run([ctx.L.python, "-c", SMOKE_JOB], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           timeout=max(1, min(SMOKE_S - 5, ctx.deadline.left())))
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, so, se = "timeout", "", str(e.stderr or "")
    with open(os.path.join(out, "stderr.txt"), "w") as f:
        f.write(se)
    try:
        res = json.loads(so.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        res = {}
    if not v.check(rc == 0 and res.get("value") == 8.0, "a one-tensor CUDA run under the preload",
                   f"exit {rc}" + ("" if rc == 0 else "\n" + se[-1500:])):
        return False
    nv = smi()
    v.info("versions", ", ".join(f"{k} {res.get(k)}" for k in ("device", "torch", "cuda", "nccl"))
           + (", " + nv if nv else ""))
    for line in se.splitlines():
        if "tscope:" in line:
            v.info("smoke: stderr", line)
    cupti = [p for p in res.get("mapped", []) if "libcupti" in p]
    v.check(len(cupti) == 1, "exactly one libcupti mapped", str(cupti))
    v.check(os.path.realpath(res.get("injection") or "") == os.path.realpath(ctx.preload),
            "CUDA_INJECTION64_PATH names the preload", str(res.get("injection")))
    files = sorted(glob.glob(os.path.join(out, "*.tsd")))
    if not v.check(len(files) == 1, "one dump from a one-process CUDA job without NCCL",
                   str([os.path.basename(f) for f in files])):
        return False
    d, rc, err = tscope_out.dump(ctx.report, out)
    m = d.meta
    v.check(m.get("cupti_status") == "ok", "CUPTI attached", f"cupti_status "
            f"{m.get('cupti_status')}, cupti_version {m.get('cupti_version')}, mode "
            f"{m.get('cupti_mode')}, libcupti {cupti}")
    v.check(len(d.kernels()) > 0, "kernels recorded", f"{len(d.kernels())} kernels")
    for name, (a, b) in res.get("attention_windows_ns", {}).items():
        ran_there = sorted({k["name"] for k in d.kernels() if a <= k["start_ns"] <= b})
        v.info(f"attention kernels ({name} backends)", ", ".join(n[:90] for n in ran_there))
    return v.failed() == 0


def full(ctx):
    v, L = ctx.v, ctx.L
    v.section("2 full mode against a run without the preload and torch.profiler")
    common = ["--steps", str(parts.STEPS), "--deterministic"]
    ctx.base = L.train("base", None, common)
    f = L.train("full", "full", common)
    prof = L.train("prof", None, common + ["--profile", "{run}/trace"])
    if all(parts.ran(ctx, r) for r in (ctx.base, f, prof)):
        parts.full_checks(ctx, ctx.base, f, prof)
    for path in f.dump_files():
        ctx.box.keep(path, "full/" + os.path.basename(path))
    for path in glob.glob(os.path.join(prof.profile, "*.json*")):
        ctx.box.keep(path, "prof/" + os.path.basename(path))


def light(ctx):
    v, L = ctx.v, ctx.L
    v.section("3 light mode")
    r = L.train("light", "light", ["--steps", str(parts.STEPS)])
    if parts.ran(ctx, r):
        dumpchecks.of_mode(v, ctx.report, r, "light")
    parts.coexist(ctx)
    parts.sigterm_halfway(ctx, timeout=max(10, ctx.deadline.left() - 10))


def graph(ctx):
    v, L = ctx.v, ctx.L
    v.section("4 a step captured as a CUDA graph and replayed")
    g = L.train("graph", "full", ["--steps", str(parts.STEPS), "--cuda-graph"])
    if parts.ran(ctx, g):
        parts.graph_checks(ctx, g, first_replayed=1)
    v.section("4 black box, a window asked for mid-run (trigger period "
              f"{parts.BB_ENV['TSCOPE_FLUSH_MS']} ms)")
    base = getattr(ctx, "base", None)
    if base is None or base.summary is None:
        v.add("CUT", "blackbox: not run", "no run without the preload from stage 2")
        return
    parts.blackbox_run(ctx, base, prefix=True, timeout=max(10, ctx.deadline.left() - 5))


def overhead(ctx):
    v, L = ctx.v, ctx.L
    v.section(f"5 overhead: one round of none / light / full, {OVERHEAD_STEPS} steps (INFO)")
    med = {}
    for cfg in ("none", "light", "full"):
        r = L.train(f"ovh-{cfg}", None if cfg == "none" else cfg, ["--steps", str(OVERHEAD_STEPS)])
        if parts.ran(ctx, r):
            med[cfg] = r.summary["median_step_s"]
    for cfg, m in med.items():
        pct = f", {(m / med['none'] - 1) * 100:+.2f}% vs none" if "none" in med else ""
        v.info(f"overhead {cfg}", f"median step {m * 1e3:.3f} ms{pct} (one round: noise not "
               "measured)")


STAGE_FUNCS = {"smoke": smoke, "full": full, "light": light, "graph": graph,
               "overhead": overhead}


def keep_runs(ctx):
    """Every run's stderr, command line and summary, once each."""
    kept = {name for _, name in ctx.box.files}
    for d in sorted(glob.glob(os.path.join(ctx.work, "runs", "*"))):
        for f in ("stderr.txt", "command.txt", "summary.json"):
            name = f"{os.path.basename(d)}/{f}"
            if name not in kept:
                ctx.box.keep(os.path.join(d, f), name)


def header(preload, out):
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True,
                         cwd=os.path.dirname(os.path.abspath(__file__)))
    return (f"gpu-check --quick, {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, host "
            f"{platform.node()}, commit {rev.stdout.strip() or 'unknown'}, deadline "
            f"{QUICK_DEADLINE_S} s, preload {preload}, output {out}")


def run(args, root, prepare):
    """The single-call mode: exit status 1 when a check FAILed."""
    out = args.out or os.environ.get("OUT") or os.path.join(args.work, "out")
    deadline = Deadline(QUICK_DEADLINE_S)
    box = outbox.Outbox(out, header(args.prebuilt or "built here", out))
    v = verdicts.Verdicts(os.path.join(args.work, "results.jsonl"), "quick", sink=box)
    v.section("0 setup")
    shutil.rmtree(os.path.join(args.work, "runs"), ignore_errors=True)  # no evidence of old calls
    built = prepare(args, v)
    if not built:
        box.write("stopped: nothing to run")
        return 1
    launcher = runs.Launcher(root, args.work, built[0])
    launcher.time_left = deadline.left
    ctx = parts.Ctx(root, args.work, v, launcher, built[1], built[0], "", 1)
    ctx.box, ctx.deadline = box, deadline
    stopped = ""
    for name, cap in STAGES:
        deadline.start_stage(cap)
        if deadline.left() < runs.MIN_RUN_S:
            v.add("CUT", f"stage {name}: not run", "the deadline leaves no time")
            continue
        try:
            ok = STAGE_FUNCS[name](ctx)
        except runs.OutOfTime as e:
            v.add("CUT", f"stage {name}: stopped by its time cap or the deadline", str(e))
            ok = True
        except Exception as e:  # a first GPU run meets surprises: report, go on
            v.check(False, f"stage {name} finished", f"{type(e).__name__}: {e}")
            ok = name != "smoke"  # a smoke test that broke proved nothing
        keep_runs(ctx)
        box.pack()
        if name == "smoke" and ok is False:
            stopped = "stopped after the smoke test: the later stages would only repeat it"
            break
    failed = v.failed()
    box.write(stopped or f"done in {QUICK_DEADLINE_S - (deadline.end - deadline.clock()):.0f} s: "
              + ("all checks passed (WARN and CUT lines need a look)" if not failed
                 else f"{failed} checks FAILED"))
    box.pack()
    return 1 if failed else 0

"""Checks on the dump of one train_gpt.py run, against its summary."""

import collections
import os

from . import joins, tscope_out

USER_NVTX_PREFIX = "train_gpt/"  # scripts/train_gpt.py's own ranges


def read(v, report, run, expect=1):
    """The run's dump: exactly `expect` files (the launcher and DataLoader
    workers write none), readable, nothing lost.  Returns (Dump, info of
    the first file) or (None, None)."""
    files = run.dump_files()
    v.check(len(files) == expect, f"{run.name}: {expect} dump(s)",
            f"{len(files)} found: {[os.path.basename(f) for f in files]}")
    if not files:
        return None, None
    infos, rc = tscope_out.info(report, run.dumps)
    f = infos[0]
    v.check(rc == 0 and f.get("status") == "ok" and not f.get("problems"),
            f"{run.name}: tscope-report info reads it cleanly",
            f"exit {rc}, status {f.get('status')}, problems {f.get('problems')[:3]}")
    lost = tscope_out.loss_counters(f)
    v.check(not any(lost.values()), f"{run.name}: nothing lost",
            ", ".join(f"{k}={n}" for k, n in sorted(lost.items())))
    d, rc, err = tscope_out.dump(report, run.dumps)
    v.check(rc == 0, f"{run.name}: tscope-report dump reads every record", err.strip()[:300])
    return d, f


def metadata(v, run, d, mode):
    m = d.meta
    v.check(m.get("cupti_mode") == mode, f"{run.name}: cupti_mode", str(m.get("cupti_mode")))
    v.check(m.get("cupti_status") == "ok", f"{run.name}: cupti_status", str(m.get("cupti_status")))
    v.check(m.get("clock_status") == "ok", f"{run.name}: clock_status (CUPTI clock = "
            "CLOCK_REALTIME)", str(m.get("clock_status")))
    v.check(bool(m.get("device_name")), f"{run.name}: device metadata",
            f"{m.get('device_name')}, {m.get('device_sm_count')} SMs, driver "
            f"{m.get('cuda_driver_version')}, runtime {m.get('cuda_runtime_version')}, "
            f"cupti {m.get('cupti_version')}")
    v.check(len(d["clock"]) > 0, f"{run.name}: clock samples", str(len(d["clock"])))
    v.info(f"{run.name}: cupti_overhead_ns", str(m.get("cupti_overhead_ns")))


def records(v, run, d, mode):
    """GPU records present, inside the run's wall window, copies pinned
    (where the job pins its batches: train_gpt.py's DataLoader does)."""
    k, c, s = d.kernels(), d["memcpy"], d["sync"]
    h2d = [x for x in c if str(x.get("dir")).upper() == "H2D"]
    v.info(f"{run.name}: records", f"{len(k)} kernels ({len(d['kernel_launch'])} folded with "
           f"their launch), {len(c)} copies ({len(h2d)} H2D), "
           f"{len(d['memset'])} memsets, {len(s)} syncs, {len(d['api'])} api, "
           f"{len(d['extcorr'])} extcorr, {len(d['gemm'])} gemm, {len(d['nvtx'])} nvtx, "
           f"{len(d['nccl'])} nccl")
    if run.summary.get("pin_memory", True):
        v.check(bool(h2d) and any(x.get("pinned") for x in h2d),
                f"{run.name}: pinned H2D copies (DataLoader pin_memory)", f"{len(h2d)} H2D")
    v.check(len(s) > 0, f"{run.name}: synchronizations", str(len(s)))
    if mode == "full":
        v.check(len(k) > 0, f"{run.name}: kernels", str(len(k)))
    gpu = d.gpu() + s
    out = [r for r in gpu if r["start_ns"] < run.wall0 or r["end_ns"] > run.wall1
           or r["end_ns"] < r["start_ns"]]
    v.check(not out, f"{run.name}: GPU records inside the process's wall window",
            f"{len(out)} of {len(gpu)} outside")


def expected_nccl_work(run, mode):
    """{call key: the GPU work each such call must be joined to}.  The
    summary may say it ("nccl_gpu_work", e.g. the CUDA stand-in's); else
    train_gpt.py's probes: at world size 1 NCCL makes no kernel for an
    in-place SUM (DDP's buckets) and a device copy for an out-of-place
    AllGather or ReduceScatter; an AVG all-reduce is a PreMulSum, one
    kernel even on one rank (`oneRankReduce`, launched with
    cudaLaunchKernel).  In light mode a kernel is seen as its launch call."""
    s = run.summary
    if "nccl_gpu_work" in s:
        want = dict(s["nccl_gpu_work"])
    else:
        probe = s.get("probe_calls", {})
        oop = "copy" if s.get("world_size", 1) == 1 else "kernel"
        want = {}
        if probe.get("AllReduce_avg"):
            want["AllReduce/avg"] = "kernel"
        if probe.get("AllGather"):
            want["AllGather"] = oop
        if probe.get("ReduceScatter"):
            want["ReduceScatter"] = oop
    if mode != "full":
        want = {k: "launch" if w == "kernel" else w for k, w in want.items()}
        if s.get("world_size", 1) == 1 and "nccl_gpu_work" not in s:
            # oneRankReduce's cudaLaunchKernel is a plain launch: light mode
            # does not record it (docs/gpu-capture.md, "Modes")
            want.pop("AllReduce/avg", None)
    return want


def nccl_joins(v, run, d, mode):
    """Every NCCL call that must make GPU work joined to it, by
    correlation or by thread and time (joins.py); the probe collectives
    all recorded."""
    probe = run.summary.get("probe_calls", {})
    calls = collections.Counter(joins.key_of(n) for n in d["nccl"])
    v.info(f"{run.name}: NCCL calls", ", ".join(f"{k}: {n}" for k, n in sorted(calls.items())))
    if probe:
        ops = collections.Counter(n.get("op") for n in d["nccl"])
        avg = calls["AllReduce/avg"]
        v.check(avg >= probe.get("AllReduce_avg", 0)
                and ops["AllGather"] >= probe.get("AllGather", 0)
                and ops["ReduceScatter"] >= probe.get("ReduceScatter", 0),
                f"{run.name}: every probe collective recorded",
                f"AVG all-reduce {avg}, AllGather {ops['AllGather']}, ReduceScatter "
                f"{ops['ReduceScatter']} for probes {probe}")
    joined = joins.join(d)
    want = expected_nccl_work(run, mode)
    if probe.get("AllReduce_avg") and "AllReduce/avg" not in want:
        v.info(f"{run.name}: {mode}: AVG all-reduce not joined", "at world size 1 NCCL launches "
               "its oneRankReduce with cudaLaunchKernel, which light mode does not record")
    for key, (n, ok, how) in joins.tally(joined, want).items():
        kind = want[key]
        v.check(n > 0 and ok == n, f"{run.name}: {mode}: every {key} call joined to its "
                f"GPU {kind}", f"{ok} of {n} calls joined ({how or 'no join'})")


def memory(v, run, d):
    """The caching allocator's segments replayed as the analyzer does must
    peak at torch.cuda.max_memory_reserved()."""
    m = d.meta
    v.check(m.get("mem_capture") == "ok", f"{run.name}: mem_capture", str(m.get("mem_capture")))
    v.check(bool(m.get("mem_info_free_bytes")), f"{run.name}: cuMemGetInfo at start",
            f"free={m.get('mem_info_free_bytes')} total={m.get('mem_info_total_bytes')}")
    mem = sorted(d["mem_alloc"] + d["mem_free"], key=lambda r: r["start_ns"])
    sources = collections.Counter((r["kind"], r.get("source")) for r in mem)
    v.info(f"{run.name}: memory records", f"{dict(sources)}, {len(d['mem_pool'])} pool")
    live = peak = 0
    for r in mem:
        if r.get("source") in ("malloc", "vmm"):
            live += r["bytes"] if r["kind"] == "mem_alloc" else -r["bytes"]
            peak = max(peak, live)
    want = run.summary.get("max_memory_reserved", 0)
    if "expandable_segments:True" in run.env_note:
        v.check(sources.get(("mem_alloc", "vmm"), 0) > 0,
                f"{run.name}: expandable segments give cuMemCreate records")
    v.check(want > 0 and abs(peak - want) <= 0.05 * want + (2 << 20),
            f"{run.name}: peak reserved from the records = max_memory_reserved() (5%)",
            f"{peak} vs {want}")


# The GEMM FLOPs margin.  train_gpt.py's count is exact for every cuBLAS
# call its model makes: each nn.Linear forward and its two backward
# products, and with math attention (--deterministic) the six batched
# products of each attention (two forward, four backward).  1% leaves room
# for a GEMV-sized call outside that list (each well under 0.1% of a step)
# and still catches a whole kind of GEMM lost: the smallest, the attention
# output projection's forward, is 2.1% of a step over the 4 layers.
GEMM_FLOPS_MARGIN = 0.01


def gemm_flops(v, run, d, level="FAIL", note=""):
    s = run.summary
    steps = s["steps"]
    flops = sum(g["flops"] for g in d["gemm"])
    attention = s.get("attention_flops_per_step", 0) if s.get("attention_in_cublas") else 0
    expect = s["linear_flops_per_step"] + attention
    ratio = flops / steps / expect if expect else 0.0
    v.check(abs(ratio - 1) <= GEMM_FLOPS_MARGIN, f"{run.name}: GEMM FLOPs per step = the "
            f"model's analytic count ({GEMM_FLOPS_MARGIN:.0%})",
            f"{flops / steps:.4g} vs {expect:.4g} (linear {s['linear_flops_per_step']:.4g}, "
            f"attention in cuBLAS {attention:.4g}), ratio {ratio:.4f}; "
            f"{len(d['gemm']) / steps:.1f} calls per step for {s['linear_count']} "
            f"layers; apis {dict(collections.Counter(g.get('api') for g in d['gemm']))}{note}",
            level)


def threads(v, run, d):
    """Backward kernels launched from PyTorch's autograd device thread."""
    names = d.thread_names()
    autograd = {t for t, n in names.items() if n.startswith("pt_autograd_")}
    k_auto = [w for w in joins.gpu_work(d) if w.kind == "kernel" and w.tid in autograd]
    v.check(len(k_auto) > 0, f"{run.name}: kernels launched from pt_autograd_* threads",
            f"{len(k_auto)} (threads {sorted(names[t] for t in autograd)})")
    api = collections.Counter(c.get("name") for c in d.launch_of().values())
    v.check(api.get("__cudaLaunchKernel", 0) + api.get("cudaLaunchKernel", 0) > 0,
            f"{run.name}: runtime launch calls recorded", str(dict(api.most_common(6))))
    v.check(api.get("cuLaunchKernelEx", 0) > 0, f"{run.name}: cuLaunchKernelEx records "
            "(NCCL's launcher)", str(api.get("cuLaunchKernelEx", 0)), "WARN")


def is_nccl_kernel(k):
    return bool(k.get("nccl_op")) or k.get("name", "").lstrip("_Z0123456789").startswith("nccl")


def light_only(v, run, d):
    """Light mode keeps no kernel but NCCL's, and of the launch calls only
    those NCCL makes (inside an NCCL call, whatever the call's name)."""
    others = [k for k in d.kernels() if not is_nccl_kernel(k)]
    v.check(not others, f"{run.name}: light: no kernel records but NCCL's", f"{len(others)} others")
    in_nccl = {id(w.record) for _, ws in joins.join(d) for w, _ in ws}
    stray = collections.Counter(a["name"] for a in d["api"]
                                if joins.is_launch_call(a.get("name")) and id(a) not in in_nccl)
    v.check(not stray, f"{run.name}: light: no launch call recorded outside NCCL's calls",
            f"{sum(stray.values())} ({dict(stray.most_common(4))})")
    v.check(len(d["gemm"]) > 0, f"{run.name}: light: GEMMs still recorded", str(len(d["gemm"])))


def nvtx(v, run, d):
    """The user's NVTX ranges all there, one per step.  The dump keeps no
    NVTX domain (`dump --json` has no such key), so the other ranges
    (NCCL's) are told apart by name only, and counted."""
    prefix = run.summary.get("nvtx_step_prefix", USER_NVTX_PREFIX + "step ")
    user = [r for r in d["nvtx"] if r.get("name", "").startswith(prefix)]
    v.check(len(user) == run.summary["steps"], f"{run.name}: one user NVTX range per step",
            f"{len(user)} named '{prefix}...' for {run.summary['steps']} steps")
    other = [r for r in d["nvtx"] if not r.get("name", "").startswith(prefix)]
    names = collections.Counter(r.get("name") for r in other).most_common(5)
    v.info(f"{run.name}: other NVTX ranges", f"{len(other)} ({names})")


def of_mode(v, report, run, mode, torch_job=True):
    """Every check of a plain run in TSCOPE_CUPTI=mode (full or light);
    torch_job False leaves out what only a PyTorch job has (the caching
    allocator's peak, the autograd thread)."""
    d, _ = read(v, report, run)
    if not d:
        return None
    metadata(v, run, d, mode)
    records(v, run, d, mode)
    nccl_joins(v, run, d, mode)
    gemm_flops(v, run, d)
    if mode == "full":
        if torch_job:
            threads(v, run, d)
            memory(v, run, d)
        nvtx(v, run, d)
    else:
        light_only(v, run, d)
    return d

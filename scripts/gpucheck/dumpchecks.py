"""Checks on the dump of one train_gpt.py run, against its summary."""

import collections
import os

from . import tscope_out

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
    """GPU records present, inside the run's wall window, copies pinned."""
    k, c, s = d["kernel"], d["memcpy"], d["sync"]
    h2d = [x for x in c if str(x.get("dir")).upper() == "H2D"]
    v.info(f"{run.name}: records", f"{len(k)} kernels, {len(c)} copies ({len(h2d)} H2D), "
           f"{len(d['memset'])} memsets, {len(s)} syncs, {len(d['api'])} api, "
           f"{len(d['extcorr'])} extcorr, {len(d['gemm'])} gemm, {len(d['nvtx'])} nvtx, "
           f"{len(d['nccl'])} nccl")
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


def nccl_joins(v, run, d, mode):
    """The probe collectives (train_gpt.py Probes) tied to their GPU work.
    At world size 1 NCCL makes no kernel for an in-place SUM (DDP's
    buckets) and a device copy for an out-of-place AllGather or
    ReduceScatter; an AVG all-reduce is a PreMulSum, one kernel."""
    probe = run.summary.get("probe_calls", {})
    world = run.summary.get("world_size", 1)
    calls = collections.Counter((n.get("op"), n.get("redop")) for n in d["nccl"])
    ops = collections.Counter(n.get("op") for n in d["nccl"])
    v.info(f"{run.name}: NCCL calls", ", ".join(f"{o}/{r}: {n}" for (o, r), n in
                                                 sorted(calls.items())))
    avg = calls[("AllReduce", "avg")]
    v.check(avg >= probe.get("AllReduce_avg", 0) and ops["AllGather"] >= probe.get("AllGather", 0)
            and ops["ReduceScatter"] >= probe.get("ReduceScatter", 0),
            f"{run.name}: every probe collective recorded",
            f"AVG all-reduce {avg}, AllGather {ops['AllGather']}, ReduceScatter "
            f"{ops['ReduceScatter']} for probes {probe}")
    corr = d.nccl_correlations()
    kern = collections.Counter(k.get("nccl_op") for k in d["kernel"] if k.get("nccl_op"))
    copies = [c for c in d["memcpy"] if c["correlation"] in corr]
    launches = [a for a in d["api"] if a["correlation"] in corr]
    v.info(f"{run.name}: GPU work inside NCCL calls",
           f"kernels by op {dict(kern)}, {len(copies)} copies, {len(launches)} API records")
    oop = ops["AllGather"] + ops["ReduceScatter"]
    if mode == "full":
        v.check(kern["AllReduce"] >= avg > 0, f"{run.name}: AVG all-reduce -> its kernel",
                f"{kern['AllReduce']} AllReduce kernels for {avg} AVG calls")
        if world == 1:
            v.check(len(copies) >= oop > 0,
                    f"{run.name}: out-of-place AllGather/ReduceScatter -> their copies "
                    "(one rank: NCCL copies, no kernel)", f"{len(copies)} copies for {oop} calls")
        else:
            v.check(kern["AllGather"] + kern["ReduceScatter"] >= oop > 0,
                    f"{run.name}: AllGather/ReduceScatter -> their kernels",
                    f"{kern['AllGather'] + kern['ReduceScatter']} kernels for {oop} calls")
    else:
        ex = [a for a in launches if a.get("name", "").startswith("cuLaunchKernelEx")]
        v.check(len(ex) >= avg > 0, f"{run.name}: light: AVG all-reduce -> cuLaunchKernelEx "
                "API record", f"{len(ex)} for {avg} calls")
        v.check(len(copies) >= oop > 0 or world > 1,
                f"{run.name}: light: out-of-place collectives -> their copies",
                f"{len(copies)} copies for {oop} calls")


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


def gemm_flops(v, run, d, level="FAIL", note=""):
    steps = run.summary["steps"]
    flops = sum(g["flops"] for g in d["gemm"])
    expect = run.summary["linear_flops_per_step"]
    ratio = flops / steps / expect if expect else 0.0
    v.check(abs(ratio - 1) <= 0.10, f"{run.name}: GEMM FLOPs per step = the linear layers' "
            "analytic count (10%)", f"{flops / steps:.4g} vs {expect:.4g}, ratio {ratio:.3f}; "
            f"{len(d['gemm']) / steps:.1f} calls per step for {run.summary['linear_count']} "
            f"layers; apis {dict(collections.Counter(g.get('api') for g in d['gemm']))}{note}",
            level)


def threads(v, run, d):
    """Backward kernels launched from PyTorch's autograd device thread."""
    names = d.thread_names()
    autograd = {t for t, n in names.items() if n.startswith("pt_autograd_")}
    launch = d.launch_of()
    k_auto = [k for k in d["kernel"]
              if launch.get(k["correlation"], {}).get("tid") in autograd]
    v.check(len(k_auto) > 0, f"{run.name}: kernels launched from pt_autograd_* threads",
            f"{len(k_auto)} (threads {sorted(names[t] for t in autograd)})")
    api = collections.Counter(a.get("name") for a in d["api"])
    v.check(api.get("__cudaLaunchKernel", 0) + api.get("cudaLaunchKernel", 0) > 0,
            f"{run.name}: runtime launch API records", str(dict(api.most_common(6))))
    v.check(api.get("cuLaunchKernelEx", 0) > 0, f"{run.name}: cuLaunchKernelEx records "
            "(NCCL's launcher)", str(api.get("cuLaunchKernelEx", 0)), "WARN")


def light_only(v, run, d):
    others = [k for k in d["kernel"] if not k.get("nccl_op")
              and not k["name"].lstrip("_Z0123456789").startswith("nccl")]
    v.check(not others, f"{run.name}: light: no kernel records but NCCL's", f"{len(others)} others")
    plain = [a for a in d["api"] if "Launch" in (a.get("name") or "")
             and not a["name"].startswith("cuLaunchKernelEx")]
    v.check(not plain, f"{run.name}: light: no plain launch API records", str(len(plain)))
    v.check(len(d["gemm"]) > 0, f"{run.name}: light: GEMMs still recorded", str(len(d["gemm"])))


def nvtx(v, run, d):
    """The user's NVTX ranges all there, NCCL's kept apart from them.

    UPDATE WHEN the dump carries each range's NVTX domain: NCCL's ranges
    are then told apart by domain ("domain" key below) instead of being
    reported as mixed in."""
    user = [r for r in d["nvtx"] if r.get("name", "").startswith(USER_NVTX_PREFIX + "step ")]
    v.check(len(user) == run.summary["steps"], f"{run.name}: one user NVTX range per step",
            f"{len(user)} for {run.summary['steps']} steps")
    other = [r for r in d["nvtx"] if not r.get("name", "").startswith(USER_NVTX_PREFIX)]
    names = collections.Counter(r.get("name") for r in other).most_common(5)
    if not other:
        v.add("WARN", f"{run.name}: NCCL's NVTX ranges kept apart",
              "no range but the user's: NCCL emitted none here, nothing to keep apart")
        return
    apart = all("domain" in r for r in other)
    v.check(apart, f"{run.name}: NCCL's NVTX ranges kept apart from the user's",
            f"{len(other)} other ranges ({names}) "
            + ("carry their domain" if apart else "have no domain in the dump: mixed with the "
               "user's (issue 21)"))


def of_mode(v, report, run, mode):
    """Every check of a plain run in TSCOPE_CUPTI=mode (full or light)."""
    d, _ = read(v, report, run)
    if not d:
        return None
    metadata(v, run, d, mode)
    records(v, run, d, mode)
    nccl_joins(v, run, d, mode)
    gemm_flops(v, run, d)
    if mode == "full":
        threads(v, run, d)
        nvtx(v, run, d)
        memory(v, run, d)
    else:
        light_only(v, run, d)
    return d

#!/usr/bin/env python3
"""Cases of issue 38 (item 6) on real traces of the shared corpus, each
checked against what the trace itself holds (read here, not from an
earlier tscope output).

    evidence_cases.py TSCOPE_REPORT PUBLIC_CORPUS

one_rank_of_four   hpctrain_mi300_ddp4's rank 0 alone.  The trace has no
                   distributedInfo, but every collective says "Group size": 4:
                   one rank of at least four was read, so LOAD.MISSING_RANKS
                   and a confidence below high.
two_cycles         kineto_resnet50_workers0's trace cut between two
                   ProfilerSteps into two files, as torch.profiler's schedule
                   with repeat=2 writes one process: one pid, no overlap in
                   time.  One rank, not two.
ep_named_kernel    hpctrain_mi300_ddp4 as a GPU-only trace (no CPU ops) whose
                   collective kernels carry PyTorch's metadata ("Collective
                   name" on the kernel) but a name without NCCL or a
                   collective's word, as an expert-parallel library's
                   exchange kernels do: still communication, each
                   collective the metadata names.
Exit 77 (skipped) when the corpus is absent.
"""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

FAILS = []


def check(name, cond, what):
    print("%s: %s: %s" % (name, "ok" if cond else "FAILED", what))
    if not cond:
        FAILS.append(name)


def report(tscope, folder):
    out = subprocess.run([tscope, "--json", folder], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit("tscope-report %s: exit %d: %s" % (folder, out.returncode, out.stderr))
    return json.loads(out.stdout)


def one_rank_of_four(tscope, corpus, work):
    src = os.path.join(corpus, "hpctrain_mi300_ddp4", "rank0.pt.trace.json.gz")
    with gzip.open(src, "rt") as f:
        trace = json.load(f)
    sizes = {e["args"]["Group size"] for e in trace["traceEvents"]
             if isinstance(e.get("args"), dict) and "Group size" in e["args"]}
    world = max(sizes)
    check("one_rank_of_four", "distributedInfo" not in trace and world == 4,
          "the trace has no distributedInfo, its largest communicator has %d ranks" % world)
    folder = os.path.join(work, "one_rank")
    os.mkdir(folder)
    os.symlink(os.path.abspath(src), os.path.join(folder, os.path.basename(src)))
    r = report(tscope, folder)
    ids = [f["id"] for f in r["findings"]]
    missing = [f for f in r["findings"] if f["id"] == "LOAD.MISSING_RANKS"]
    check("one_rank_of_four", bool(missing) and ("1 of the job's %d" % world) in missing[0]["title"],
          "LOAD.MISSING_RANKS says 1 of %d (findings: %s)" % (world, ", ".join(ids)))
    check("one_rank_of_four", r["confidence"]["level"] != "high",
          "confidence %s" % r["confidence"]["level"])


def two_cycles(tscope, corpus, work):
    folder = os.path.join(corpus, "kineto_resnet50_workers0")
    src = [os.path.join(folder, n) for n in os.listdir(folder) if ".json" in n][0]
    with gzip.open(src, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if str(e.get("name", "")).startswith("ProfilerStep#"))
    pids = {e["pid"] for e in events if e.get("cat") in ("cpu_op", "Operator")}
    check("two_cycles", len(steps) >= 4 and len(pids) == 1,
          "%d ProfilerSteps, CPU ops of %d process" % (len(steps), len(pids)))
    half = len(steps) // 2
    cut = (steps[half - 1][1] + steps[half][0]) / 2
    out = os.path.join(work, "cycles")
    os.mkdir(out)
    for i, keep in enumerate((lambda e: e["ts"] + e.get("dur", 0) <= cut,
                              lambda e: e["ts"] >= cut)):
        part = dict(trace)
        part["traceEvents"] = [e for e in events if e.get("ph") == "M" or
                               ("ts" in e and keep(e))]
        with gzip.open(os.path.join(out, "worker0.cycle%d.pt.trace.json.gz" % (i + 1)), "wt") as f:
            json.dump(part, f)
    r = report(tscope, out)
    check("two_cycles", r["ranks"] == 1, "ranks %s (two files of one process)" % r["ranks"])
    probs = " ".join(p.get("message", json.dumps(p)) if isinstance(p, dict) else str(p)
                     for p in r.get("problems", []))
    check("two_cycles", "another cycle" in probs or "profiled in another cycle" in probs,
          "the left-out cycle is named: %s" % probs[:160])


def ep_named_kernel(tscope, corpus, work):
    src = os.path.join(corpus, "hpctrain_mi300_ddp4")
    out = os.path.join(work, "ep")
    os.mkdir(out)
    ops = set()
    for n in sorted(os.listdir(src)):
        if ".json" not in n:
            continue
        with gzip.open(os.path.join(src, n), "rt") as f:
            trace = json.load(f)
        kept = []
        for e in trace["traceEvents"]:
            if e.get("ph") != "M" and e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
                continue
            if isinstance(e.get("args"), dict) and "Collective name" in e["args"]:
                ops.add(e["args"]["Collective name"])
                e = dict(e, name="ep_exchange_kernel")
            kept.append(e)
        trace["traceEvents"] = kept
        with gzip.open(os.path.join(out, n), "wt") as f:
            json.dump(trace, f)
    want = {"allreduce": "AllReduce", "broadcast": "Broadcast"}
    check("ep_named_kernel", ops == set(want), "collectives on the kernels: %s" % sorted(ops))
    r = report(tscope, out)
    cats = {k["name"]: k["category"] for k in r["top_kernels"]}
    check("ep_named_kernel", cats.get("ep_exchange_kernel") == "communication",
          "ep_exchange_kernel is %s" % cats.get("ep_exchange_kernel"))
    got = {c["op"] for c in r["collectives"] if c["count"] > 0}
    check("ep_named_kernel", set(want.values()) <= got, "collectives listed: %s" % sorted(got))


def main(argv):
    tscope, corpus = argv[1], os.environ.get("TSCOPE_PUBLIC_CORPUS") or argv[2]
    need = ["hpctrain_mi300_ddp4", "kineto_resnet50_workers0"]
    if not all(os.path.isdir(os.path.join(corpus, n)) for n in need):
        print("corpus %s absent: skipped" % corpus, file=sys.stderr)
        return 77
    with tempfile.TemporaryDirectory(prefix="tsc_evidence_") as work:
        one_rank_of_four(tscope, corpus, work)
        two_cycles(tscope, corpus, work)
        ep_named_kernel(tscope, corpus, work)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

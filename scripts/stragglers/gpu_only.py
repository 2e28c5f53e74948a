#!/usr/bin/env python3
"""GPU-only copies of the straggler study's converted traces.

    scripts/stragglers/gpu_only.py IN_DIR OUT_DIR [--p2p pair|peer]

What torch.profiler writes with activities=[ProfilerActivity.CUDA]: the GPU
records only (kernels, copies, memsets), no CPU operators, no runtime calls,
no ProfilerStep ranges.  PyTorch puts a collective's metadata on its NCCL
kernel instead of a record_param_comms CPU op; this script does the same,
moving each record_param_comms' arguments to the kernel it launched (joined
by the runtime call's correlation id, which the copy then drops).

Point-to-point calls, as --p2p asks:
  pair  each send/recv on a communicator of the two ranks that exchange
        (what NCCL's p2p over a two-rank subgroup records), with no
        Src/Dst Rank: the peer is the group's other member;
  peer  the pipeline's communicator as recorded, the peer only in the
        kernel's own "Dst Rank" / "Src Rank".

Every kernel's name, stream, start and duration are kept exactly.
"""
import gzip
import json
import os
import sys

P2P_KEYS = ("Dst Rank", "Src Rank")


def convert(src, dst, mode):
    with gzip.open(src, "rt") as f:
        trace = json.load(f)
    me = trace.get("distributedInfo", {}).get("rank")
    events = trace["traceEvents"]
    # runtime call correlation -> the record_param_comms around it (same thread)
    comms = {}
    for e in events:
        if e.get("ph") == "X" and e.get("name") == "record_param_comms":
            comms.setdefault((e["pid"], e["tid"]), []).append(e)
    for v in comms.values():
        v.sort(key=lambda e: e["ts"])
    meta_of_corr = {}
    for e in events:
        if e.get("cat") != "cuda_runtime":
            continue
        for c in comms.get((e["pid"], e["tid"]), ()):
            if c["ts"] <= e["ts"] <= c["ts"] + c.get("dur", 0):
                meta_of_corr[e["args"]["correlation"]] = c["args"]
    out = []
    for e in events:
        if e.get("ph") == "M":
            out.append(e)
            continue
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        e = json.loads(json.dumps(e))
        meta = meta_of_corr.get(e["args"].get("correlation"))
        if meta is not None:
            meta = dict(meta)
            name = meta.get("Collective name")
            if name in ("send", "recv") and mode == "pair":
                peer = meta.get("Dst Rank", meta.get("Src Rank"))
                lo, hi = sorted((me, peer))
                for k in P2P_KEYS:
                    meta.pop(k, None)
                meta["Group size"] = 2
                meta["Process Group Name"] = "p2p_%d_%d" % (lo, hi)
                meta["Process Group Ranks"] = "[%d, %d]" % (lo, hi)
                meta.pop("Seq", None)   # a new communicator counts its own calls
            e["args"].update(meta)
        out.append(e)
    trace["traceEvents"] = out
    with gzip.open(dst, "wt") as f:
        json.dump(trace, f, separators=(",", ":"))


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    src_dir, dst_dir = argv[1], argv[2]
    mode = argv[4] if len(argv) > 4 and argv[3] == "--p2p" else "pair"
    if mode not in ("pair", "peer"):
        print("gpu_only.py: --p2p pair|peer", file=sys.stderr)
        return 2
    os.makedirs(dst_dir, exist_ok=True)
    names = sorted(n for n in os.listdir(src_dir) if n.endswith(".json.gz"))
    if not names:
        print("gpu_only.py: no traces in %s" % src_dir, file=sys.stderr)
        return 1
    for n in names:
        convert(os.path.join(src_dir, n), os.path.join(dst_dir, n), mode)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

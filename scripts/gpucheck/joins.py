"""NCCL calls tied to the GPU work they launched, from `dump --json`.

A GPU record (kernel, copy, memset) and the host call that launched it
share a CUPTI correlation id.  In full mode almost every kernel is folded
with its launch into one `kernel_launch` record (the launching thread in
`tid`, the call in `launch`); a kernel whose call never came is a plain
`kernel` record, and copies and memsets have their call in an `api`
record.  In light mode the launch calls NCCL makes are `api` records
without a kernel.

A unit of work belongs to an NCCL call
  * by correlation: tscope pushes an external correlation id during each
    NCCL call (TSC_EXTCORR_ID(desc, seq)); CUPTI's EXTCORR record ties it
    to the launch.  Once a kernel is folded with its launch the record is
    dropped (cupti/launch_fold.h), so this way finds copies and unfolded
    launches;
  * by thread and time: the launch call ran on the NCCL call's thread,
    inside the call.  This is how work NCCL launches through the runtime
    is found (at world size 1 an AVG all-reduce is a `oneRankReduce`
    kernel launched with cudaLaunchKernel: no "nccl" in its name), and how
    the analyzer joins folded kernels.
No name is used: a join that needs a kernel's name would miss exactly the
kernels the check exists for.
"""

import collections

# NCCL calls that make no GPU work of their own.
HOST_ONLY_OPS = {"CommInitRank", "CommInitRankConfig", "CommInitAll", "CommSplit",
                 "CommDestroy", "CommAbort", "CommFinalize", "GroupStart", "GroupEnd",
                 "CommRegister", "CommDeregister", "none"}

Work = collections.namedtuple("Work", "kind record correlation tid call_start call_end")


def is_launch_call(name):
    return "Launch" in (name or "")


def gpu_work(d):
    """Every kernel, copy, memset and unfolded launch call of the dump,
    each with the thread and span of the call that made it (None where
    that call was not recorded)."""
    api = {a["correlation"]: a for a in d["api"]}
    out = []
    for k in d["kernel_launch"]:
        call = k.get("launch") or {}
        out.append(Work("kernel", k, k.get("correlation"), k.get("tid"), call.get("start_ns"),
                        call.get("end_ns")))
    for kind, records in (("kernel", d["kernel"]), ("copy", d["memcpy"]),
                          ("memset", d["memset"])):
        for r in records:
            a = api.get(r.get("correlation"), {})
            out.append(Work(kind, r, r.get("correlation"), a.get("tid"), a.get("start_ns"),
                            a.get("end_ns")))
    for a in d["api"]:
        if is_launch_call(a.get("name")):
            out.append(Work("launch", a, a.get("correlation"), a.get("tid"), a.get("start_ns"),
                            a.get("end_ns")))
    return out


def device_calls(d):
    """The NCCL calls that may make GPU work, in the dump's order."""
    return [n for n in d["nccl"] if n.get("op") not in HOST_ONLY_OPS]


def _ext_by_correlation(d):
    """CUPTI correlation id -> seq of the NCCL call whose external id CUPTI
    tied to it (bit 63 set: tscope's own ids)."""
    out = {}
    for e in d["extcorr"]:
        ext = int(e["external_id"], 16)
        if ext >> 63:
            out[e["correlation"]] = ext & 0xFFFFFFFF
    return out


def _inside(call, w):
    return (w.tid == call.get("tid") and w.call_start is not None
            and call["start_ns"] <= w.call_start <= call["end_ns"])


def join(d):
    """[(call, [(work, how)])] for every NCCL call of device_calls(d); how
    is "correlation" or "thread+time"."""
    calls = device_calls(d)
    by_thread = collections.defaultdict(list)
    for i, c in enumerate(calls):
        by_thread[c.get("tid")].append(i)
    ext = _ext_by_correlation(d)
    found = [[] for _ in calls]
    for w in gpu_work(d):
        seq = ext.get(w.correlation)
        hit = None
        if seq is not None:
            same = [i for i, c in enumerate(calls) if c.get("seq") == seq]
            inside = [i for i in same if _inside(calls[i], w)]
            hit = (inside or same or [None])[0]
            how = "correlation"
        if hit is None:
            inside = [i for i in by_thread.get(w.tid, ()) if _inside(calls[i], w)]
            hit = inside[0] if inside else None
            how = "thread+time"
        if hit is not None:
            found[hit].append((w, how))
    return list(zip(calls, found))


def key_of(call):
    """What an expectation names a call by: "AllReduce/avg", "AllGather"."""
    op, redop = call.get("op"), call.get("redop")
    return f"{op}/{redop}" if redop and redop != "none" else op


def tally(joined, expect):
    """expect: {key_of(call): work kind ("kernel", "copy", "launch")}.
    Returns {key: (calls, calls joined to work of that kind, how counts)}."""
    out = {}
    for key, kind in expect.items():
        mine = [(c, ws) for c, ws in joined if key_of(c) == key or c.get("op") == key]
        ok = [ws for c, ws in mine if any(w.kind == kind for w, _ in ws)]
        how = collections.Counter(h for ws in ok for w, h in ws if w.kind == kind)
        out[key] = (len(mine), len(ok), dict(how))
    return out

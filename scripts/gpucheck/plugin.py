"""Checks of tscope as NCCL's profiler plugin with the real NCCL
(docs/nccl-plugin.md, "What a GPU run must still confirm"): the version
NCCL chose, nothing lost, every plugin collective joined to its call,
kernel channels with GPU times, graph-captured calls and their replays.
They read `tscope-report --json` (its "nccl_plugin" object) and the
dump's metadata only."""

import json

from . import tscope_out


def expected_version(nccl):
    """The plugin ABI an NCCL "2.28.9" asks for first: 6 from 2.29, 5 for
    2.28, 4 for 2.27, 3 for 2.25-2.26, 2 for 2.24, 1 for 2.23, 0 before."""
    try:
        major, minor = (int(x) for x in str(nccl).split(".")[:2])
    except ValueError:
        return None
    if major != 2 or minor < 23:
        return 0 if major <= 2 else 6
    return {23: 1, 24: 2, 25: 3, 26: 3, 27: 4, 28: 5}.get(minor, 6)


def plugin_json(report, dumps):
    """The report's "nccl_plugin" object (None when absent) and the exit
    status."""
    j, rc = tscope_out.report_json(report, dumps, "--json")
    return (j.get("nccl_plugin") if isinstance(j, dict) else None), rc


def loaded(v, name, meta, nccl, mode):
    """The dump's nccl_profiler key names the version this NCCL asks for."""
    want = expected_version(nccl)
    got = str(meta.get("nccl_profiler"))
    if want == 0:
        return v.check(got.startswith("not loaded"), f"{name}: NCCL {nccl} has no plugin "
                       "interface: the dump says so", got, "WARN")
    return v.check(got == f"v{want} {mode}", f"{name}: NCCL {nccl} loaded tscope as its "
                   f"profiler plugin (v{want} {mode})", f"nccl_profiler = {got}")


def records(v, name, p, ranks, graph=False):
    """What the plugin recorded, against the calls; graph: a step was
    captured into a CUDA graph (v5+ marks the calls, replays have none)."""
    if not v.check(p is not None, f"{name}: report has nccl_plugin", "absent" if p is None
                   else ""):
        return
    v.info(f"{name}: plugin", ", ".join(f"{k} {p.get(k)}" for k in (
        "version_max", "collectives", "ce_collectives", "send_recv", "joined", "without_call",
        "captured_calls", "kernel_channels", "kernel_us_median", "proxy_ops", "pxn_proxy_ops")))
    colls, joined, lone = p.get("collectives", 0), p.get("joined", 0), p.get("without_call", 0)
    if colls == 0 and ranks == 1:
        # On one GPU NCCL returns from a collective before it calls the
        # profiler plugin: nothing recorded proves nothing, either way.
        v.add("WARN", f"{name}: the plugin's records not checked",
              "NCCL reported no collective to the plugin (one GPU: it returns before calling "
              "the plugin); 'nothing lost' and 'every collective joined' would hold vacuously")
        return
    v.check(p.get("events_lost") == 0, f"{name}: no plugin event lost",
            f"events_lost {p.get('events_lost')}")
    v.check(joined + lone == colls, f"{name}: every plugin collective joined its NCCL call or "
            "is a replay", f"{joined} joined + {lone} without a call of {colls}")
    if ranks > 1:
        v.check(colls > 0, f"{name}: collectives reported", str(colls))
        if p.get("version_max", 0) >= 4:
            v.check(p.get("kernel_channels", 0) > 0 and (p.get("kernel_us_median") or 0) > 0,
                    f"{name}: kernel channels with GPU times",
                    f"{p.get('kernel_channels')} channels, median {p.get('kernel_us_median')} "
                    "us per collective")
    if graph and p.get("version_max", 0) >= 5:
        v.check(p.get("captured_calls", 0) > 0, f"{name}: NCCL marked the captured calls",
                str(p.get("captured_calls")), "WARN" if ranks < 2 else "FAIL")
    if graph and ranks > 1:
        v.check(lone > 0 and p.get("graph_replays"), f"{name}: replayed collectives seen "
                "without a call, with their steps", json.dumps(p.get("graph_replays", [])[:2]))

"""Reading what tscope wrote, through tscope-report's JSON only.

gpu-check never parses the binary dump: `tscope-report info --json`,
`dump --json --descs` and `trace --no-analysis` are the interfaces.  In
full mode a kernel and its launch are one `kernel_launch` record
(Dump.kernels, Dump.launch_of); loss counters are found by name
(loss_counters, marked "UPDATE WHEN").
"""

import collections
import json
import subprocess


class ReportError(Exception):
    pass


def run_report(report, *args, timeout=600):
    return subprocess.run([report, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)


def report_json(report, *args):
    """`tscope-report ARGS` whose output is one JSON document: (the object,
    or None when the output is not JSON; the exit status)."""
    r = run_report(report, *args)
    try:
        return json.loads(r.stdout), r.returncode
    except json.JSONDecodeError:
        return None, r.returncode


def info(report, path):
    """`tscope-report info --json PATH`: (files, exit status)."""
    r = run_report(report, "info", "--json", path)
    try:
        return json.loads(r.stdout).get("files", []), r.returncode
    except json.JSONDecodeError as e:
        raise ReportError(f"tscope-report info {path}: exit {r.returncode}, not JSON ({e}): "
                          f"{r.stderr.strip()[:300]}")


def loss_counters(info_file):
    """Every counter of lost data in one file of `info --json`: a dict
    name -> int, found by name anywhere in the object ("dropped", "lost",
    "missing", "skipped", "refused" in the key).

    UPDATE WHEN per-kind loss counters appear in `info`: they are picked
    up by name already; give them their own names here if they do not
    contain one of these words."""
    found = {}

    def walk(prefix, v):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else k, x)
        elif any(w in prefix.rsplit(".", 1)[-1] for w in ("dropped", "lost", "missing",
                                                          "skipped", "refused")):
            try:
                found[prefix] = int(v)
            except (TypeError, ValueError):
                pass

    walk("", info_file)
    # The same counter appears as metadata and as a top-level field.
    return {k: v for k, v in found.items()
            if not (k.startswith("meta.") and k[5:] in found)}


class Dump:
    """The records of one dump (or folder) from `dump --json --descs`."""

    def __init__(self, lines):
        self.meta = {}
        self.by_kind = collections.defaultdict(list)
        self.descs = {}
        for line in lines:
            if not line.strip():
                continue
            r = json.loads(line)
            kind = r.get("kind")
            if kind == "meta":
                self.meta[r["key"]] = r["value"]  # END after META: the last value wins
            elif kind == "desc":
                self.descs[(r.get("rank"), r["id"])] = r
            else:
                self.by_kind[kind].append(r)

    def __getitem__(self, kind):
        return self.by_kind.get(kind, [])

    def kernels(self):
        """Every kernel: in full mode almost all are folded with their
        launch (`kernel_launch`); `kernel` holds those whose call never
        came, and NCCL's in light mode."""
        return self["kernel_launch"] + self["kernel"]

    def gpu(self):
        return self.kernels() + self["memcpy"] + self["memset"]

    def thread_names(self):
        return {d["thread_tid"]: d.get("name", "") for d in self.descs.values()
                if d.get("type") == "thread"}

    def launch_of(self):
        """correlation id -> the call that launched it: {tid, name,
        start_ns, end_ns}, from a folded kernel's own `launch` or from an
        API record."""
        out = {a["correlation"]: a for a in self["api"]}
        for k in self["kernel_launch"]:
            call = dict(k.get("launch") or {}, tid=k.get("tid"))
            out.setdefault(k.get("correlation"), call)
        return out

    def nccl_correlations(self):
        """CUPTI correlation ids of launches made inside an NCCL call: the
        external ids tscope pushes are TSC_EXTCORR_ID(desc, seq) with bit
        63 set, desc in bits 32..62 naming an nccl_call descriptor."""
        nccl_descs = {i for (_, i), d in self.descs.items() if d.get("type") == "nccl_call"}
        out = set()
        for e in self["extcorr"]:
            ext = int(e["external_id"], 16)
            if ext >> 63 and (ext >> 32) & 0x7FFFFFFF in nccl_descs:
                out.add(e["correlation"])
        return out


def dump(report, path):
    r = run_report(report, "dump", "--json", "--descs", path)
    if r.returncode == 2:
        raise ReportError(f"tscope-report dump {path}: {r.stderr.strip()[:300]}")
    return Dump(r.stdout.splitlines()), r.returncode, r.stderr


def export_trace(report, src, out):
    """`tscope-report trace SRC --no-analysis`: the dump's or the
    torch.profiler trace's records in one Chrome-trace shape, kernels with
    the analyzer's own category (core/kernel_category.c).  Returns
    (events, origin_ns): ts/dur in microseconds from origin_ns."""
    r = run_report(report, "trace", src, "-o", out, "--no-analysis")
    if r.returncode == 2:
        raise ReportError(f"tscope-report trace {src}: {r.stderr.strip()[:300]}")
    with open(out) as f:
        doc = json.load(f)
    return doc["traceEvents"], int(doc["otherData"]["origin_ns"])

#!/usr/bin/env python3
"""Real PyTorch (CPU) under LD_PRELOAD=libtscope_preload.so.

    torch_case.py CASE

Each case runs a job twice, without and with the preload, with the same
seeds, and checks that the preload changed nothing the job can see:
bitwise the same losses, the same stderr (the preload prints nothing),
the same exit status; that DataLoader worker processes (forked, and
spawned: fork + exec) ran, ended and wrote no dump; and that dumps
appear exactly where something records:

  loader     one process, 2 forked + 2 spawned DataLoader workers, a few
             steps under torch.profiler (CPU): no NCCL, no CUDA, so no dump
             and no output folder at all.
  threads    the same job with 8 intra-op threads on this small machine.
  gloo       2 ranks started by hand (env://), DDP over gloo, DataLoader
             workers: no dump.
  gloo_nccl  the same under torchrun, and the ranks also all-reduce
             through the test bed's NCCL: one dump per rank, readable by
             `tscope-report info`, closed cleanly, with every NCCL call;
             none from the launcher or the DataLoader workers.
  sigterm    gloo_nccl stopped by SIGTERM to torchrun halfway: the job
             ends (no hang) with the exit status it has without the
             preload, no process is left behind, and each rank's dump is
             readable and ends with end_reason signal:15.
  sigterm_group  the same with SIGTERM to every process of the job.
  sigterm_graceful  the ranks catch SIGTERM (Python handler), finish the
             step and exit 0: the dump records what follows the signal.
  handler_term, handler_int, handler_term_nohelper  (no torch needed) one
             recording Python process starts a helper program, then gets
             SIGTERM (own handler) or SIGINT (KeyboardInterrupt): its own
             handling runs as without the preload.

Environment (set by tests/torch/meson.build): TORCH_PRELOAD (the preload),
TORCH_REPORT (tscope-report), TORCH_FAKENCCL (the test NCCL library),
TORCH_ASAN_RUNTIME (an ASan build: its runtime goes first in LD_PRELOAD).
Exit 77 (skip) when no Python here has torch
(Debian: apt-get install python3-torch).
"""

import collections
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
JOB_TIMEOUT_S = 100  # generous: a loaded 2-core machine runs a torchrun job in 10-40 s


class CaseFailed(Exception):
    pass


def check(ok, what):
    if not ok:
        raise CaseFailed(what)


def torch_python():
    """The first interpreter that has torch, or None.  The Python first on
    PATH may be a private one without Debian's packages.  (find_spec: an
    import would cost seconds per test.)"""
    seen = []
    for py in (os.environ.get("TSCOPE_TORCH_PYTHON"), sys.executable, "/usr/bin/python3",
               shutil.which("python3")):
        if not py or py in seen or not os.access(py, os.X_OK):
            continue
        seen.append(py)
        probe = subprocess.run([py, "-c", "import importlib.util as u; "
                                "assert u.find_spec('torch.distributed')"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        if probe.returncode == 0:
            return py
    return None


class Job:
    """One run of a job, with or without the preload, in its own folder."""

    def __init__(self, work, name, preload):
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir)
        self.preload = preload
        self.out = os.path.join(self.dir, "tscope_out")
        self.pids = os.path.join(self.dir, "pids")
        self.result = os.path.join(self.dir, "result.json")
        self.progress = os.path.join(self.dir, "progress")

    def env(self):
        env = dict(os.environ)
        for k in [k for k in env if k.startswith("TSCOPE_")]:
            del env[k]
        # The job itself must not see a torchrun of an enclosing job.
        for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
            env.pop(k, None)
        libs = []
        if os.environ.get("TORCH_ASAN_RUNTIME"):
            # An ASan build: its runtime goes first in both runs (the test
            # NCCL is instrumented too).  Python and torch keep memory until
            # exit on purpose; only the preload's own errors matter here.
            libs.append(os.environ["TORCH_ASAN_RUNTIME"])
            env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1"
        if self.preload:
            libs.append(os.environ["TORCH_PRELOAD"])
            env["TSCOPE_OUT"] = self.out
        if libs:
            env["LD_PRELOAD"] = ":".join(libs)
        else:
            env.pop("LD_PRELOAD", None)
        return env

    def start(self, argv):
        self.stderr_path = os.path.join(self.dir, "stderr")
        self.stdout_path = os.path.join(self.dir, "stdout")
        with open(self.stdout_path, "w") as so, open(self.stderr_path, "w") as se:
            # Own session: on a hang the whole tree is killed, not just the
            # process we started.
            self.proc = subprocess.Popen(argv, cwd=self.dir, env=self.env(), stdout=so,
                                         stderr=se, start_new_session=True)
        return self

    def wait(self, timeout=JOB_TIMEOUT_S):
        try:
            self.rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise CaseFailed(f"{self.dir}: job still running after {timeout} s (hang)")
        with open(self.stderr_path) as f:
            self.stderr = f.read()
        return self

    def run(self, argv):
        return self.start(argv).wait()

    def results(self, suffix=""):
        path = self.result + suffix
        check(os.path.exists(path), f"{path} missing: the job did not finish its work "
              f"(exit {self.rc})\n{self.stderr[-3000:]}")
        with open(path) as f:
            return json.load(f)

    def dumps(self):
        found = []
        for root, _, files in os.walk(self.dir):
            found += [os.path.join(root, f) for f in files if f.endswith(".tsd")]
        return sorted(found)

    def steps_done(self):
        """Steps rank 0 has finished (jobkit.note_progress)."""
        if not os.path.exists(self.progress):
            return 0
        with open(self.progress) as f:
            return len(f.read().split())

    def recorded_pids(self, prefix=""):
        """Processes of the job that left their pid (jobkit.note_pid)."""
        names = os.listdir(self.pids) if os.path.isdir(self.pids) else []
        return sorted(int(n.rsplit("-", 1)[-1]) for n in names if n.startswith(prefix))


def alive(pid):
    """Running (a zombie waiting for its reaper counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def check_all_ended(pids, what, grace_s=12):
    """DataLoader workers notice a dead parent within about 5 s."""
    deadline = time.monotonic() + grace_s
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = [p for p in left if alive(p)]
    check(not left, f"{what}: processes {left} still running {grace_s} s after the job ended")


def check_silent(base, pre):
    """The preload prints nothing: stderr as without it."""
    check(pre.stderr == base.stderr,
          "stderr differs with the preload:\n--- without\n" + base.stderr[-2000:] +
          "\n--- with\n" + pre.stderr[-2000:])


def check_no_dump(job):
    check(not job.dumps(), f"dumps written by a job that never records: {job.dumps()}")
    check(not os.path.exists(job.out),
          f"{job.out} was created by a job that never records")


def report(*args):
    r = subprocess.run([os.environ["TORCH_REPORT"], *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    return r


def loader_argv(py, job, *extra):
    return [py, os.path.join(HERE, "loader_job.py"), "--result", job.result,
            "--pid-dir", job.pids, *extra]


def torchrun_argv(py, job, *extra):
    # Port 0: the rendezvous store takes a free port (tests run in
    # parallel; --standalone would always use 29400).  -r 2 -t 2: torchrun
    # of Debian's torch 1.13 fails on Python 3.11 with its default "0"
    # redirects (IntFlag iteration); 2 tees the workers' stderr.
    return [py, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "2",
            "--rdzv_backend", "c10d", "--rdzv_endpoint", "127.0.0.1:0",
            "-r", "2", "-t", "2", "--log_dir", os.path.join(job.dir, "logs"),
            os.path.join(HERE, "gloo_job.py"), "--result", job.result, "--pid-dir", job.pids,
            *extra]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def two_ranks_argv(py, job, *extra):
    """The ranks started by hand, as a job script does without torchrun:
    RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (init through env://)."""
    port = free_port()
    rank = " ".join(shlex.quote(a) for a in [
        py, os.path.join(HERE, "gloo_job.py"), "--result", job.result, "--pid-dir", job.pids,
        *extra])
    env = f"WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT={port}"
    return ["sh", "-c", f"{env} RANK=0 LOCAL_RANK=0 {rank} & a=$!; "
                        f"{env} RANK=1 LOCAL_RANK=1 {rank} & b=$!; "
                        "wait $a; ra=$?; wait $b; rb=$?; [ $ra -eq 0 ] && exit $rb; exit $ra"]


def check_ok(*jobs):
    for j in jobs:
        check(j.rc == 0, f"{j.dir}: exit status {j.rc}\n{j.stderr[-3000:]}")


def same_results(base, pre, suffix="", ignore=("main_pid", "worker_pids", "spawn_worker_pids",
                                              "rank_pid")):
    a, b = base.results(suffix), pre.results(suffix)
    for k in a:
        if k in ignore:
            continue
        check(a[k] == b.get(k), f"result{suffix} '{k}' differs with the preload:\n"
              f"without {a[k]}\nwith    {b.get(k)}")
    return a, b


def run_pair(work, argv_of):
    """The same job without and then with the preload."""
    base, pre = Job(work, "without", False), Job(work, "with", True)
    base.run(argv_of(base))
    pre.run(argv_of(pre))
    return base, pre


def check_workers(res, main_pid, key, n, how):
    pids = res[key]
    check(len(pids) == n and main_pid not in pids,
          f"expected {n} {how} DataLoader worker processes, samples came from {pids} "
          f"(main {main_pid})")


TRAINING_OPS = ("aten::linear", "aten::gelu", "aten::layer_norm", "aten::tanh", "aten::mse_loss")


def training_ops(path):
    """torch.profiler's trace: how many times each op of the training step
    (forward, backward, optimizer, the step markers) was recorded.  Ops of
    the DataLoader's main side are left out: how many batches arrive inside
    the profiled steps depends on timing (seen under load: 6 against 3)."""
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return collections.Counter(
        e.get("name") for e in events if e.get("ph") == "X" and (
            e.get("name") in TRAINING_OPS or "Backward" in e.get("name", "")
            or e.get("name", "").startswith(("Optimizer.", "ProfilerStep#"))))


def case_loader(py, work):
    base, pre = run_pair(work, lambda j: loader_argv(
        py, j, "--profile", os.path.join(j.dir, "profile.json")))
    check_ok(base, pre)
    a, b = same_results(base, pre)
    check_silent(base, pre)
    check_no_dump(pre)
    for res, job in ((a, base), (b, pre)):
        check_workers(res, res["main_pid"], "worker_pids", 2, "forked")
        check_workers(res, res["main_pid"], "spawn_worker_pids", 2, "spawned")
        check_all_ended(res["worker_pids"] + res["spawn_worker_pids"], job.dir)
    names = [training_ops(os.path.join(j.dir, "profile.json")) for j in (base, pre)]
    check(names[0]["Optimizer.step#Adam.step"] == 2 and names[0] == names[1],
          f"torch.profiler's training ops differ: {names[0] - names[1]} only without, "
          f"{names[1] - names[0]} only with the preload")
    return f"{len(a['losses'])} steps, {sum(names[0].values())} profiled training ops, workers " \
           f"{b['worker_pids']} + spawned {b['spawn_worker_pids']}"


def case_threads(py, work):
    base, pre = run_pair(work, lambda j: loader_argv(py, j, "--threads", "8",
                                                     "--spawn-workers", "0"))
    check_ok(base, pre)
    a, b = same_results(base, pre)
    check_silent(base, pre)
    check_no_dump(pre)
    check(b["intra_op_threads"] == 8 and b["max_threads"] >= 9,
          f"the job ran {b['intra_op_threads']} intra-op threads, "
          f"{b['max_threads']} threads in all: expected 8 and at least 9")
    return f"{b['max_threads']} threads in the training process"


def gloo_pair(py, work, launch, *extra):
    base, pre = run_pair(work, lambda j: launch(py, j, *extra))
    check_ok(base, pre)
    for r in (".0", ".1"):
        a, _ = same_results(base, pre, r)
        check(len(a["worker_pids"]) == 2, f"rank{r}: samples from {a['worker_pids']}, "
              f"expected 2 DataLoader workers")
    check_silent(base, pre)
    for j in (base, pre):
        check_all_ended(j.recorded_pids(), j.dir)
    return base, pre


def case_gloo(py, work):
    base, pre = gloo_pair(py, work, two_ranks_argv)
    check_no_dump(pre)
    return f"{len(pre.results('.0')['losses'])} steps on 2 ranks, " \
           f"{len(pre.recorded_pids())} processes, no dump"


def info_of(path):
    r = report("info", "--json", path)
    check(r.returncode == 0, f"tscope-report info {path}: exit {r.returncode}\n{r.stderr}")
    f = json.loads(r.stdout)["files"][0]
    check(f["status"] == "ok" and not f["problems"],
          f"{path}: status {f['status']}, problems {f['problems']}")
    return f


def nccl_ops(path):
    r = report("dump", "--json", path)
    check(r.returncode == 0, f"tscope-report dump {path}: exit {r.returncode}\n{r.stderr}")
    ops = {}
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("kind") == "nccl":
            check(rec["result"] == 0, f"{path}: NCCL call failed in the dump: {rec}")
            ops[rec["op"]] = ops.get(rec["op"], 0) + 1
    return ops


def check_rank_dumps(job, rank_pids, end_reason):
    """One dump per rank, none from any other process."""
    dumps = job.dumps()
    check(len(dumps) == 2, f"expected one dump per rank, found {dumps}")
    infos = [info_of(d) for d in dumps]
    by_pid = {int(i["header_pid"]): i for i in infos}
    check(sorted(by_pid) == sorted(rank_pids),
          f"dumps from processes {sorted(by_pid)}, expected the ranks {sorted(rank_pids)} "
          f"only (launcher and DataLoader workers never record)")
    for i in infos:
        check(i["meta"].get("end_reason") == end_reason and i["clean_end"],
              f"{i['path']}: end_reason {i['meta'].get('end_reason')}, clean "
              f"{i['clean_end']}, expected {end_reason}")
        check(i["dropped_events"] == 0, f"{i['path']}: {i['dropped_events']} events dropped")
    return dumps


def case_gloo_nccl(py, work):
    steps = 16
    base, pre = gloo_pair(py, work, torchrun_argv, "--steps", str(steps), "--nccl", os.environ["TORCH_FAKENCCL"])
    res = [pre.results(r) for r in (".0", ".1")]
    check(sorted(r["rank_pid"] for r in res) == pre.recorded_pids("rank-"),
          "rank pids in the results and the pid folder differ")
    dumps = check_rank_dumps(pre, pre.recorded_pids("rank-"), "exit")
    for d in dumps:
        ops = nccl_ops(d)
        want = {"CommInitRank": 1, "AllReduce": steps, "CommDestroy": 1}
        check(ops == want, f"{d}: NCCL calls {ops}, expected {want}")
    return f"{steps} steps on 2 ranks, 2 dumps, {len(pre.recorded_pids())} processes"


def sigterm_halfway(py, work, group, graceful=False):
    """SIGTERM once rank 0 has done a few steps: to torchrun alone (as a
    container runtime stops its first process), or to every process of the
    job (as a batch scheduler cancels a job step), DataLoader workers
    included."""
    jobs = []
    for name, preload in (("without", False), ("with", True)):
        j = Job(work, name, preload)
        j.start(torchrun_argv(py, j, "--steps", "400", "--progress", j.progress,
                              "--nccl", os.environ["TORCH_FAKENCCL"],
                              *(["--stop-on-sigterm"] if graceful else [])))
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while time.monotonic() < deadline and j.proc.poll() is None and j.steps_done() < 5:
            time.sleep(0.05)
        if j.steps_done() < 5 or j.proc.poll() is not None:
            if j.proc.poll() is None:
                os.killpg(j.proc.pid, signal.SIGKILL)
            raise CaseFailed(f"{j.dir}: no 5 steps done within {JOB_TIMEOUT_S} s, or the "
                             f"job ended before the signal (exit {j.proc.wait()}, "
                             f"{j.steps_done()} steps)\n{open(j.stderr_path).read()[-3000:]}")
        if group:
            os.killpg(j.proc.pid, signal.SIGTERM)
        else:
            j.proc.send_signal(signal.SIGTERM)
        j.wait(timeout=40)
        jobs.append(j)
    base, pre = jobs
    check(pre.rc == base.rc, f"exit status {pre.rc} with the preload, {base.rc} without")
    check("tscope" not in pre.stderr, "the preload printed:\n" + pre.stderr[-2000:])
    for j in jobs:
        check_all_ended(j.recorded_pids(), j.dir)
    if graceful:
        return graceful_ending(base, pre)
    for d in check_rank_dumps(pre, pre.recorded_pids("rank-"), "signal:15"):
        n = nccl_ops(d).get("AllReduce", 0)
        check(n >= 5, f"{d}: {n} AllReduce records, rank 0 had done 5 steps at the signal")
    return f"stopped after {pre.steps_done()} steps (exit {pre.rc}, as without: {base.rc})"


def graceful_ending(base, pre):
    """The ranks caught SIGTERM, finished the step and exited 0: the same
    losses up to where the shorter run stopped, and the dump goes on after
    the signal (its last END says exit) with every NCCL call made."""
    for r in (".0", ".1"):
        a, b = base.results(r), pre.results(r)
        n = min(len(a["losses"]), len(b["losses"]))
        check(n >= 5 and a["losses"][:n] == b["losses"][:n],
              f"rank{r}: losses differ with the preload (first {n} steps)")
    dumps = check_rank_dumps(pre, pre.recorded_pids("rank-"), "exit")
    for d in dumps:
        i = info_of(d)
        res = pre.results("." + i["meta"]["rank"])
        ops = nccl_ops(d)
        want = {"CommInitRank": 1, "AllReduce": len(res["nccl_sums"]), "CommDestroy": 1}
        check(ops == want and i["meta"].get("exit_code") == "0",
              f"{d}: NCCL calls {ops}, exit code {i['meta'].get('exit_code')}; "
              f"expected {want} and 0")
    return f"stopped after {len(pre.results('.0')['losses'])} steps, exit {pre.rc} " \
           f"(without: {base.rc})"


def own_handler(py, work, which, *extra):
    """handler_job.py: the application's own signal handling runs, with
    and without the preload, and the dump goes on after the signal."""
    base, pre = run_pair(work, lambda j: [py, os.path.join(HERE, "handler_job.py"),
                                          os.environ["TORCH_FAKENCCL"], which, *extra])
    out = [open(j.stdout_path).read().strip() for j in (base, pre)]
    check(base.rc == 0, f"without the preload: exit {base.rc} ({out[0]})\n{base.stderr}")
    check(pre.rc == base.rc and out[1] == out[0],
          f"with the preload the job ends with exit status {pre.rc} and prints "
          f"'{out[1]}'; without it {base.rc} and '{out[0]}'")
    check_silent(base, pre)
    dumps = pre.dumps()
    check(len(dumps) == 1, f"expected one dump, found {dumps}")
    i = info_of(dumps[0])
    ops = nccl_ops(dumps[0])
    check(i["meta"].get("end_reason") == "exit" and ops.get("AllReduce") == 2,
          f"{dumps[0]}: end_reason {i['meta'].get('end_reason')}, {ops}: expected exit and "
          f"2 AllReduce (one after the signal)")
    return out[1]


# name: (function, needs torch)
CASES = {
    "loader": (case_loader, True),
    "threads": (case_threads, True),
    "gloo": (case_gloo, True),
    "gloo_nccl": (case_gloo_nccl, True),
    "sigterm": (lambda py, work: sigterm_halfway(py, work, group=False), True),
    "sigterm_group": (lambda py, work: sigterm_halfway(py, work, group=True), True),
    "sigterm_graceful": (lambda py, work: sigterm_halfway(py, work, False, graceful=True), True),
    "handler_term": (lambda py, work: own_handler(py, work, "term"), False),
    "handler_int": (lambda py, work: own_handler(py, work, "int"), False),
    "handler_term_nohelper": (lambda py, work: own_handler(py, work, "term", "nohelper"), False),
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: {sys.argv[0]} {{{'|'.join(CASES)}}}", file=sys.stderr)
        return 2
    for var in ("TORCH_PRELOAD", "TORCH_REPORT", "TORCH_FAKENCCL"):
        if not os.path.exists(os.environ.get(var, "")):
            print(f"SKIP: {var} not set or missing (preload or test bed not built)")
            return SKIP
    run, needs_torch = CASES[sys.argv[1]]
    py = torch_python() if needs_torch else sys.executable
    if not py:
        print("SKIP: no python3 here has torch (apt-get install python3-torch)")
        return SKIP
    work = tempfile.mkdtemp(prefix=f"tscope-torch-{sys.argv[1]}-")
    t0 = time.monotonic()
    try:
        what = run(py, work)
    except CaseFailed as e:
        print(f"FAIL {sys.argv[1]}: {e}\n(work folder kept: {work})")
        return 1
    print(f"ok {sys.argv[1]} ({py}, {time.monotonic() - t0:.1f} s): {what}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

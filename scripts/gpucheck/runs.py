"""Building tscope on the GPU machine and running scripts/train_gpt.py.

The GPU machine has no network: meson and ninja may be missing.  Found in
this order: on PATH; meson as the Python module `mesonbuild` and ninja as
the `ninja` Python package (PyTorch installs often have it for C++
extensions).  Without them, --prebuilt DIR uses a folder made on another
machine with `gpu-check --pack DIR` (the preload and tscope-report, plus
the libcjson/libyajl they need; glibc 2.34 or newer)."""

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time


class BuildError(Exception):
    pass


class OutOfTime(Exception):
    """The single-call mode's deadline leaves no time for another run."""


MIN_RUN_S = 8  # the shortest train_gpt.py run: Python, torch and NCCL start


def _python_module_tool(module, probe):
    r = subprocess.run([sys.executable, "-c", probe], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def find_meson():
    if shutil.which("meson"):
        return [shutil.which("meson")]
    if _python_module_tool("mesonbuild", "import mesonbuild; print('ok')"):
        return [sys.executable, "-m", "mesonbuild.mesonmain"]
    return None


def find_ninja():
    if shutil.which("ninja"):
        return shutil.which("ninja")
    return _python_module_tool("ninja", "import ninja, os; "
                               "print(os.path.join(ninja.BIN_DIR, 'ninja'))")


def build(root, build_dir, log_dir, jobs=None):
    """meson setup (-Dcupti=enabled, release) + ninja.  Returns (preload,
    report, how); raises BuildError with the log's tail."""
    meson, ninja = find_meson(), find_ninja()
    if not meson or not ninja:
        raise BuildError(f"meson {'found' if meson else 'missing'}, ninja "
                         f"{'found' if ninja else 'missing'}: use --prebuilt DIR "
                         "(made with `scripts/gpu-check --pack DIR` on a machine that builds)")
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(ninja) + os.pathsep + env.get("PATH", "")
    env["NINJA"] = ninja
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        toolkit = [f"-Dcudatoolkit={os.environ['CUDA_HOME']}"] if os.environ.get("CUDA_HOME") \
            else []
        _logged(meson + ["setup", build_dir, "-Dcupti=enabled", "--buildtype=release", *toolkit],
                os.path.join(log_dir, "setup.log"), root, env)
    _logged([ninja, "-C", build_dir] + ([f"-j{jobs}"] if jobs else []),
            os.path.join(log_dir, "build.log"), root, env)
    return (os.path.join(build_dir, "preload", "libtscope_preload.so"),
            os.path.join(build_dir, "analyzer", "tscope-report"), "built here with meson")


def _logged(cmd, log, cwd, env):
    with open(log, "w") as f:
        r = subprocess.run(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode:
        with open(log) as f:
            tail = "".join(f.readlines()[-30:])
        raise BuildError(f"{' '.join(cmd[:3])}... failed (exit {r.returncode}); missing "
                         "-dev packages cannot be installed without network: use --prebuilt "
                         f"DIR from `scripts/gpu-check --pack DIR`.\n{tail}")


def use_prebuilt(prebuilt, work):
    """A --pack folder: the report runs through a wrapper that finds the
    bundled libraries."""
    preload = os.path.join(prebuilt, "libtscope_preload.so")
    real = os.path.join(prebuilt, "tscope-report")
    if not (os.path.exists(preload) and os.path.exists(real)):
        raise BuildError(f"{prebuilt}: no libtscope_preload.so / tscope-report")
    wrapper = os.path.join(work, "tscope-report")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\n"
                f"LD_LIBRARY_PATH='{os.path.join(prebuilt, 'lib')}'${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"
                f" exec '{real}' \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return os.path.abspath(preload), wrapper, f"prebuilt from {prebuilt}"


def pack(build_dir, dest):
    """Copy what the GPU machine needs when it cannot build."""
    os.makedirs(os.path.join(dest, "lib"), exist_ok=True)
    preload = os.path.join(build_dir, "preload", "libtscope_preload.so")
    report = os.path.join(build_dir, "analyzer", "tscope-report")
    for f in (preload, report):
        if not os.path.exists(f):
            raise BuildError(f"{f} missing: build first (meson setup {build_dir} && ninja -C "
                             f"{build_dir})")
        shutil.copy2(f, dest)
    nm = subprocess.run(["nm", "-D", "--defined-only", preload], stdout=subprocess.PIPE,
                        text=True).stdout
    if " InitializeInjection" not in nm:
        raise BuildError(f"{preload} was built without the CUPTI part (no CUDA 13 headers?)")
    ldd = subprocess.run(["ldd", report], stdout=subprocess.PIPE, text=True).stdout
    for line in ldd.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and ("cjson" in parts[0] or "yajl" in parts[0]):
            shutil.copy2(parts[1].split()[0], os.path.join(dest, "lib"))
    return sorted(os.listdir(dest)) + sorted(os.listdir(os.path.join(dest, "lib")))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Run:
    """One run of train_gpt.py in WORK/runs/NAME."""

    def __init__(self, work, name):
        self.name = name
        self.dir = os.path.join(work, "runs", name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.dumps = os.path.join(self.dir, "dumps")
        self.summary_path = os.path.join(self.dir, "summary.json")
        self.progress = os.path.join(self.dir, "progress")
        self.profile = os.path.join(self.dir, "trace")
        self.rc, self.stderr, self.summary, self.elapsed_s = None, "", None, 0.0
        self.wall0 = self.wall1 = 0  # CLOCK_REALTIME ns around the process
        self.env_note, self.hung, self.cut = "", False, False

    def dump_files(self):
        return sorted(glob.glob(os.path.join(self.dumps, "*.tsd")))

    def steps_done(self):
        if not os.path.exists(self.progress):
            return 0
        with open(self.progress) as f:
            return len(f.read().split())

    def finish(self, rc, t0):
        self.rc, self.elapsed_s, self.wall1 = rc, time.monotonic() - t0, time.time_ns()
        with open(os.path.join(self.dir, "stderr.txt")) as f:
            self.stderr = f.read()
        if os.path.exists(self.summary_path):
            with open(self.summary_path) as f:
                self.summary = json.load(f)

    def tscope_lines(self):
        return [line for line in self.stderr.splitlines() if "tscope:" in line]


class Launcher:
    """How train_gpt.py is started: torchrun (the GPU machine), or one
    process with torchrun's variables (Debian's torch 1.13 for the CPU
    self-test, whose torchrun fails on Python 3.11)."""

    def __init__(self, root, work, preload, python=sys.executable, torchrun=True):
        self.root, self.work, self.preload = root, work, preload
        self.python, self.torchrun = python, torchrun
        self.nproc = 1  # ranks (GPUs) per run under torchrun
        # Seconds the runs may still take (the single-call mode's deadline);
        # None: each run only has its own timeout.
        self.time_left = None

    def command(self, run, args):
        script = os.path.join(self.root, "scripts", "train_gpt.py")
        tail = [script, "--summary", run.summary_path, "--progress", run.progress, *args]
        if self.torchrun:
            return [self.python, "-m", "torch.distributed.run", "--standalone",
                    "--nproc_per_node", str(self.nproc), *tail], {}
        return [self.python, *tail], {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1",
                                      "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}

    def env(self, run, mode, extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("TSCOPE_") and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH",
                                                            "NVTX_INJECTION64_PATH")}
        if mode:
            env.update(LD_PRELOAD=self.preload, TSCOPE_OUT=run.dumps, TSCOPE_CUPTI=mode)
        env.update(extra or {})
        return env

    def start(self, name, mode, args, extra_env=None):
        """mode None: without the preload; else TSCOPE_CUPTI=mode.  "{run}"
        in an argument becomes the run's folder.  Raises OutOfTime when the
        deadline leaves no time for a run."""
        if self.time_left is not None and self.time_left() < MIN_RUN_S:
            raise OutOfTime(f"{name}: {self.time_left():.0f} s left, not started")
        run = Run(self.work, name)
        cmd, launch_env = self.command(run, [a.replace("{run}", run.dir) for a in args])
        env = self.env(run, mode, {**launch_env, **(extra_env or {})})
        with open(os.path.join(run.dir, "command.txt"), "w") as f:
            f.write(" ".join(f"{k}={v}" for k, v in sorted(env.items())
                             if k in ("LD_PRELOAD", "TSCOPE_CUPTI", "PYTORCH_CUDA_ALLOC_CONF"))
                    + " " + " ".join(cmd) + "\n")
        run.env_note = " ".join(f"{k}={v}" for k, v in (extra_env or {}).items())
        run.t0, run.wall0 = time.monotonic(), time.time_ns()
        with open(os.path.join(run.dir, "stdout.txt"), "w") as so, \
                open(os.path.join(run.dir, "stderr.txt"), "w") as se:
            run.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdout=so, stderr=se,
                                        start_new_session=True)
        return run

    def wait(self, run, timeout=540):
        allowed = timeout if self.time_left is None else max(1.0, min(timeout, self.time_left()))
        try:
            rc = run.proc.wait(timeout=allowed)
        except subprocess.TimeoutExpired:
            os.killpg(run.proc.pid, signal.SIGKILL)
            rc = run.proc.wait()
            run.hung = True
            run.cut = allowed < timeout  # the deadline's doing, not the run's
        run.finish(rc, run.t0)
        return run

    def train(self, name, mode, args, extra_env=None, timeout=540):
        return self.wait(self.start(name, mode, args, extra_env), timeout)

"""What the two test jobs (loader_job.py, gloo_job.py) share: a dataset
whose samples depend only on their index, a small model, and the result
file the test driver (torch_case.py) compares between a run with and a run
without the preload.

Losses are written as float.hex() strings, so "unchanged" means bitwise
equal, not close.  Every sample carries the id of the process that made it,
so the driver can see that the DataLoader really used worker processes.
"""

import argparse
import json
import os

import torch
import torch.nn as nn
from torch.utils.data import Dataset


def job_arguments(steps, batch):
    """The options both jobs take; each adds its own."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--result", required=True, help="JSON result file (rank suffix added "
                    "by the multi-rank job)")
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--dim", type=int, default=48)
    ap.add_argument("--workers", type=int, default=2, help="forked DataLoader workers")
    ap.add_argument("--progress", default="", help="append each finished step here (rank 0)")
    ap.add_argument("--pid-dir", default="", help="processes of the job leave their pid here")
    return ap


class IndexedSamples(Dataset):
    """Regression samples: sample i is a function of (seed, i) only, so
    any worker, in any process, produces the same tensor."""

    def __init__(self, n, dim, seed):
        self.n, self.dim, self.seed = n, dim, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 1000003 + i)
        x = torch.randn(self.dim, generator=g)
        half = self.dim // 2
        y = (x[:half].sum() - x[half:].pow(2).mean()).reshape(1)
        return x, y, os.getpid()


def make_model(dim, seed):
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(dim, 96), nn.GELU(), nn.LayerNorm(96),
        nn.Linear(96, 96), nn.Tanh(), nn.Linear(96, 1))


def thread_count():
    """Threads of this process now (intra-op pools included)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def note_progress(path, step):
    """One line per finished step, flushed, for a driver that waits for
    the job to be halfway before it signals it."""
    if path:
        with open(path, "a") as f:
            f.write(f"{step}\n")


def note_pid(directory, prefix=""):
    """Drop a file named prefix + this process's id into directory (the
    driver checks afterwards that none of these processes is left
    running, and which of them wrote a dump)."""
    if directory:
        os.makedirs(directory, exist_ok=True)
        open(os.path.join(directory, f"{prefix}{os.getpid()}"), "w").close()


def write_result(path, **fields):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(fields, f, indent=1, sort_keys=True)
    os.replace(tmp, path)

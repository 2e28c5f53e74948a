#!/usr/bin/env python3
"""One-process training job with DataLoader worker processes, run by
torch_case.py with and without the preload.

Training reads from a DataLoader whose workers are forked (the Linux
default); a second, evaluation loader starts its workers with "spawn"
(fork, then exec of a new Python: the preload's exec path).  A few steps
run under torch.profiler (CPU).  --threads sets the intra-op pool, to run
the job with many more threads than cores.  Nothing here knows about
tscope.
"""

import os
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jobkit  # noqa: E402


def train(args, model, opt, result):
    data = jobkit.IndexedSamples(args.steps * args.batch, args.dim, seed=7)
    loader = DataLoader(data, batch_size=args.batch, shuffle=True, num_workers=args.workers,
                        generator=torch.Generator().manual_seed(11),
                        worker_init_fn=lambda _: jobkit.note_pid(args.pid_dir))
    prof = None
    if args.profile:
        from torch.profiler import ProfilerActivity, profile, schedule
        prof = profile(activities=[ProfilerActivity.CPU],
                       schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                       on_trace_ready=lambda p: p.export_chrome_trace(args.profile))
        prof.start()
    pids, threads = set(), 0
    for step, (x, y, pid) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        result["losses"].append(loss.item().hex())
        pids.update(int(p) for p in pid)
        threads = max(threads, jobkit.thread_count())
        jobkit.note_progress(args.progress, step)
        if prof is not None:
            prof.step()
    if prof is not None:
        prof.stop()
    result["worker_pids"] = sorted(pids)
    result["max_threads"] = threads


def evaluate(args, model, result):
    data = jobkit.IndexedSamples(4 * args.batch, args.dim, seed=8)
    loader = DataLoader(data, batch_size=args.batch, num_workers=args.spawn_workers,
                        multiprocessing_context="spawn" if args.spawn_workers else None)
    pids = set()
    with torch.no_grad():
        for x, y, pid in loader:
            result["eval_losses"].append(F.mse_loss(model(x), y).item().hex())
            pids.update(int(p) for p in pid)
    result["spawn_worker_pids"] = sorted(pids)


def main():
    ap = jobkit.job_arguments(steps=24, batch=32)
    ap.add_argument("--spawn-workers", type=int, default=2,
                    help="spawned workers of the evaluation loader")
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0: default)")
    ap.add_argument("--profile", default="", help="write a torch.profiler trace here")
    args = ap.parse_args()

    if args.threads:
        torch.set_num_threads(args.threads)
    model = jobkit.make_model(args.dim, seed=3)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    result = {"main_pid": os.getpid(), "losses": [], "eval_losses": [],
              "intra_op_threads": torch.get_num_threads()}
    train(args, model, opt, result)
    evaluate(args, model, result)
    jobkit.write_result(args.result, **result)


if __name__ == "__main__":
    main()

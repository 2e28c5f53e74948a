#!/usr/bin/env python3
"""Two-rank data-parallel training over gloo, run under torchrun by
torch_case.py with and without the preload.

Each rank trains a DDP model (gloo all-reduces the gradients) from a
DataLoader with forked worker processes and a DistributedSampler, and
all-reduces its loss every step.  With --nccl LIB the ranks also open a
communicator of the NCCL library LIB (the test bed's, which reduces host
buffers across processes) and all-reduce the same loss through it, calling
ncclAllReduce from the global symbol scope as a program linked to NCCL
does; that makes the ranks record under the preload, while their launcher
and DataLoader workers must not.  Nothing here knows about tscope.
"""

import os
import signal
import subprocess
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jobkit  # noqa: E402
from nccl_ctypes import Nccl  # noqa: E402


def share_over_gloo(raw):
    box = [raw]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def main():
    ap = jobkit.job_arguments(steps=16, batch=16)
    ap.add_argument("--nccl", default="", help="NCCL library to all-reduce the loss with too")
    ap.add_argument("--stop-on-sigterm", action="store_true",
                    help="on SIGTERM, finish the step, agree to stop, exit 0")
    args = ap.parse_args()
    stop = []
    if args.stop_on_sigterm:
        # Graceful preemption, as many trainers do it: note the signal,
        # stop at the end of the step.
        signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    dist.init_process_group("gloo")  # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    rank, world = dist.get_rank(), dist.get_world_size()
    jobkit.note_pid(args.pid_dir, "rank-")
    nccl = Nccl(args.nccl, rank, world, share_over_gloo) if args.nccl else None
    # A helper program, as jobs start them (compilers, nvidia-smi, git):
    # Python starts it with vfork + exec, from a process that may be
    # recording by now.
    subprocess.run(["sh", "-c", "exit 0"], check=True)

    model = DDP(jobkit.make_model(args.dim, seed=5))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = jobkit.IndexedSamples(args.steps * args.batch * world, args.dim, seed=9)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=13)
    loader = DataLoader(data, batch_size=args.batch, sampler=sampler,
                        num_workers=args.workers,
                        worker_init_fn=lambda _: jobkit.note_pid(args.pid_dir))
    result = {"rank": rank, "world": world, "losses": [], "mean_losses": [],
              "nccl_sums": [], "worker_pids": set()}
    for step, (x, y, pid) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()  # DDP: gloo all-reduce of the gradient buckets
        opt.step()
        total = loss.detach().double()
        dist.all_reduce(total)
        result["losses"].append(loss.item().hex())
        result["mean_losses"].append((total.item() / world).hex())
        if nccl:
            # The same two doubles summed by the other library: bitwise the
            # same sum (one addition, in either order).
            got = nccl.all_reduce_sum(loss.item())
            if got.hex() != total.item().hex():
                raise RuntimeError(f"step {step}: NCCL sum {got!r} != gloo sum {total.item()!r}")
            result["nccl_sums"].append(got.hex())
        result["worker_pids"].update(int(p) for p in pid)
        if rank == 0:
            jobkit.note_progress(args.progress, step)
        if args.stop_on_sigterm:
            flag = torch.tensor([len(stop)])
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)  # both ranks stop at the same step
            if flag.item():
                break
    if nccl:
        nccl.close()
    result["worker_pids"] = sorted(result["worker_pids"])
    result["rank_pid"] = os.getpid()
    jobkit.write_result(f"{args.result}.{rank}", **result)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

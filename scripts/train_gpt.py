#!/usr/bin/env python3
"""A small GPT-style training job for checking tscope on a real GPU.

Run it under torchrun (one process per GPU). It uses the same things a real
job uses: an NCCL process group, DDP, bf16 autocast, AdamW, and a DataLoader
with worker processes and pinned memory. No line of it knows about tscope.

It writes a JSON summary (--summary) that scripts/gpu-check compares with the
dump:
  wall window  start/end CLOCK_REALTIME ns of the training loop
  steps        optimizer steps run
  linear_flops_per_step
               analytic FLOPs of every nn.Linear, forward and backward
               (6 * tokens * in * out each). Attention goes through
               scaled_dot_product_attention (flash kernels, not cuBLAS), so
               the cuBLAS GEMMs of a step should add up to this number.
  step_times_s one entry per step, for the overhead comparison

--profile DIR wraps a few steps in torch.profiler and exports a Chrome
trace there. This is how gpu-check checks that tscope steps aside for Kineto
and that the trace stays intact.
"""

import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class RandomTokens(Dataset):
    """Random token sequences. The DataLoader workers still do real work."""

    def __init__(self, n, seq, vocab, seed):
        self.n, self.seq, self.vocab, self.seed = n, seq, vocab, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed + i)
        x = torch.randint(0, self.vocab, (self.seq + 1,), generator=g)
        return x[:-1], x[1:]


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, seq, d, layers, heads):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)  # not tied: one more plain GEMM

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def linear_flops_per_step(model, tokens):
    """Forward (2*T*i*o) + grad input (2*T*i*o) + grad weight (2*T*i*o)."""
    total = 0
    for m in model.modules():
        if isinstance(m, nn.Linear):
            total += 6 * tokens * m.in_features * m.out_features
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--summary", default="")
    ap.add_argument("--profile", default="", help="torch.profiler trace directory")
    ap.add_argument("--profile-steps", type=int, default=5,
                    help="active profiler steps (after 5 waiting and 2 warm-up steps)")
    args = ap.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    torch.manual_seed(1234 + rank)

    model = GPT(args.vocab, args.seq, args.dim, args.layers, args.heads).to(dev)
    ddp = DDP(model, device_ids=[local])
    opt = torch.optim.AdamW(ddp.parameters(), lr=3e-4, weight_decay=0.1)
    data = RandomTokens(args.steps * args.batch + args.batch, args.seq, args.vocab, 99 + rank)
    loader = DataLoader(data, batch_size=args.batch, num_workers=args.workers,
                        pin_memory=True, drop_last=True, persistent_workers=args.workers > 0)

    prof = None
    if args.profile:
        from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(wait=5, warmup=2, active=args.profile_steps, repeat=1),
                       on_trace_ready=tensorboard_trace_handler(args.profile))
        prof.start()

    step_times = []
    torch.cuda.synchronize()
    dist.barrier()
    t_start = time.time_ns()
    it = iter(loader)
    for step in range(args.steps):
        t0 = time.perf_counter()
        x, y = next(it)
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = ddp(x)
            loss = F.cross_entropy(logits.float().view(-1, args.vocab), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss_value = loss.item()  # one host sync per step, like most loops
        step_times.append(time.perf_counter() - t0)
        if prof is not None:
            prof.step()
    torch.cuda.synchronize()
    t_end = time.time_ns()
    if prof is not None:
        prof.stop()

    tokens = args.batch * args.seq
    summary = {
        "rank": rank,
        "world_size": dist.get_world_size(),
        "start_realtime_ns": t_start,
        "end_realtime_ns": t_end,
        "steps": args.steps,
        "tokens_per_step": tokens,
        "linear_count": sum(isinstance(m, nn.Linear) for m in model.modules()),
        "linear_flops_per_step": linear_flops_per_step(model, tokens),
        "step_times_s": step_times,
        "median_step_s": statistics.median(step_times[10:] or step_times),
        "final_loss": loss_value,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        # What tscope's memory section must find (its peak reserved).
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
    }
    if args.summary and rank == 0:
        with open(args.summary, "w") as f:
            json.dump(summary, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A small GPT-style training job for checking tscope on a real GPU.

Run it under torchrun (one process per GPU). It uses what a real job uses:
an NCCL process group, DDP (or FSDP), bf16 autocast, fused AdamW, and a
DataLoader with worker processes and pinned memory. No line of it knows
about tscope; scripts/gpu-check runs it with and without the preload and
compares.

Every step also runs three small "probe" collectives, because at world
size 1 NCCL launches no kernel for an in-place SUM all-reduce (DDP's): an
AVG all-reduce (NCCL's PreMulSum: one kernel even on one rank) and the
out-of-place all_gather_into_tensor and reduce_scatter_tensor (one device
copy each on one rank, kernels on more).  gpu-check joins each of them to
its GPU work.

--summary FILE (rank 0) writes what gpu-check compares with the dump:
  step_windows_ns  [start, end] CLOCK_REALTIME ns of every step (end after
                   the loss is read back, so the step's GPU work is done)
  losses           every step's loss as float.hex (bitwise comparison)
  linear_flops_per_step  analytic FLOPs of every nn.Linear, forward and
                   backward (6 * tokens * in * out); the probes add no GEMM
  attention_flops_per_step, attention_in_cublas  the math attention's
                   batched products, cuBLAS GEMMs with --deterministic only
  probe_calls      the probe collectives made, per kind
  median_step_s    median step time after 10 steps (overhead runs)
  injection        CUDA_INJECTION64_PATH as this process sees it, and the
                   libcupti / preload files mapped in it after CUDA init

Variants: --wrap fsdp; --cuda-graph (a whole step captured once with
torch.cuda.graphs and replayed, probes inside the graph); --compile
(torch.compile mode="reduce-overhead", CUDA graphs through Inductor);
--deterministic (math attention: flash, memory-efficient and cuDNN
attention off; deterministic algorithms: bitwise equal losses between runs); --profile DIR (torch.profiler on chosen steps);
--device cpu (gloo, float32: lets gpu-check --cpu-selftest run this file
on a machine without a GPU).
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
from torch.utils.data import DataLoader, Dataset

USER_NVTX_PREFIX = "train_gpt/"  # gpu-check tells the user's ranges from NCCL's by this


class RandomTokens(Dataset):
    """Random token sequences, a function of the index only. The
    DataLoader workers still do real work."""

    def __init__(self, n, seq, vocab, seed):
        self.n, self.seq, self.vocab, self.seed = n, seq, vocab, seed

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed + i)
        x = torch.randint(0, self.vocab, (self.seq + 1,), generator=g)
        return x[:-1], x[1:]


def attention(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # torch < 2.0 (Debian's CPU build, for the self-test only).
    s = q.shape[-2]
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
    w = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
    return w.masked_fill(~mask, float("-inf")).softmax(-1) @ v


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
        a = attention(q, k, v)
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
    return sum(6 * tokens * m.in_features * m.out_features
               for m in model.modules() if isinstance(m, nn.Linear))


def attention_flops_per_step(args):
    """Math attention's batched products, per layer: Q K^T and A V forward
    (2*s*s*dh each per head and sequence), four more of the same size
    backward; the causal mask is applied to the full s x s product."""
    return 6 * 2 * args.batch * args.seq * args.seq * args.dim * args.layers


class Probes:
    """The per-step collectives whose GPU work gpu-check joins to them."""

    def __init__(self, dev, world, elems=1 << 18):
        self.world = world
        self.x = torch.ones(elems, device=dev)
        self.gathered = torch.empty(elems * world, device=dev)
        self.scattered = torch.empty(elems, device=dev)
        self.big = torch.ones(elems * world, device=dev)
        self.calls = {"AllReduce_avg": 0, "AllGather": 0, "ReduceScatter": 0}

    def run(self, avg_op):
        if avg_op is not None:
            dist.all_reduce(self.x, op=avg_op)
            self.calls["AllReduce_avg"] += 1
        dist.all_gather_into_tensor(self.gathered, self.x)
        dist.reduce_scatter_tensor(self.scattered, self.big)
        self.calls["AllGather"] += 1
        self.calls["ReduceScatter"] += 1


def libraries_mapped():
    """Files of libcupti and of the preload mapped in this process."""
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and ("libcupti" in parts[5] or "tscope" in parts[5]):
                found.add(parts[5].strip())
    return sorted(found)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--wrap", choices=["ddp", "fsdp", "none"], default="ddp")
    ap.add_argument("--no-probes", action="store_true", help="no probe collectives")
    ap.add_argument("--cuda-graph", action="store_true",
                    help="capture one whole step in a CUDA graph and replay it")
    ap.add_argument("--compile", action="store_true",
                    help='torch.compile(mode="reduce-overhead") (CUDA graphs)')
    ap.add_argument("--deterministic", action="store_true",
                    help="math attention and deterministic algorithms")
    ap.add_argument("--summary", default="")
    ap.add_argument("--progress", default="", help="append each finished step here")
    ap.add_argument("--profile", default="", help="torch.profiler trace directory")
    ap.add_argument("--profile-wait", type=int, default=5)
    ap.add_argument("--profile-warmup", type=int, default=2)
    ap.add_argument("--profile-steps", type=int, default=5, help="active profiler steps")
    args = ap.parse_args(argv)
    if args.cuda_graph or args.compile:
        args.wrap = "none"  # a whole-step graph holds the collectives itself
    return args


def setup(args):
    cuda = args.device == "cuda"
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, local = dist.get_rank(), int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
    else:
        dev = torch.device("cpu")
    if args.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        if cuda:
            # Math attention only: its products are cuBLAS GEMMs (counted in
            # attention_flops_per_step) and deterministic.  On sm90 with CUDA
            # 13 PyTorch tries cuDNN's attention first, whose backward is not
            # deterministic: it goes off too where this PyTorch has it.
            torch.backends.cuda.enable_flash_sdp(False)
            torch.backends.cuda.enable_mem_efficient_sdp(False)
            if hasattr(torch.backends.cuda, "enable_cudnn_sdp"):
                torch.backends.cuda.enable_cudnn_sdp(False)
    torch.manual_seed(1234 + rank)
    return rank, local, dev


def wrap_model(args, model, local):
    if args.wrap == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        return DDP(model, device_ids=[local] if args.device == "cuda" else None)
    if args.wrap == "fsdp":
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        return FSDP(model, use_orig_params=True)
    if args.compile:
        return torch.compile(model, mode="reduce-overhead")
    return model


def make_optimizer(args, params):
    kw = {"lr": 3e-4, "weight_decay": 0.1}
    if args.device == "cuda":
        kw["fused"] = True
        if args.cuda_graph:
            kw["capturable"] = True
    return torch.optim.AdamW(params, **kw)


class Trainer:
    """One training step, eager or replayed from a captured CUDA graph."""

    def __init__(self, args, net, opt, probes, avg_op):
        self.args, self.net, self.opt, self.probes, self.avg_op = args, net, opt, probes, avg_op
        self.cuda = args.device == "cuda"
        self.graph = None

    def autocast(self, cache=True):
        if self.cuda:
            return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=cache)
        return torch.autocast("cpu", enabled=False)

    def eager(self, x, y, cache=True):
        with self.autocast(cache):
            logits = self.net(x)
            loss = F.cross_entropy(logits.float().view(-1, self.args.vocab), y.view(-1))
        self.opt.zero_grad(set_to_none=not self.args.cuda_graph)
        loss.backward()
        self.opt.step()
        if self.probes:
            self.probes.run(self.avg_op)
        return loss

    def capture(self, x, y):
        """Warm up on a side stream, then capture one step (probes too)."""
        self.static_x, self.static_y = x.clone(), y.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.eager(self.static_x, self.static_y, cache=False)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_loss = self.eager(self.static_x, self.static_y, cache=False)

    def step(self, x, y):
        if not self.args.cuda_graph:
            return self.eager(x, y)
        if self.graph is None:
            self.capture(x, y)
        self.static_x.copy_(x)
        self.static_y.copy_(y)
        self.graph.replay()
        return self.static_loss


def start_profiler(args):
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device == "cuda" else [])
    prof = profile(activities=acts,
                   schedule=schedule(wait=args.profile_wait, warmup=args.profile_warmup,
                                     active=args.profile_steps, repeat=1),
                   on_trace_ready=tensorboard_trace_handler(args.profile, use_gzip=True))
    prof.start()
    return prof


def nvtx_range(cuda, name):
    if cuda:
        torch.cuda.nvtx.range_push(USER_NVTX_PREFIX + name)
        return lambda: torch.cuda.nvtx.range_pop()
    return lambda: None


def main(argv=None):
    args = parse_args(argv)
    rank, local, dev = setup(args)
    cuda = args.device == "cuda"
    world = dist.get_world_size()
    model = GPT(args.vocab, args.seq, args.dim, args.layers, args.heads).to(dev)
    net = wrap_model(args, model, local)
    opt = make_optimizer(args, net.parameters())
    avg_op = dist.ReduceOp.AVG if cuda else None  # gloo has no AVG
    # gloo (the CPU self-test) has neither AVG nor reduce_scatter_tensor.
    probes = None if args.no_probes or not cuda else Probes(dev, world)
    trainer = Trainer(args, net, opt, probes, avg_op)
    data = RandomTokens(args.steps * args.batch + args.batch, args.seq, args.vocab, 99 + rank)
    loader = DataLoader(data, batch_size=args.batch, num_workers=args.workers,
                        pin_memory=cuda, drop_last=True, persistent_workers=args.workers > 0)
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    prof = start_profiler(args) if args.profile else None
    step_times, windows, losses = [], [], []
    sync()
    dist.barrier()
    t_start = time.time_ns()
    it = iter(loader)
    for step in range(args.steps):
        w0, t0 = time.time_ns(), time.perf_counter()
        pop = nvtx_range(cuda, f"step {step}")
        x, y = next(it)
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        loss_value = trainer.step(x, y).item()  # one host sync per step, like most loops
        pop()
        step_times.append(time.perf_counter() - t0)
        windows.append([w0, time.time_ns()])
        losses.append(float(loss_value).hex())
        if args.progress and rank == 0:
            with open(args.progress, "a") as f:
                f.write(f"{step}\n")
        if prof is not None:
            prof.step()
    sync()
    t_end = time.time_ns()
    if prof is not None:
        prof.stop()

    tokens = args.batch * args.seq
    summary = {
        "rank": rank,
        "world_size": world,
        "pid": os.getpid(),
        "start_realtime_ns": t_start,
        "end_realtime_ns": t_end,
        "steps": args.steps,
        "step_windows_ns": windows,
        "losses": losses,
        "tokens_per_step": tokens,
        "linear_count": sum(isinstance(m, nn.Linear) for m in model.modules()),
        "linear_flops_per_step": linear_flops_per_step(model, tokens),
        # --deterministic runs the math attention, whose products are cuBLAS
        # GEMMs; otherwise flash / cuDNN attention makes none.
        "attention_in_cublas": bool(cuda and args.deterministic),
        "attention_flops_per_step": attention_flops_per_step(args),
        "pin_memory": cuda,
        "probe_calls": probes.calls if probes else {},
        "step_times_s": step_times,
        "median_step_s": statistics.median(step_times[10:] or step_times),
        "variant": {"wrap": args.wrap, "cuda_graph": args.cuda_graph, "compile": args.compile,
                    "deterministic": args.deterministic},
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "injection": {"CUDA_INJECTION64_PATH": os.environ.get("CUDA_INJECTION64_PATH"),
                      "mapped": libraries_mapped()},
    }
    if cuda:
        summary["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
        summary["device_name"] = torch.cuda.get_device_name(local)
        # What tscope's memory section must find (its peak reserved).
        summary["max_memory_reserved"] = torch.cuda.max_memory_reserved()
    if args.summary and rank == 0:
        tmp = args.summary + ".tmp"
        with open(tmp, "w") as f:
            json.dump(summary, f)
        os.replace(tmp, args.summary)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

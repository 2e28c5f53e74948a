#!/usr/bin/env python3
"""Record real torch.profiler traces on a CPU-only machine (Debian's
python3-torch) for the analyzer's corpus, tests/data/corpus/:

  cpu_dataloader_workers0  a training loop that waits for its DataLoader
                           (num_workers=0: every batch is made on the
                           training thread)
  cpu_dataloader_workers4  the same loop with num_workers=4
  cpu_gloo_2rank           a 2-process DDP job over gloo (one trace per rank)
  cpu_serving_loop         an inference loop without step records: each
                           request is one record_function("serve_request")
                           inside one wrapping record_function("serve_loop")


Each sample costs a fixed storage latency plus a little decoding work, the
shape of the usual input-bound job, so more workers must shorten the wait
for data; the model is small enough that its step is shorter than one
batch's loading on the training thread.

usage: /usr/bin/python3 scripts/record-cpu-traces.py OUT_DIR [TRACE...]
"""
import gzip
import os
import shutil
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

BATCH = 16
SAMPLE_LATENCY_S = 0.003      # storage latency per sample
STEPS = dict(wait=1, warmup=1, active=6)


class SlowImages(torch.utils.data.Dataset):
    """Images that take time to read (sleep) and to decode (CPU)."""

    def __len__(self):
        return 100000

    def __getitem__(self, i):
        time.sleep(SAMPLE_LATENCY_S)
        g = torch.Generator().manual_seed(i)
        img = torch.rand(3, 32, 32, generator=g)
        img = (img - img.mean()) / (img.std() + 1e-6)   # the "decode"
        return img, i % 10


def small_cnn():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(32, 10))


def gzip_traces(tmp, out_dir, prefix):
    """Move the traces written to tmp into out_dir, gzipped, with stable names."""
    os.makedirs(out_dir, exist_ok=True)
    for name in sorted(os.listdir(tmp)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(tmp, name), "rb") as src, \
                gzip.open(os.path.join(out_dir, prefix + ".pt.trace.json.gz"), "wb", 9) as dst:
            shutil.copyfileobj(src, dst)


def train_loop(loader, model, prof, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    for step, (x, y) in enumerate(loader):
        if step >= steps:
            break
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        prof.step()


def record_dataloader(out_dir, workers):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    loader = torch.utils.data.DataLoader(SlowImages(), batch_size=BATCH, num_workers=workers)
    model = small_cnn()
    tmp = tempfile.mkdtemp()
    steps = sum(STEPS.values())
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(**STEPS),
                 on_trace_ready=torch.profiler.tensorboard_trace_handler(tmp)) as prof:
        train_loop(loader, model, prof, steps)
    gzip_traces(tmp, out_dir, "worker0")
    shutil.rmtree(tmp)


def gloo_rank(rank, world, init_file, tmp):
    torch.manual_seed(rank)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank,
                            world_size=world)
    model = nn.parallel.DistributedDataParallel(small_cnn())
    sampler = torch.utils.data.distributed.DistributedSampler(SlowImages(), world, rank)
    loader = torch.utils.data.DataLoader(SlowImages(), batch_size=BATCH, sampler=sampler,
                                         num_workers=2)
    out = os.path.join(tmp, "rank%d" % rank)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(**STEPS),
                 on_trace_ready=torch.profiler.tensorboard_trace_handler(out)) as prof:
        train_loop(loader, model, prof, sum(STEPS.values()))
    dist.barrier()
    dist.destroy_process_group()


def record_gloo(out_dir, world=2):
    tmp = tempfile.mkdtemp()
    init_file = os.path.join(tmp, "init")
    mp.spawn(gloo_rank, args=(world, init_file, tmp), nprocs=world, join=True)
    for rank in range(world):
        gzip_traces(os.path.join(tmp, "rank%d" % rank), out_dir, "rank%d" % rank)
    shutil.rmtree(tmp)


SERVING_REQUESTS = 8
SERVING_GAP_S = 0.005         # time between requests, spent waiting for one


def record_serving(out_dir):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = small_cnn().eval()
    tmp = tempfile.mkdtemp()
    with profile(activities=[ProfilerActivity.CPU],
                 on_trace_ready=torch.profiler.tensorboard_trace_handler(tmp)):
        with torch.no_grad(), torch.profiler.record_function("serve_loop"):
            for i in range(SERVING_REQUESTS):
                time.sleep(SERVING_GAP_S)
                with torch.profiler.record_function("serve_request"):
                    x = torch.rand(BATCH, 3, 32, 32)
                    model(x).argmax(dim=1)
    gzip_traces(tmp, out_dir, "worker0")
    shutil.rmtree(tmp)


TRACES = {
    "cpu_dataloader_workers0": lambda d: record_dataloader(d, 0),
    "cpu_dataloader_workers4": lambda d: record_dataloader(d, 4),
    "cpu_gloo_2rank": record_gloo,
    "cpu_serving_loop": record_serving,
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/corpus"
    for name in sys.argv[2:] or list(TRACES):
        TRACES[name](os.path.join(out, name))


if __name__ == "__main__":
    main()

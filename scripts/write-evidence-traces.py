#!/usr/bin/env python3
"""Write the torch.profiler traces of tests/data/evidence (issue 38).

Each trace has the shape of a job that tscope judged from a guess: the
events torch.profiler 2.x writes (cpu_op, python_function, cuda_runtime,
kernel, gpu_memcpy, gpu_memset, ProfilerStep annotations, collective
metadata on NCCL kernels), their timings chosen to match the issue's
measurements.  No GPU is needed: the files are committed, and this script
says how they were made.  Run from the repository root:

    python3 scripts/write-evidence-traces.py

Cases (one folder each):
  copy_only_pcie     8 ProfilerSteps of a PCIe copy benchmark on an RTX
                     A4000: a 64 MiB host-to-device copy from pageable
                     memory, then the same back, no kernel at all.
  tp_cold_forward    one cold forward pass of a 2-way tensor-parallel
                     model on an H100 NVL: 300 ms of start-up on the CPU,
                     9 layers that each all-reduce 4 MiB, a final 441 ms
                     all-gather; no ProfilerStep, no loop.
  loop_no_loader     6 ProfilerSteps of a transformer layer run in a loop
                     with no DataLoader: each step starts with Python and
                     CPU operators before its first kernel; one 0-us
                     memset.
  fp32_turing        4 ProfilerSteps of plain fp32 GEMMs (cuBLAS sgemm
                     kernels) on a Quadro RTX 5000, a Turing GPU (compute
                     capability 7.5: fp16 tensor cores, no TF32) that the
                     peak table does not hold.
  fp32_ampere        the same on an RTX A2000 (8.6: TF32 and bf16), not in
                     the peak table either.
  fp32_no_capability the same on the Quadro RTX 5000 with no computeMajor
                     or computeMinor in deviceProperties.
"""
import json
import os

OUT = os.path.join("tests", "data", "evidence")
MIB = 1 << 20


class Trace:
    def __init__(self, device, pid=4242, rank=None, world=None, cc=(0, 0)):
        self.cc = cc  # (computeMajor, computeMinor), None: not written
        self.ev = []
        self.pid = pid
        self.corr = 100
        self.ext = 1000
        self.device = device
        self.rank, self.world = rank, world

    def cpu(self, name, ts, dur, cat="cpu_op"):
        self.ext += 1
        self.ev.append({"ph": "X", "cat": cat, "name": name, "pid": self.pid, "tid": self.pid,
                        "ts": ts, "dur": dur, "args": {"External id": self.ext}})

    def step(self, k, ts, dur):
        self.ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k,
                        "pid": self.pid, "tid": self.pid, "ts": ts, "dur": dur,
                        "args": {"External id": self.ext}})

    def runtime(self, name, ts, dur):
        self.corr += 1
        self.ev.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": self.pid,
                        "tid": self.pid, "ts": ts, "dur": dur,
                        "args": {"External id": self.ext, "correlation": self.corr}})
        return self.corr

    def kernel(self, name, ts, dur, launch_ts, args=None):
        c = self.runtime("cudaLaunchKernel", launch_ts, 4)
        a = {"External id": self.ext, "device": 0, "context": 1, "stream": 7,
             "correlation": c, "grid": [64, 1, 1], "block": [256, 1, 1]}
        a.update(args or {})
        self.ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                        "ts": ts, "dur": dur, "args": a})

    def memcpy(self, kind, ts, dur, nbytes, launch_ts):
        c = self.runtime("cudaMemcpyAsync", launch_ts, 6)
        self.ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy " + kind, "pid": 0,
                        "tid": 7, "ts": ts, "dur": dur,
                        "args": {"External id": self.ext, "device": 0, "context": 1,
                                 "stream": 7, "correlation": c, "bytes": nbytes,
                                 "memory bandwidth (GB/s)": nbytes / (dur * 1e3)}})

    def memset(self, ts, dur, nbytes, launch_ts):
        c = self.runtime("cudaMemsetAsync", launch_ts, 3)
        self.ev.append({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0,
                        "tid": 7, "ts": ts, "dur": dur,
                        "args": {"External id": self.ext, "device": 0, "context": 1,
                                 "stream": 7, "correlation": c, "bytes": nbytes,
                                 "memory bandwidth (GB/s)": 0}})

    def write(self, folder, name):
        os.makedirs(folder, exist_ok=True)
        props = {"id": 0, "name": self.device, "totalGlobalMem": 0}
        if self.cc is not None:
            props.update(computeMajor=self.cc[0], computeMinor=self.cc[1])
        doc = {"schemaVersion": 1,
               "deviceProperties": [props],
               "traceEvents": [{"name": "process_name", "ph": "M", "ts": 0, "pid": self.pid,
                                "tid": 0, "args": {"name": "python"}}] + self.ev,
               "baseTimeNanoseconds": 1700000000000000000}
        if self.rank is not None:
            doc["distributedInfo"] = {"backend": "nccl", "rank": self.rank,
                                      "world_size": self.world}
        with open(os.path.join(folder, name), "w") as f:
            json.dump(doc, f, indent=0)
            f.write("\n")


def copy_only_pcie():
    t = Trace("NVIDIA RTX A4000")
    ts = 1000.0
    for k in range(8):
        t.step(k, ts, 21000)
        # 64 MiB each way at about 6.7 GB/s, pageable memory, back to back
        t.cpu("aten::copy_", ts + 50, 10150)
        t.memcpy("HtoD (Pageable -> Device)", ts + 100, 10000, 64 * MIB, ts + 60)
        t.runtime("cudaStreamSynchronize", ts + 70, 10040)
        t.cpu("aten::copy_", ts + 10250, 10150)
        t.memcpy("DtoH (Device -> Pageable)", ts + 10300, 10000, 64 * MIB, ts + 10260)
        t.runtime("cudaStreamSynchronize", ts + 10270, 10040)
        ts += 21000
    t.write(os.path.join(OUT, "copy_only_pcie"), "a4000_copy.pt.trace.json")


def tp_cold_forward():
    t = Trace("NVIDIA H100 NVL", rank=0, world=2)
    meta = {"Process Group Name": "0", "Process Group Ranks": "[0, 1]", "Group size": 2,
            "dtype": "BFloat16"}
    # start-up: building the model on the CPU, 0-300 ms
    t.cpu("aten::empty", 0, 1000)
    t.cpu("aten::normal_", 1000, 299000)
    ts = 300000.0
    for layer in range(9):
        t.cpu("aten::linear", ts, 200)
        t.kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 100, 3000,
                 ts + 20)
        a = dict(meta, **{"Collective name": "allreduce", "In msg nelems": 2 * MIB,
                          "Out msg nelems": 2 * MIB})
        t.cpu("nccl:all_reduce", ts + 200, 50)
        t.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", ts + 3100, 2000, ts + 210, a)
        t.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernel>",
                 ts + 5100, 1000, ts + 260)
        ts += 6200 + 1200 * (layer % 3)
    a = dict(meta, **{"Collective name": "all_gather", "In msg nelems": 128 * MIB,
                      "Out msg nelems": 256 * MIB})
    t.cpu("nccl:all_gather", ts, 50)
    t.kernel("ncclDevKernel_AllGather_RING_LL", ts + 100, 441000, ts + 10, a)
    t.write(os.path.join(OUT, "tp_cold_forward"), "rank0.pt.trace.json")


def loop_no_loader():
    t = Trace("NVIDIA H100 80GB HBM3")
    ts = 1000.0
    for k in range(6):
        t.step(k, ts, 3000)
        # Python and CPU operators before the first kernel: no DataLoader
        t.cpu("torch/nn/modules/module.py(1736): _call_impl", ts + 5, 2900, "python_function")
        t.cpu("aten::layer_norm", ts + 20, 380)
        t.cpu("aten::linear", ts + 420, 60)
        if k == 3:
            t.memset(ts + 480, 0, 4096, ts + 470)
        t.kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", ts + 500, 1800,
                 ts + 430)
        t.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernel>",
                 ts + 2300, 500, ts + 440)
        ts += 3000
    t.write(os.path.join(OUT, "loop_no_loader"), "layer_loop.pt.trace.json")


def fp32_gemms(folder, device, cc):
    t = Trace(device, cc=cc)
    ts = 1000.0
    for k in range(4):
        t.step(k, ts, 2000)
        t.cpu("aten::mm", ts + 10, 40)
        # plain fp32 GEMMs: 1.5 ms of the 1.7 ms of GPU work in the step
        t.kernel("volta_sgemm_128x64_nn", ts + 100, 1500, ts + 20)
        t.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor>",
                 ts + 1600, 200, ts + 40)
        ts += 2000
    t.write(os.path.join(OUT, folder), "fp32_gemms.pt.trace.json")


if __name__ == "__main__":
    copy_only_pcie()
    tp_cold_forward()
    loop_no_loader()
    fp32_gemms("fp32_turing", "Quadro RTX 5000", (7, 5))
    fp32_gemms("fp32_ampere", "NVIDIA RTX A2000", (8, 6))
    fp32_gemms("fp32_no_capability", "Quadro RTX 5000", None)

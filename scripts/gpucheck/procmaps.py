"""Which CUPTI a process really has, and how PyTorch links its CUDA
libraries.

Two CUPTI instances in one process (tscope's dlopen'ed libcupti beside a
copy linked into PyTorch) would each own a subscriber and a buffer
allocator; tscope must attach to the one the process already has.
Current PyTorch wheels carry Kineto, and with it their CUPTI use, in
libtorch_cpu.so as well as libtorch_cuda.so, so both are inspected."""

import os
import re
import subprocess


def mapped_files(maps_text):
    """Distinct file paths of a /proc/PID/maps text."""
    out = set()
    for line in maps_text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/"):
            out.add(parts[5].strip())
    return sorted(out)


def cupti_copies(paths):
    """The mapped files that are a libcupti (by file name)."""
    return [p for p in paths if re.search(r"/libcupti[^/]*\.so", p)]


def needed(lib):
    """NEEDED entries of a shared library (readelf -d)."""
    r = subprocess.run(["readelf", "-d", lib], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)


def defined_cupti_symbols(lib):
    """How many cupti* functions the library defines itself: non-zero means
    a CUPTI linked in statically (a second instance beside any libcupti)."""
    r = subprocess.run(["nm", "-D", "--defined-only", lib], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return sum(1 for line in r.stdout.splitlines() if re.search(r" T cupti[A-Z]", line))


def torch_libs(torch_lib_dir):
    """{library: {"needed": [...CUDA-related NEEDED], "cupti_defined": n}}
    for PyTorch's libraries that may hold NCCL, cuBLAS or CUPTI."""
    out = {}
    for name in ("libtorch_cpu.so", "libtorch_cuda.so", "libtorch_python.so", "libc10_cuda.so"):
        lib = os.path.join(torch_lib_dir, name)
        if os.path.exists(lib):
            out[name] = {
                "needed": [n for n in needed(lib)
                           if re.search(r"nccl|cupti|cublas|cudart|cudnn|libcuda\.", n)],
                "cupti_defined": defined_cupti_symbols(lib),
            }
    return out

"""scripts/gpu-check's parts: proving tscope's GPU capture on a real GPU.

Modules, one job each:
  verdicts    PASS/FAIL/WARN lines with their numbers, kept across parts
  tscope_out  reading tscope-report's JSON (info, dump, trace): the one
              place that knows the dump's JSON keys
  windows     per-step kernel totals by category, compared between a dump
              and a torch.profiler trace of the same steps
  procmaps    which CUPTI copies a process maps, how PyTorch links CUDA
  overhead    the overhead targets, decided from interleaved runs
  runs        building tscope and running scripts/train_gpt.py
  parts       the checks, grouped in parts that each fit in 10 minutes
  selftest    what can be checked without a GPU (--cpu-selftest)
"""

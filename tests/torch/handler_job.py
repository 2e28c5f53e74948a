#!/usr/bin/env python3
"""A recording Python process that starts a helper program, then is
signalled: does the application's own signal handling still happen?

    handler_job.py NCCL_LIB term|int [nohelper]

It opens a one-rank communicator of NCCL_LIB (so that, under the preload,
the process records), runs `true` through subprocess (CPython starts it
with vfork + exec; not with nohelper), then sends itself SIGTERM (term: the job installed a
Python handler, as trainers do for graceful preemption) or SIGINT (int:
Python's default handler raises KeyboardInterrupt).  It prints what it
saw and exits 0 when its own handling ran.  No torch needed.
"""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nccl_ctypes import Nccl  # noqa: E402


def main():
    lib, which = sys.argv[1], sys.argv[2]
    helper = sys.argv[3:] != ["nohelper"]
    caught = []
    if which == "term":
        signal.signal(signal.SIGTERM, lambda *_: caught.append("SIGTERM handler"))
    nccl = Nccl(lib, 0, 1)
    nccl.all_reduce_sum(1.0)
    if helper:
        subprocess.run(["true"], check=True)
    try:
        os.kill(os.getpid(), signal.SIGTERM if which == "term" else signal.SIGINT)
        deadline = time.monotonic() + 5
        while not caught and time.monotonic() < deadline:
            time.sleep(0.01)
    except KeyboardInterrupt:
        caught.append("KeyboardInterrupt")
    nccl.all_reduce_sum(2.0)  # the job goes on after its handler
    nccl.close()
    print("caught:", caught)
    return 0 if caught else 1


if __name__ == "__main__":
    sys.exit(main())

"""What the single-call mode leaves in $OUT, written as it goes.

A lent GPU call brings back at most 8 files from $OUT, and a call cut off
at its time limit brings back what is there at that moment.  So there are
exactly two files, each replaced whole (written under a temporary name,
then renamed) every time it changes:

  gpu-check-summary.txt      every verdict so far, one line each, with the
                             stage it belongs to and what was not run
  gpu-check-evidence.tar.gz  the evidence so far: a small dump, the
                             torch.profiler trace of the same steps, each
                             run's stderr, summary and command line
"""

import os
import tarfile
import time

SUMMARY = "gpu-check-summary.txt"
EVIDENCE = "gpu-check-evidence.tar.gz"
# The evidence stays small: a file over this is listed, not packed.
EVIDENCE_FILE_MAX = 24 << 20


class Outbox:
    def __init__(self, out_dir, header):
        self.dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.header = header
        self.lines = []
        self.counts = {}
        self.files = []       # (path, name in the tarball)
        self.left_out = []
        self.write()

    def _replace(self, name, writer):
        final = os.path.join(self.dir, name)
        tmp = final + ".tmp"
        writer(tmp)
        os.replace(tmp, final)

    def write(self, closing=""):
        counts = ", ".join(f"{n} {lv}" for lv, n in sorted(self.counts.items()))
        text = "\n".join([self.header, f"so far: {counts or 'nothing'}", ""] + self.lines
                         + ([closing] if closing else [])) + "\n"

        def put(path):
            with open(path, "w") as f:
                f.write(text)
        self._replace(SUMMARY, put)

    # the Verdicts sink
    def add(self, level, name, detail):
        self.counts[level] = self.counts.get(level, 0) + 1
        self.lines.append(f"{level:4} {name}" + (f": {detail}" if detail else ""))
        self.write()

    def stage(self, title):
        self.lines.append(f"\n== {title} ({time.strftime('%H:%M:%S')})")
        self.write()

    def keep(self, path, name):
        """Add a file to the evidence (packed at the next pack())."""
        if not os.path.isfile(path):
            return
        if os.path.getsize(path) > EVIDENCE_FILE_MAX:
            self.left_out.append(f"{name} ({os.path.getsize(path)} B)")
            return
        self.files.append((path, name))

    def pack(self):
        def put(path):
            with tarfile.open(path, "w:gz") as tar:
                for src, name in self.files:
                    if os.path.isfile(src):
                        tar.add(src, arcname=name)
                if self.left_out:
                    note = path + ".left-out"
                    with open(note, "w") as f:
                        f.write("left out (too large):\n" + "\n".join(self.left_out) + "\n")
                    tar.add(note, arcname="LEFT-OUT.txt")
                    os.remove(note)
        self._replace(EVIDENCE, put)

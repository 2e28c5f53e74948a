"""PASS / FAIL / WARN / INFO lines, each with its numbers.

Every verdict is printed at once and appended to a JSON-lines file in the
work folder, so that `gpu-check --summary` can total the parts run in
separate 10-minute calls.  FAIL makes the exit status 1; WARN needs a look
but does not fail (it marks what the capture cannot know yet, or a known
open issue)."""

import json
import os
import time


class Verdicts:
    def __init__(self, path=None, part="", sink=None):
        """sink: also told every verdict (its add(level, name, detail)),
        e.g. the single-call mode's summary file in $OUT."""
        self.path, self.part, self.sink = path, part, sink
        self.run = time.time_ns()  # a part run again replaces its earlier verdicts
        self.lines = []

    def add(self, level, name, detail=""):
        self.lines.append((level, name, detail))
        print(f"{level:4} {name}" + (f": {detail}" if detail else ""), flush=True)
        if self.sink:
            self.sink.add(level, name, detail)
        if self.path:
            with open(self.path, "a") as f:
                f.write(json.dumps({"part": self.part, "run": self.run, "level": level,
                                    "check": name, "detail": detail}) + "\n")

    def check(self, ok, name, detail="", level="FAIL"):
        """PASS when ok, else `level` (FAIL, or WARN for soft checks)."""
        self.add("PASS" if ok else level, name, detail)
        return ok

    def info(self, name, detail=""):
        self.add("INFO", name, detail)

    def failed(self):
        return sum(1 for lv, _, _ in self.lines if lv == "FAIL")

    def section(self, title):
        print(f"\n== {title}", flush=True)
        if self.sink:
            self.sink.stage(title)


def summarize(path):
    """The summary of every verdict recorded in path: (text, failed)."""
    if not os.path.exists(path):
        return "no results yet (run a part first)", 1
    rows = [json.loads(line) for line in open(path) if line.strip()]
    last_run = {}
    for r in rows:
        last_run[r["part"]] = max(last_run.get(r["part"], 0), r["run"])
    out, failed = [], 0
    for part in sorted(last_run):
        mine = [r for r in rows if r["part"] == part and r["run"] == last_run[part]]
        counts = {}
        for r in mine:
            counts[r["level"]] = counts.get(r["level"], 0) + 1
        out.append(f"part {part}: " + ", ".join(f"{n} {lv}" for lv, n in sorted(counts.items())))
        for r in mine:
            if r["level"] in ("FAIL", "WARN"):
                out.append(f"  {r['level']} {r['check']}: {r['detail']}")
        failed += counts.get("FAIL", 0)
    return "\n".join(out), failed

#!/usr/bin/env python3
"""Every finding says what it stands on: a non-empty 'evidence' list in the
JSON report (docs/findings.md).  Reads every JSON output of the golden cases
(tests/golden/outputs.sh: generated jobs, test-bed dumps, the Kineto corpus)
and the reports of the shared corpus's public and straggler traces.

    tests/golden/evidence.py BUILD_DIR [CORPUS_ROOT]
"""
import json, os, subprocess, sys, tempfile

# Every rule fills its evidence lines: no rule is exempt.
EXEMPT = set()


def findings_of(doc):
    """Every object in a 'findings' list, wherever it sits (report, batch)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "findings" and isinstance(v, list):
                yield from (f for f in v if isinstance(f, dict) and "id" in f)
            else:
                yield from findings_of(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from findings_of(v)


def docs_of(text):
    """The JSON documents a case file starts with (one, or one per line)."""
    dec = json.JSONDecoder()
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text) or text[at] not in "{[":
            return
        try:
            doc, at = dec.raw_decode(text, at)
        except ValueError:
            return
        yield doc


def main():
    build = os.path.abspath(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "..",
                                                              "shared", "corpus")
    report = os.path.join(build, "analyzer", "tscope-report")
    bad, seen, files = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="tsc_evidence_") as tmp:
        out = os.path.join(tmp, "out")
        subprocess.run([os.path.join(here, "outputs.sh"), build, out,
                        os.path.join(root, "kineto")], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        texts = []
        for name in sorted(os.listdir(out)):
            with open(os.path.join(out, name), errors="replace") as fh:
                texts.append((name, fh.read()))
        for sub in ("public", "stragglers"):
            base = os.path.join(root, sub)
            if not os.path.isdir(base):
                print(f"{base}: absent, skipped")
                continue
            for d in sorted(os.listdir(base)):
                path = os.path.join(base, d)
                if not os.path.isdir(path):
                    continue
                r = subprocess.run([report, "--json", path], capture_output=True, text=True)
                texts.append((f"{sub}/{d}", r.stdout))
        for name, text in texts:
            for doc in docs_of(text):
                files += 1
                for f in findings_of(doc):
                    seen += 1
                    if not f.get("evidence") and f["id"] not in EXEMPT:
                        bad.append(f"{name}: {f['id']}")
    print(f"{seen} findings in {files} JSON documents")
    for b in sorted(set(bad)):
        print(f"no evidence: {b}")
    return 1 if bad or not seen else 0


if __name__ == "__main__":
    sys.exit(main())

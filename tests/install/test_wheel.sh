#!/bin/sh
# The pip way (pyproject.toml, python/): from a copy of the source tree,
#  1. `python3 -m build --no-isolation --wheel` builds a wheel, which is
#     installed into a fresh venv (no system site-packages: the wheel alone)
#     with `pip install --no-index`; that venv's `tscope run`, with nothing
#     but the venv and the system's directories on PATH, profiles the test
#     bed's 4-rank job (the test NCCL blocking across processes, rank 2 80 ms
#     slower a step) and writes the report naming rank 2.  `import tscope`
#     gives the preload and the analyzer inside that venv, and the analyzer
#     loads cJSON, yajl and zlib from the package, not from the system.
#  2. `pip install --no-build-isolation .` into a venv that sees the system's
#     site-packages (the build backend is Debian's python3-mesonpy, and torch
#     Debian's python3-torch: there is no PyPI here); real torchrun runs 2
#     DDP ranks through that venv's `tscope run` where torch is installed.
# Skips (77) without a Python that has meson-python and build, or patchelf
# (meson-python 0.12 requires it), or the test bed.
#
#   test_wheel.sh SOURCE_DIR
set -u
src=$1
for v in TB_LAUNCH TB_RANK TB_FAKENCCL_DIR; do
    eval "p=\${$v:-}"
    [ -n "$p" ] && [ -e "$p" ] || { echo "$v not built"; exit 77; }
done
py=
for c in /usr/bin/python3 "$(command -v python3)"; do
    if [ -x "$c" ] && "$c" -c 'import mesonpy, build, venv, ensurepip' 2>/dev/null; then
        py=$c
        break
    fi
done
[ -n "$py" ] || { echo "no python3 with meson-python, build and venv (python3-mesonpy python3-build python3-venv)"; exit 77; }
command -v patchelf >/dev/null 2>&1 || { echo "no patchelf"; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/tsc_wheel_XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# Only what a clone holds: no build trees, no output of earlier runs.
mkdir "$T/src"
tar -C "$src" --exclude=./.git --exclude='./build*' --exclude='./.mesonpy*' \
    --exclude=./demo_out --exclude=./tscope_out -cf - . | tar -C "$T/src" -xf - ||
    fail "copying the source tree"

# The environment a user's shell would give: the venv's bin first, then the
# system's; nothing of the build tree, no TSCOPE_* settings.  HOME stays
# (ccache keeps its cache there); CCACHE_BASEDIR lets it reuse the objects
# of a run from another scratch folder.
in_venv() { # VENV CMD...: CMD with that venv on PATH
    venv=$1
    shift
    env -i HOME="${HOME:-$T}" PATH="$venv/bin:/usr/bin:/bin" LANG=C.UTF-8 \
        CCACHE_BASEDIR="$T/src" "$@"
}
# Seconds since the start, for the log (CI's time is measured per phase).
t0=$(date +%s)
phase() { echo "$(( $(date +%s) - t0 )) s: $*"; }

# 1. The wheel, into a venv with nothing else.
phase "source copied"
CCACHE_BASEDIR="$T/src" "$py" -m build --no-isolation --wheel --outdir "$T/dist" "$T/src" \
    >"$T/build.log" 2>&1 || { tail -40 "$T/build.log"; fail "python3 -m build --no-isolation --wheel"; }
phase "wheel built"
set -- "$T"/dist/tscope-*.whl
[ $# -eq 1 ] && [ -f "$1" ] || { ls "$T/dist"; fail "not one wheel in dist/"; }
wheel=$1
"$py" -m venv "$T/venv" || fail "python3 -m venv"
in_venv "$T/venv" pip install --no-index --no-cache-dir -q "$wheel" >"$T/pip.log" 2>&1 ||
    { cat "$T/pip.log"; fail "pip install of the wheel"; }
phase "venv made, wheel installed"
A=$T/venv
for t in tscope tscope-report tscope-ctl; do
    [ -x "$A/bin/$t" ] || fail "the wheel put no $t in the venv's bin"
done
paths=$(in_venv "$A" python -c 'import tscope; print(tscope.preload_path()); print(tscope.report_path())') ||
    fail "import tscope"
pre=$(echo "$paths" | sed -n 1p)
rep=$(echo "$paths" | sed -n 2p)
case $pre in "$A"/lib/python*/site-packages/tscope/lib/libtscope_preload.so) ;;
*) fail "tscope.preload_path() is '$pre', not in the venv" ;; esac
case $rep in "$A"/lib/python*/site-packages/tscope/bin/tscope-report) ;;
*) fail "tscope.report_path() is '$rep', not in the venv" ;; esac
[ -f "$pre" ] && [ -x "$rep" ] || fail "the preload or the analyzer is not there"
# Every library the analyzer loads is glibc's or the package's own.
pkglib=$(dirname "$pre")
ldd "$rep" >"$T/ldd" 2>&1 || { cat "$T/ldd"; fail "ldd $rep"; }
for lib in libcjson.so.1 libyajl.so.2 libz.so.1; do
    got=$(sed -n "s#^[[:space:]]*$lib => \([^ ]*\) .*#\1#p" "$T/ldd")
    [ -n "$got" ] && [ "$(realpath "$got")" = "$(realpath "$pkglib/$lib")" ] ||
        { cat "$T/ldd"; fail "the analyzer loads $lib from '$got', not from $pkglib"; }
done
grep 'not found' "$T/ldd" && fail "the analyzer misses a library"
# The preload goes into the job's processes: glibc only, nothing bundled.
ldd "$pre" | grep -v -E '^[[:space:]]*(linux-vdso|/lib64/ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so)' |
    grep . && fail "the preload needs more than glibc"
grep -q 'cJSON' "$pkglib/BUNDLED.txt" || fail "BUNDLED.txt has no cJSON notice"
in_venv "$A" python -m tscope --version | grep -q '^tscope [0-9]' || fail "python -m tscope --version"
in_venv "$A" tscope-ctl --version | grep -q '^tscope-ctl [0-9]' || fail "tscope-ctl --version"
# The child gets the venv's preload.
seen=$(in_venv "$A" tscope run --no-report --out "$T/o" -- sh -c 'printf %s "$LD_PRELOAD"')
[ "$seen" = "$pre" ] || fail "the job saw LD_PRELOAD='$seen', want '$pre'"

# The 4-rank test-bed job through the venv's tscope run.
in_venv "$A" LD_LIBRARY_PATH="$TB_FAKENCCL_DIR" TSCOPE_RUN_ID=wheeltb FAKENCCL_TIMEOUT_S=20 \
    tscope run --out "$T/job" -- \
    "$TB_LAUNCH" -n 4 -- "$TB_RANK" --steps 10 --compute-us 2000 --slow-ranks 2 --slow-ms 80 \
    >"$T/job.log" 2>&1 || { cat "$T/job.log"; fail "the job under the venv's tscope run"; }
[ "$(ls "$T/job" | grep -c '^tscope_r[0-3]_.*\.tsd$')" -eq 4 ] || { cat "$T/job.log"; fail "not 4 rank dumps"; }
grep -q "^VERDICT  straggler-bound: rank 2 " "$T/job.log" || { cat "$T/job.log"; fail "no verdict naming rank 2"; }
grep -q "^tscope: report in $T/job/report.txt\$" "$T/job.log" || fail "where the report is"
grep -q '^  ranks 4 ' "$T/job/report.txt" || fail "report.txt is not of 4 ranks"
[ -s "$T/job/report.html" ] || fail "no report.html"
in_venv "$A" tscope-report "$T/job" --json >"$T/r.json" || fail "the venv's tscope-report"
tr -d '\n\t ' <"$T/r.json" | grep -q '"straggler":{"rank":2,' || fail "the straggler is not rank 2"

phase "4-rank job profiled"

# 2. pip install . (offline: the system's build backend) into a second venv.
"$py" -m venv --system-site-packages "$T/venv2" || fail "python3 -m venv --system-site-packages"
B=$T/venv2
(cd "$T/src" && in_venv "$B" pip install --no-index --no-build-isolation --no-cache-dir -q . >"$T/pip2.log" 2>&1) ||
    { tail -40 "$T/pip2.log"; fail "pip install --no-build-isolation ."; }
phase "venv2 made, pip install . done"
pre2=$(in_venv "$B" python -c 'import tscope; print(tscope.preload_path())') || fail "import tscope (venv2)"
case $pre2 in "$B"/lib/python*/site-packages/tscope/lib/libtscope_preload.so) ;;
*) fail "venv2: tscope.preload_path() is '$pre2'" ;; esac
if in_venv "$B" python -c 'import torch' 2>/dev/null && in_venv "$B" sh -c 'command -v torchrun' >/dev/null; then
    job=$(cd "$(dirname "$0")/../torch" && pwd)/gloo_job.py
    in_venv "$B" LD_LIBRARY_PATH="$TB_FAKENCCL_DIR" OMP_NUM_THREADS=1 tscope run --out "$T/torch" -- \
        torchrun --nnodes 1 --nproc_per_node 2 --rdzv_backend c10d \
        --rdzv_endpoint 127.0.0.1:0 -r 2 -t 2 --log_dir "$T/torch-logs" \
        "$job" --result "$T/torch-result" --steps 6 --nccl "$TB_FAKENCCL_DIR/libnccl.so.2" \
        >"$T/torch.log" 2>&1 || { tail -40 "$T/torch.log"; fail "torchrun under the venv's tscope run"; }
    [ "$(ls "$T/torch" | grep -c '\.tsd$')" -eq 2 ] ||
        { ls "$T/torch"; tail -40 "$T/torch.log"; fail "torchrun: not 2 rank dumps"; }
    grep -q '^  ranks 2 ' "$T/torch/report.txt" || fail "torchrun: the report is not of 2 ranks"
    phase "torchrun profiled"
else
    echo "no torch or torchrun: the torchrun case is skipped"
fi
echo ok

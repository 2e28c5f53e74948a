#!/usr/bin/env bash
# tscope demo without a GPU: build, run a 4-rank training-like job on the
# test NCCL under the preload (rank 2 computes ~30% longer than the others),
# then analyze what was recorded.
#
#   scripts/demo.sh            # from anywhere; works in the repository root
#
# BUILD_DIR (default ./build) and OUT_DIR (default ./demo_out) may be
# overridden.  Exits 0 when everything worked.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
OUT_DIR=${OUT_DIR:-demo_out}
STEPS=${STEPS:-60}
NRANKS=4

say() { printf '\n== %s\n' "$*"; }

# 1. Dependencies, only when missing (sudo only when not root).
need=()
command -v meson >/dev/null 2>&1 || need+=(meson)
command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v cc >/dev/null 2>&1 || need+=(gcc)
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists libcjson || need+=(libcjson-dev)
    pkg-config --exists cmocka || need+=(libcmocka-dev)
else
    need+=(libcjson-dev libcmocka-dev)
fi
# The package manager's output goes to a log file, shown only on failure.
mkdir -p "$BUILD_DIR"
APT_LOG=$BUILD_DIR/demo-apt.log
if [ ${#need[@]} -gt 0 ]; then
    say "installing with apt-get: ${need[*]} (log: $APT_LOG)"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    if ! { $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive \
            $sudo apt-get install -y -q "${need[@]}"; } >"$APT_LOG" 2>&1; then
        tail -n 20 "$APT_LOG" >&2
        echo "demo: apt-get failed; the whole log is in $APT_LOG" >&2
        exit 1
    fi
fi
# The project's own list may name more (other parts' libraries); it says
# what it installs in one line.
if [ -x scripts/install-deps.sh ]; then
    seen=0
    [ -f "$APT_LOG" ] && seen=$(wc -l <"$APT_LOG")
    rc=0
    scripts/install-deps.sh >>"$APT_LOG" 2>&1 || rc=$?
    tail -n +"$((seen + 1))" "$APT_LOG" | grep '^tscope: installing' >&2 || true
    if [ "$rc" -ne 0 ]; then
        tail -n 20 "$APT_LOG" >&2
        echo "demo: scripts/install-deps.sh failed; the whole log is in $APT_LOG" >&2
        exit 1
    fi
fi

# 2. Build (only what the demo runs, so an unrelated broken test cannot
#    stop it); output is shown only when something fails.
say "building into $BUILD_DIR"
quiet() {
    local out
    if ! out=$("$@" 2>&1); then
        printf '%s\n' "$out" >&2
        echo "demo: '$*' failed" >&2
        exit 1
    fi
}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    quiet meson setup "$BUILD_DIR"
fi
PRELOAD=$BUILD_DIR/preload/libtscope_preload.so
REPORT=$BUILD_DIR/analyzer/tscope-report
LAUNCH=$BUILD_DIR/tests/testbed/tsc-testbed-launch
RANK=$BUILD_DIR/tests/testbed/tsc-testbed-rank
NCCL_DIR=$BUILD_DIR/tests/testbed/fakenccl
quiet ninja -C "$BUILD_DIR" preload/libtscope_preload.so analyzer/tscope-report \
    tests/testbed/tsc-testbed-launch tests/testbed/tsc-testbed-rank \
    tests/testbed/fakenccl/libnccl.so.2
for f in "$PRELOAD" "$REPORT" "$LAUNCH" "$RANK" "$NCCL_DIR/libnccl.so.2"; do
    [ -e "$f" ] || { echo "demo: $f was not built" >&2; exit 1; }
done

# 3. Run: 4 ranks, 100 ms of "compute" per step, rank 2 at 130 ms.
say "running $NRANKS ranks x $STEPS steps under the preload (rank 2 is 30% slower)"
rm -rf "$OUT_DIR"
start=$(date +%s%N)
LD_PRELOAD=$(realpath "$PRELOAD") \
LD_LIBRARY_PATH=$(realpath "$NCCL_DIR")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
TSCOPE_OUT=$OUT_DIR \
    "$LAUNCH" -n "$NRANKS" -- "$RANK" --steps "$STEPS" --compute-us 100000 \
        --slow-ranks 2 --slow-factor 1.3 --buckets 1M,256K,64K,16K --grouped-buckets 2 \
        --fsdp-bytes 64K --ring-bytes 16K
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
printf 'job took %d.%03d s; dumps:\n' $((ms / 1000)) $((ms % 1000))
ls -l "$OUT_DIR"

# 4. Analyze.  Exit status 0 = clean, 1 = result with problems noted.
say "tscope-report $OUT_DIR"
set +e
report_out=$("$REPORT" "$OUT_DIR" 2>&1)
rc=$?
set -e
printf '%s\n' "$report_out"
if printf '%s' "$report_out" | grep -qi "not available"; then
    # The analyzer has not landed in this build: show what was recorded.
    say "tscope-report info $OUT_DIR"
    "$REPORT" info "$OUT_DIR"
elif [ $rc -gt 1 ]; then
    echo "demo: tscope-report failed with status $rc" >&2
    exit $rc
else
    # The same analysis as one page with charts, to open in a browser.
    "$REPORT" html "$OUT_DIR" -o "$OUT_DIR/report.html" 2>/dev/null &&
        say "charts: $OUT_DIR/report.html (tscope-report html $OUT_DIR -o FILE)"
fi
say "demo finished"

#!/usr/bin/env bash
# The GPU capture on the CUDA stand-in, the old path and the new side by
# side in one run (docs/benchmarks.md, "GPU capture"):
#   - kernels in the dump against kernels launched, events dropped, dump
#     bytes per kernel: 2 ranks x 40 steps x 4,000 launches, and a burst of
#     1,000,000 launches on one rank;
#   - tscope's memory: peak RSS of the job with the preload minus without;
#   - tscope's CPU per launch, in instructions (valgrind callgrind, the
#     instructions executed inside libtscope_preload.so, so the stand-in's
#     own cost is not counted): 1 rank x 5 steps x 4,000 launches.
#
#   scripts/bench-gpu-capture.sh [BUILD_DIR [BASE_REV]]
#
# BUILD_DIR (default build) holds the stand-in and the new preload;
# BASE_REV (default 810bbb4, before the writer-side GPU path) is built in a
# temporary worktree for the old preload.  Needs the CUDA headers (the
# stand-in), valgrind for the instruction counts (skipped without it).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
base_rev=${2:-810bbb4}
build=$(cd "$build" && pwd)
work=$(mktemp -d /tmp/tsc-bench-gpu-XXXXXX)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

job="$build/tests/standin/tsc-standin-job"
launch="$build/tests/testbed/tsc-testbed-launch"
report="$build/analyzer/tscope-report"
libs="$build/tests/standin:$build/tests/testbed/fakenccl"
new_so="$build/preload/libtscope_preload.so"
[ -x "$job" ] || { echo "no stand-in in $build (needs the CUDA headers)" >&2; exit 1; }

echo "building the old preload ($base_rev) ..." >&2
git worktree add -q --detach "$work/base" "$base_rev"
(cd "$work/base" && meson setup build -Dtests=disabled >/dev/null &&
    ninja -C build preload/libtscope_preload.so >/dev/null)
old_so="$work/base/build/preload/libtscope_preload.so"

# What the dumps of a directory hold: kernels (plain and folded), folded
# ones, events tscope dropped, records CUPTI dropped, the GPU path's memory
# at most (MiB), over all ranks.
dump_counts() {
    "$report" info --json "$1" 2>/dev/null | python3 -c '
import json, sys
k = folded = dropped = cupti = mem = 0
for f in json.load(sys.stdin)["files"]:
    ev, meta = f.get("events", {}), f.get("meta", {})
    k += ev.get("kernel", 0) + ev.get("kernel_launch", 0)
    folded += ev.get("kernel_launch", 0)
    dropped += f.get("dropped_events", 0)
    cupti += int(meta.get("cupti_dropped_records", 0))
    mem = max(mem, int(meta.get("gpu_capture_bytes", 0)))
print(k, folded, dropped, cupti, mem >> 20)'
}

bytes_in() { du -cb "$1"/*.tsd | tail -1 | cut -f1; }

# Kernels the job launched (its own count): layer kernels, GEMMs, NCCL's.
launched_by() {
    local total=0
    for f in "$1".*; do
        total=$((total + $(awk -F= '/^(runtime_launches|gemm_kernels|nccl_calls|graph_kernels)=/ {
            n += $2 } END { print n + 0 }' "$f")))
    done
    echo "$total"
}

# run NAME SO RANKS ARGS...: one measured job; prints a table row
run() {
    local name=$1 so=$2 ranks=$3
    shift 3
    local out="$work/$name" truth="$work/$name.job"
    rm -rf "$out"
    local env=(env LD_LIBRARY_PATH="$libs" LD_PRELOAD="$so" TSCOPE_OUT="$out" TSCOPE_QUIET=1)
    if [ "$ranks" -gt 1 ]; then
        "${env[@]}" "$launch" -n "$ranks" -- "$job" --truth "$truth" "$@" >/dev/null
    else
        "${env[@]}" "$job" --truth "$truth" "$@" >/dev/null
    fi
    local launched bytes
    launched=$(launched_by "$truth")
    read -r kept folded dropped cupti mem < <(dump_counts "$out")
    bytes=$(bytes_in "$out")
    printf '  %-26s %9d %9d %7s %9d %9d %8.1f %7s\n' "$name" "$launched" "$kept" \
        "$(python3 -c "print(f'{100 * $folded / max($kept, 1):.1f}%')")" "$dropped" "$cupti" \
        "$(python3 -c "print($bytes / max($kept, 1))")" "$mem"
}

# peak RSS (MiB) of one rank, preload minus none (includes what the
# stand-in's CUPTI keeps for tscope, as the real one would)
rss() {
    local so=$1
    shift
    local with without
    with=$( { env LD_LIBRARY_PATH="$libs" LD_PRELOAD="$so" TSCOPE_OUT="$work/rss" \
        TSCOPE_QUIET=1 /usr/bin/time -f '%M' "$job" "$@" >/dev/null; } 2>&1 | tail -1)
    without=$( { env LD_LIBRARY_PATH="$libs" /usr/bin/time -f '%M' "$job" "$@" >/dev/null; } \
        2>&1 | tail -1)
    echo $(((with - without) / 1024))
}

# instructions inside libtscope_preload.so per kernel launched
instructions() {
    local so=$1
    command -v valgrind >/dev/null || { echo "-"; return; }
    local cg="$work/cg.out"
    env LD_LIBRARY_PATH="$libs" LD_PRELOAD="$so" TSCOPE_OUT="$work/cg" TSCOPE_QUIET=1 \
        STANDIN_TRUTH="$work/cg.truth" \
        valgrind --tool=callgrind --callgrind-out-file="$cg" "$job" --steps 5 \
        --launches 4000 >/dev/null 2>&1
    local launched
    launched=$(sed -n 's/^kernels=//p' "$work/cg.truth.0")  # the stand-in CUPTI's count
    callgrind_annotate --threshold=100 "$cg" 2>/dev/null | python3 -c '
import re, sys
total = 0
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+)\s.*libtscope_preload\.so", line)
    if m:
        total += int(m.group(1).replace(",", ""))
print(round(total / int(sys.argv[1])))' "$launched"
}

echo
echo "GPU capture on the CUDA stand-in ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
printf '  %-26s %9s %9s %7s %9s %9s %8s %7s\n' "run" "launched" "in dump" "folded" \
    "dropped" "CUPTI" "B/kernel" "GPU MiB"
for path in old new; do
    so=$old_so
    [ "$path" = new ] && so=$new_so
    run "$path: 2x40 steps x 4000" "$so" 2 --steps 40 --launches 4000
    run "$path: burst 1,000,000" "$so" 1 --steps 2 --launches 10 --burst 1000000
done
echo
echo "  dropped: events tscope dropped; CUPTI: records CUPTI dropped (no buffer);"
echo "  B/kernel: all dump bytes over kernels in it; GPU MiB: CUPTI buffers + fold"
echo "  tables at most (the new path's own count)"
echo
printf '  %-8s %22s %22s %26s\n' "path" "RSS MiB 4000/step" "RSS MiB burst" "instructions/launch"
for path in old new; do
    so=$old_so
    [ "$path" = new ] && so=$new_so
    printf '  %-8s %22s %22s %26s\n' "$path" \
        "$(rss "$so" --steps 40 --launches 4000)" \
        "$(rss "$so" --steps 2 --launches 10 --burst 1000000)" \
        "$(instructions "$so")"
done

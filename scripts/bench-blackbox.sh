#!/usr/bin/env bash
# Black-box mode against the default mode, side by side in one run
# (docs/blackbox.md): a 4-rank test-bed job under the preload, the modes
# interleaved ROUNDS times.  Per mode, medians over the rounds of:
#   ms/step     job wall time / steps (the job's own cost of recording)
#   CPU ms/step user + system CPU time of all the job's processes / steps
#               (the writer thread's work included)
#   RSS MiB     peak RSS of the largest process (launcher's children)
#   disk B/step bytes on disk per rank per step (dumps, summary files,
#               metrics; no capture windows: the balanced job writes none)
# Then the cost of one intercepted call, bench_preload, in both modes.
#
#   scripts/bench-blackbox.sh [BUILD_DIR] [STEPS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build} steps=${2:-3000} rounds=${3:-3}
tb=$build/tests/testbed
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run_job() { # mode -> "wall_s rss_kib bytes cpu_s"
    local mode=$1 dir=$out/$1
    rm -rf "$dir"
    python3 - "$dir" "$mode" "$steps" "$build" <<'PY'
import os, resource, subprocess, sys, time
d, mode, steps, build = sys.argv[1:5]
tb = os.path.join(build, "tests/testbed")
env = dict(os.environ, TSCOPE_OUT=d,
           LD_PRELOAD=os.path.realpath(os.path.join(build, "preload/libtscope_preload.so")),
           LD_LIBRARY_PATH=os.path.realpath(os.path.join(tb, "fakenccl")))
if mode == "blackbox":
    env.update(TSCOPE_MODE="blackbox", TSCOPE_BB_K="1000")
cmd = [os.path.join(tb, "tsc-testbed-launch"), "-n", "4", "--", os.path.join(tb, "tsc-testbed-rank"),
       "--steps", steps, "--compute-us", "1000", "--no-extras"]
t0 = time.monotonic()
subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
rss, cpu = ru.ru_maxrss, ru.ru_utime + ru.ru_stime
size = 0
for root, dirs, files in os.walk(d):
    if "/capture-" in root + "/":
        continue
    size += sum(os.path.getsize(os.path.join(root, f)) for f in files)
print(f"{wall:.3f} {rss} {size} {cpu:.3f}")
PY
}

declare -A wall rss disk cpu
for r in $(seq "$rounds"); do
    for mode in full blackbox; do
        read -r w m b c < <(run_job "$mode")
        wall[$mode]+="$w "
        rss[$mode]+="$m "
        disk[$mode]+="$b "
        cpu[$mode]+="$c "
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-9s %12s %12s %9s %14s   (4 ranks, %s steps, median of %s rounds)\n' mode 'ms/step' \
    'CPU ms/step' 'RSS MiB' 'disk B/rank/step' "$steps" "$rounds"
for mode in full blackbox; do
    w=$(echo "${wall[$mode]}" | median) m=$(echo "${rss[$mode]}" | median) b=$(echo "${disk[$mode]}" | median)
    c=$(echo "${cpu[$mode]}" | median)
    awk -v mode="$mode" -v w="$w" -v m="$m" -v b="$b" -v c="$c" -v s="$steps" \
        'BEGIN {printf "%-9s %12.4f %12.4f %9.1f %14.1f\n", mode, 1000*w/s, 1000*c/s, m/1024, b/4/s}'
done
echo
echo "one intercepted call (bench_preload, stub NCCL), default mode:"
"$build/tests/capture/bench_preload" "$build/preload/libtscope_preload.so" 200000 3 | tail -n 6
echo "same, TSCOPE_MODE=blackbox:"
TSCOPE_MODE=blackbox TSCOPE_BB_K=1000 "$build/tests/capture/bench_preload" "$build/preload/libtscope_preload.so" 200000 3 | tail -n 6

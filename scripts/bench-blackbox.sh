#!/usr/bin/env bash
# Black-box mode against the default mode, side by side in one run
# (docs/blackbox.md): a 4-rank test-bed job under the preload, and a
# 4-rank job of the CUDA stand-in (tests/standin: CUPTI kernels and
# copies, cuBLAS GEMMs, so black-box mode also writes each step's extra),
# the modes interleaved ROUNDS times.  Per job and mode, medians over the
# rounds of:
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

run_job() { # job mode -> "wall_s rss_kib bytes cpu_s"
    local job=$1 mode=$2 dir=$out/$1-$2
    rm -rf "$dir"
    python3 - "$dir" "$job" "$mode" "$steps" "$build" <<'PY'
import os, resource, subprocess, sys, time
d, job, mode, steps, build = sys.argv[1:6]
tb = os.path.join(build, "tests/testbed")
libs = [os.path.join(tb, "fakenccl")]
if job == "gpu":
    libs.insert(0, os.path.join(build, "tests/standin"))
env = dict(os.environ, TSCOPE_OUT=d,
           LD_PRELOAD=os.path.realpath(os.path.join(build, "preload/libtscope_preload.so")),
           LD_LIBRARY_PATH=":".join(os.path.realpath(l) for l in libs))
if mode == "blackbox":
    env.update(TSCOPE_MODE="blackbox", TSCOPE_BB_K="1000")
if job == "gpu":
    rank = [os.path.join(build, "tests/standin/tsc-standin-job"), "--steps", steps,
            "--gemms", "4", "--launches", "20"]
else:
    rank = [os.path.join(tb, "tsc-testbed-rank"), "--steps", steps, "--compute-us", "1000",
            "--no-extras"]
cmd = [os.path.join(tb, "tsc-testbed-launch"), "-n", "4", "--"] + rank
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

jobs=testbed
[ -x "$build/tests/standin/tsc-standin-job" ] && jobs="testbed gpu"
declare -A wall rss disk cpu
for r in $(seq "$rounds"); do
    for job in $jobs; do
        for mode in full blackbox; do
            read -r w m b c < <(run_job "$job" "$mode")
            wall[$job-$mode]+="$w "
            rss[$job-$mode]+="$m "
            disk[$job-$mode]+="$b "
            cpu[$job-$mode]+="$c "
        done
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-8s %-9s %12s %12s %9s %14s   (4 ranks, %s steps, median of %s rounds)\n' job mode \
    'ms/step' 'CPU ms/step' 'RSS MiB' 'disk B/rank/step' "$steps" "$rounds"
for job in $jobs; do
    for mode in full blackbox; do
        k=$job-$mode
        w=$(echo "${wall[$k]}" | median) m=$(echo "${rss[$k]}" | median) b=$(echo "${disk[$k]}" | median)
        c=$(echo "${cpu[$k]}" | median)
        awk -v job="$job" -v mode="$mode" -v w="$w" -v m="$m" -v b="$b" -v c="$c" -v s="$steps" \
            'BEGIN {printf "%-8s %-9s %12.4f %12.4f %9.1f %14.1f\n", job, mode, 1000*w/s, 1000*c/s, m/1024, b/4/s}'
    done
done
echo
echo "one intercepted call (bench_preload, stub NCCL), default mode:"
"$build/tests/capture/bench_preload" "$build/preload/libtscope_preload.so" 200000 3 | tail -n 6
echo "same, TSCOPE_MODE=blackbox:"
TSCOPE_MODE=blackbox TSCOPE_BB_K=1000 "$build/tests/capture/bench_preload" "$build/preload/libtscope_preload.so" 200000 3 | tail -n 6

#!/bin/bash
# Trials of the cause pass on the test bed (docs/findings.md, "Causes"):
# each case injects one fault into one rank of a real multi-process job
# under the preload, and counts the trials whose report names the right
# rank with the right cause first (or, for the balanced job, no cause
# block; for a slowdown without evidence, "cause unknown").
#
#   scripts/cause-trials.sh BUILD_DIR [TRIALS] [RANKS] [CASES]
#
# CASES (default all), stand-in GPU job (CUPTI and CUDA stand-ins, kernel
# records): gpu-device gpu-work gpu-host gpu-unknown gpu-balanced; CPU job
# (tsc-testbed-rank, host telemetry only): cpu-work cpu-host cpu-unknown
# cpu-balanced cpu-arrival.  cpu-arrival: the slow rank does 1.5x the CPU
# work and the next rank receives from it before its own compute in every
# step; right when the next rank's first cause is arrival naming the slow
# rank and the slow rank's own block says work ("RANK arrival<-UP UP work").
# Prints one line per trial and a count per case.
set -u
build=$(cd "${1:?usage: cause-trials.sh BUILD_DIR [TRIALS] [RANKS] [CASES]}" && pwd) || exit 2
trials=${2:-20}
ranks=${3:-4}
cases=${4:-"gpu-device gpu-work gpu-host gpu-unknown gpu-balanced cpu-work cpu-host cpu-unknown cpu-balanced cpu-arrival"}
slow=$((ranks / 2))
work=$(mktemp -d /tmp/cause-trials.XXXXXX)
trap 'rm -rf "$work"' EXIT

launch=$build/tests/testbed/tsc-testbed-launch
report=$build/analyzer/tscope-report
preload=$build/preload/libtscope_preload.so
fakenccl=$build/tests/testbed/fakenccl
fakenvml=$build/tests/testbed/fakenvml
standin=$build/tests/standin

# 40 steps of 60 kernels of 300 us; the slow rank's fault adds ~30%.
gpu_job() {
    local out=$1; shift
    env -u CUDA_INJECTION64_PATH FAKENCCL_NO_KERNEL=1 LD_PRELOAD="$preload" \
        LD_LIBRARY_PATH="$standin:$fakenccl:$fakenvml" TSCOPE_OUT="$out/d" \
        "$launch" -n "$ranks" --rdzv "$out/rdzv" -- "$standin/tsc-standin-job" \
        --steps 40 --launches 60 --kernel-ns 300000 --sync-first "$@" >/dev/null 2>&1
}

# 60 steps of 5 ms of main-thread CPU work (--cpu-work) or sleep.
cpu_job() {
    local out=$1; shift
    LD_PRELOAD="$preload" LD_LIBRARY_PATH="$fakenccl" TSCOPE_OUT="$out/d" \
        "$launch" -n "$ranks" --rdzv "$out/rdzv" -- "$build/tests/testbed/tsc-testbed-rank" \
        --steps 60 --compute-us 5000 "$@" >/dev/null 2>&1
}

# "LATE arrival<-FROM UP KIND": the late rank's first cause with the rank
# its evidence names first, then the upstream rank's first cause ("none"
# for a missing block).
arrival_causes() {
    "$report" "$1/d" --json 2>/dev/null | python3 -c '
import json, re, sys
late, up = int(sys.argv[1]), int(sys.argv[2])
c = {b["rank"]: b for b in json.load(sys.stdin).get("causes") or []}
def first(r):
    b = c.get(r)
    if b is None: return "none"
    if not b["causes"]: return "unknown"
    k = b["causes"][0]
    if k["kind"] != "arrival": return k["kind"]
    m = re.search(r"from rank (\d+) \(", k["evidence"])
    return "arrival<-" + (m.group(1) if m else "?")
print(late, first(late), up, first(up))' "$2" "$3"
}

# "RANK KIND" of the first cause block's first cause, "RANK unknown",
# or "none" when the report has no cause block.
first_cause() {
    "$report" "$1/d" --json 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin).get("causes") or []
if not c: print("none")
else:
    b = c[0]
    print(b["rank"], b["causes"][0]["kind"] if b["causes"] else "unknown")'
}

for case in $cases; do
    want="$slow ${case#*-}"
    ok=0
    for t in $(seq 1 "$trials"); do
        out=$work/$case.$t
        mkdir -p "$out/rdzv"
        case $case in
        gpu-device) FAKE_NVML_THROTTLE_RANK=$slow FAKE_NVML_PCIE_RANK=$slow gpu_job "$out" --slow-rank $slow --kernel-factor 1.3 ;;
        gpu-work) gpu_job "$out" --slow-rank $slow --extra-launches 18 ;;
        gpu-host) gpu_job "$out" --slow-rank $slow --launch-gap-us 400 ;;
        gpu-unknown) gpu_job "$out" --slow-rank $slow --idle-us 6000 ;;
        gpu-balanced) gpu_job "$out"; want=none ;;
        cpu-work) cpu_job "$out" --cpu-work --slow-ranks $slow --slow-factor 1.5 ;;
        cpu-host) cpu_job "$out" --cpu-work --pin-cpu $slow:0 --burn-threads $slow:2 ;;
        cpu-unknown) cpu_job "$out" --slow-ranks $slow --slow-factor 1.5 ;;
        cpu-balanced) cpu_job "$out" --cpu-work; want=none ;;
        cpu-arrival)
            late=$(((slow + 1) % ranks))
            cpu_job "$out" --cpu-work --slow-ranks $slow --slow-factor 1.5 --upstream $late:$slow
            want="$late arrival<-$slow $slow work" ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
        esac
        if [ "$case" = cpu-arrival ]; then got=$(arrival_causes "$out" "$late" "$slow")
        else got=$(first_cause "$out"); fi
        [ "$got" = "$want" ] && ok=$((ok + 1))
        echo "$case trial $t: $got (want $want)"
        rm -rf "$out"
    done
    echo "== $case, $ranks ranks: $ok of $trials right"
done

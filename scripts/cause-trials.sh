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
# records): gpu-device gpu-work gpu-host gpu-unknown gpu-balanced gpu-link
# gpu-health gpu-evidence gpu-work-evidence; CPU job (tsc-testbed-rank, host
# telemetry only): cpu-work cpu-host cpu-host-balanced cpu-unknown
# cpu-balanced cpu-arrival cpu-network cpu-network-evidence
# cpu-work-network.  cpu-arrival: the slow rank does 1.5x the CPU work and
# the next rank receives from it before its own compute in every step;
# right when the next rank's first cause is arrival naming the slow rank
# and the slow rank's own block says work ("RANK arrival<-UP UP work").
# cpu-host: every rank sleeps 5 ms and works 1 ms on the CPU a step; the
# slow rank runs at nice 10 pinned to CPU 0, where a busy process (nice 0)
# runs during the job (cpu-host-balanced: the same job, no rank pinned or
# niced, no busy process: with one, an unpinned rank that lands on CPU 0
# is contended for real and named, as 1 of 20 8-rank trials did).  gpu-link: the slow rank's copies 4x slower, the fake
# NVML says its link is down-trained; gpu-health: its kernels 1.3x slower
# at normal clocks, the fake NVML reports an XID and failing memory;
# gpu-evidence: every fake NVML fault on the slow rank, nothing slower
# (right: no block); gpu-work-evidence: the same faults and 18 more kernels
# (right: work).  cpu-network: the slow rank's send/recv batches wait 2 ms
# (FAKENCCL_SLOW_NIC) while the symbol errors and xmit waits of its own
# fake sysfs port climb (right: its block names network first; the rank it
# sends to is slower too); cpu-network-evidence: the counters climb,
# nothing slower (right: no block); cpu-work-network: 1.5x CPU work with
# the counters climbing (right: work).
# Prints one line per trial and a count per case.  CAUSE_TRIALS_KEEP=DIR
# keeps the dumps of every wrong trial there (DIR/CASE.TRIAL).
set -u
build=$(cd "${1:?usage: cause-trials.sh BUILD_DIR [TRIALS] [RANKS] [CASES]}" && pwd) || exit 2
trials=${2:-20}
ranks=${3:-4}
cases=${4:-"gpu-device gpu-work gpu-host gpu-unknown gpu-balanced gpu-link gpu-health gpu-evidence gpu-work-evidence cpu-work cpu-host cpu-host-balanced cpu-unknown cpu-balanced cpu-arrival cpu-network cpu-network-evidence cpu-work-network"}
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
# LAUNCH_ARGS (an array) goes to the launcher.
LAUNCH_ARGS=()
cpu_job() {
    local out=$1; shift
    LD_PRELOAD="$preload" LD_LIBRARY_PATH="$fakenccl" TSCOPE_OUT="$out/d" \
        "$launch" -n "$ranks" --rdzv "$out/rdzv" "${LAUNCH_ARGS[@]}" -- \
        "$build/tests/testbed/tsc-testbed-rank" --steps 60 --compute-us 5000 "$@" >/dev/null 2>&1
}

# The stand-in job with the test libnvidia-ml on the library path.
gpu_nvml_job() {
    local out=$1; shift
    LD_LIBRARY_PATH="$standin:$fakenccl:$fakenvml" gpu_job "$out" "$@"
}
all_nvml_faults="FAKE_NVML_PCIE_RANK=$slow FAKE_NVML_XID_RANK=$slow FAKE_NVML_MEMORY_RANK=$slow FAKE_NVML_NVLINK_RANK=$slow"

# A busy process pinned to CPU 0 during "$@".
with_spinner() {
    taskset -c 0 sh -c 'while :; do :; done' >/dev/null 2>&1 &
    local spin=$!
    "$@"
    kill "$spin"
    wait "$spin" 2>/dev/null
}

# A fake sysfs tree with one InfiniBand port, every counter at 0.
port_tree() {
    local p=$1/class/infiniband/mlx5_0/ports/1
    mkdir -p "$p/counters"
    for c in port_xmit_wait symbol_error link_downed link_error_recovery port_rcv_errors; do
        echo 0 >"$p/counters/$c"
    done
    echo "4: ACTIVE" >"$p/state"
    echo "100 Gb/sec (4X EDR)" >"$p/rate"
}

# cpu_job "$@" with every rank's own port tree; the slow rank's symbol
# errors and xmit waits climb every 50 ms while the job runs.  The sampler
# reads ports every 10th sample: every 200 ms at TSCOPE_NVML_MS=20.
with_climbing_port() {
    local out=$1
    port_tree "$out/sys-ok"
    port_tree "$out/sys-bad"
    local c=$out/sys-bad/class/infiniband/mlx5_0/ports/1/counters
    ( n=0; while [ ! -e "$out/done" ]; do n=$((n + 1))
          echo $((3 * n)) >"$c/.s" && mv "$c/.s" "$c/symbol_error"
          echo $((500 * n)) >"$c/.w" && mv "$c/.w" "$c/port_xmit_wait"
          sleep 0.05; done ) &
    local climber=$!
    LAUNCH_ARGS=(--env "$slow:TSCOPE_SYSFS_ROOT=$out/sys-bad")
    TSCOPE_NVML_MS=20 TSCOPE_SYSFS_ROOT=$out/sys-ok cpu_job "$@"
    LAUNCH_ARGS=()
    touch "$out/done"
    wait "$climber"
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

# "RANK KIND" of that rank's block's first cause, "RANK unknown", or
# "none" when it has no block.
cause_of() {
    "$report" "$1/d" --json 2>/dev/null | python3 -c '
import json, sys
r = int(sys.argv[1])
c = [b for b in json.load(sys.stdin).get("causes") or [] if b["rank"] == r]
if not c: print("none")
else: print(r, c[0]["causes"][0]["kind"] if c[0]["causes"] else "unknown")' "$2"
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
        gpu-link) STANDIN_COPY_BYTES_PER_US=2500 FAKE_NVML_PCIE_RANK=$slow gpu_nvml_job "$out" \
            --slow-rank $slow --copy-factor 4 --batch-bytes 8388608; want="$slow gpu-link" ;;
        gpu-health) TSCOPE_NVML_MS=20 FAKE_NVML_XID_RANK=$slow FAKE_NVML_MEMORY_RANK=$slow \
            gpu_nvml_job "$out" \
            --slow-rank $slow --kernel-factor 1.3; want="$slow gpu-health" ;;
        gpu-evidence) (export $all_nvml_faults; gpu_nvml_job "$out"); want=none ;;
        gpu-work-evidence) (export $all_nvml_faults; gpu_nvml_job "$out" --slow-rank $slow \
            --extra-launches 18); want="$slow work" ;;
        cpu-host) with_spinner cpu_job "$out" --cpu-us 1000 --buckets 4K --fsdp-bytes 0 \
            --ring-bytes 0 --pin-cpu $slow:0 --nice $slow:10 ;;
        cpu-host-balanced) cpu_job "$out" --cpu-us 1000 --buckets 4K --fsdp-bytes 0 \
            --ring-bytes 0; want=none ;;
        cpu-network) FAKENCCL_SLOW_NIC=$slow:2000 with_climbing_port "$out" --steps 120 --buckets 4K \
            --fsdp-bytes 0 ;;
        cpu-network-evidence) with_climbing_port "$out" --steps 120 --buckets 4K --fsdp-bytes 0
            want=none ;;
        cpu-work-network) with_climbing_port "$out" --cpu-work --slow-ranks $slow \
            --slow-factor 1.5; want="$slow work" ;;
        cpu-unknown) cpu_job "$out" --slow-ranks $slow --slow-factor 1.5 ;;
        cpu-balanced) cpu_job "$out" --cpu-work; want=none ;;
        cpu-arrival)
            late=$(((slow + 1) % ranks))
            cpu_job "$out" --cpu-work --slow-ranks $slow --slow-factor 1.5 --upstream $late:$slow
            want="$late arrival<-$slow $slow work" ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
        esac
        if [ "$case" = cpu-arrival ]; then got=$(arrival_causes "$out" "$late" "$slow")
        elif [ "$case" = cpu-network ]; then got=$(cause_of "$out" "$slow")
        else got=$(first_cause "$out"); fi
        [ "$got" = "$want" ] && ok=$((ok + 1))
        echo "$case trial $t: $got (want $want)"
        if [ "$got" != "$want" ] && [ -n "${CAUSE_TRIALS_KEEP:-}" ]; then
            mkdir -p "$CAUSE_TRIALS_KEEP" && mv "$out" "$CAUSE_TRIALS_KEEP/$case.$t.$ranks"
        fi
        rm -rf "$out"
    done
    echo "== $case, $ranks ranks: $ok of $trials right"
done

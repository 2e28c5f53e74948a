#!/bin/sh
# `meson install` into a scratch DESTDIR, then the installed files alone:
# the `tscope` launcher runs the test bed's 4-rank job (the test NCCL
# blocking across processes, rank 2 80 ms slower per step) under the
# installed preload, and the installed tscope-report reads what it wrote.
# Also the launcher's contract: exit status passed through (a signal as
# 128+N), LD_PRELOAD put in front of the value already set, --mode blackbox
# sets TSCOPE_MODE, tscope-ctl writes a trigger.  Real torchrun through the launcher where Debian's python3-torch
# is installed.  Skips (77) without the test bed.
#
#   test_install.sh BUILD_DIR MESON PREFIX BINDIR LIBDIR DATADIR HAVE_MPI
set -u
build=$1 meson=$2 prefix=$3 bindir=$4 libdir=$5 datadir=$6 have_mpi=$7
for v in TB_LAUNCH TB_RANK TB_FAKENCCL_DIR; do
    eval "p=\${$v:-}"
    [ -n "$p" ] && [ -e "$p" ] || { echo "$v not built"; exit 77; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/tsc_install_XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$meson" install -C "$build" --destdir "$T/stage" --no-rebuild >"$T/install.log" 2>&1 ||
    { cat "$T/install.log"; fail "meson install"; }
# Absolute install dirs stay absolute under DESTDIR; relative ones are under the prefix.
under() { case $1 in /*) echo "$T/stage$1" ;; *) echo "$T/stage$prefix/$1" ;; esac; }
bin=$(under "$bindir")
lib=$(under "$libdir")
share=$(under "$datadir")
for f in "$bin/tscope" "$bin/tscope-report" "$lib/libtscope_preload.so" \
         "$share/bash-completion/completions/tscope" \
         "$share/bash-completion/completions/tscope-report"; do
    [ -e "$f" ] || fail "$f not installed"
done
[ -x "$bin/tscope" ] || fail "the launcher is not executable"
if [ "$have_mpi" = 1 ]; then
    [ -x "$bin/tscope-report-mpi" ] || fail "tscope-report-mpi not installed"
fi
# The completion file parses in bash and completes the commands.
if command -v bash >/dev/null 2>&1; then
    got=$(bash -c '. "$1"; COMP_WORDS=(tscope r); COMP_CWORD=1; _tscope; echo "${COMPREPLY[*]}"' \
        _ "$share/bash-completion/completions/tscope") || fail "completion does not load"
    [ "$got" = "run report" ] || fail "completion of 'tscope r' gave '$got'"
fi

tscope=$bin/tscope
# An ASan build's preload brings the ASan runtime with it, but the launcher
# puts the preload first in LD_PRELOAD, where ASan wants its runtime: its
# order check is off (and leak checks, for the uninstrumented shells).
if [ -n "${TB_ASAN_RUNTIME:-}" ]; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
fi
# Nothing from the build tree: the installed files only.
unset TSCOPE_PRELOAD TSCOPE_REPORT TSCOPE_DISABLE CUDA_INJECTION64_PATH
"$tscope" --help | grep -q 'tscope run' || fail "--help"
"$tscope" --version | grep -q '^tscope [0-9]' || fail "--version"

# Exit status: a code, a signal, the launcher's own usage errors.
"$tscope" run --no-report --out "$T/x" -- sh -c 'exit 7'
[ $? -eq 7 ] || fail "exit code 7 not passed through"
"$tscope" run --no-report --out "$T/x" -- sh -c 'kill -TERM $$'
[ $? -eq 143 ] || fail "death by SIGTERM is not 143"
# SIGINT to the launcher and the job together, as Ctrl-C sends it to the
# foreground group (here a group of their own): the launcher stays, passes
# 130 on and still reports.
setsid -w "$tscope" run --out "$T/int" -- sh -c 'kill -INT 0; sleep 1; exit 3' 2>"$T/int.err"
[ $? -eq 130 ] || { cat "$T/int.err"; fail "Ctrl-C: the launcher did not pass 130 on"; }
grep -q "no dumps in $T/int" "$T/int.err" || fail "Ctrl-C: the launcher did not go on to report"
seen=$("$tscope" run --no-report --out "$T/bb" --mode blackbox -- sh -c 'printf "%s|%s" "$TSCOPE_MODE" "${TSCOPE_CUPTI:-}"')
[ "$seen" = "blackbox|" ] || fail "--mode blackbox: the child saw '$seen', not TSCOPE_MODE=blackbox"
ctl="$bin/tscope-ctl"
[ -x "$ctl" ] || fail "tscope-ctl not installed"
mkdir -p "$T/bbctl"
"$ctl" capture --steps 5-9 --name w1 "$T/bbctl" >/dev/null || fail "tscope-ctl capture failed"
grep -qx 'steps=5-9' "$T/bbctl/triggers/w1" || fail "tscope-ctl wrote no steps=5-9 trigger"
"$ctl" capture --steps 9-5 "$T/bbctl" 2>/dev/null
[ $? -eq 2 ] || fail "tscope-ctl accepted steps 9-5"
"$tscope" run --mode fast -- true 2>/dev/null
[ $? -eq 2 ] || fail "an unknown mode is accepted"
"$tscope" run 2>/dev/null
[ $? -eq 2 ] || fail "run without a command"

# The child sees the preload first, then what was preloaded before, plus
# TSCOPE_OUT and the mode; the preload's real path is the installed one.
fake="$TB_FAKENCCL_DIR/libnccl.so.2"
seen=$(LD_PRELOAD="$fake" "$tscope" run --no-report --out "$T/o" --mode light -- \
    sh -c 'printf "%s|%s|%s" "$LD_PRELOAD" "$TSCOPE_OUT" "$TSCOPE_CUPTI"')
want="$(cd "$lib" && pwd -P)/libtscope_preload.so $fake|$T/o|light"
[ "$seen" = "$want" ] || fail "child environment '$seen', want '$want'"

# The real job.  An ASan build's instrumented programs want the ASan
# runtime preloaded (as the other test-bed tests do).
if [ -n "${TB_ASAN_RUNTIME:-}" ]; then
    export LD_PRELOAD="$TB_ASAN_RUNTIME"
fi
LD_LIBRARY_PATH="$TB_FAKENCCL_DIR" TSCOPE_RUN_ID=installtb FAKENCCL_TIMEOUT_S=20 \
    "$tscope" run --out "$T/job" -- \
    "$TB_LAUNCH" -n 4 -- "$TB_RANK" --steps 10 --compute-us 2000 --slow-ranks 2 --slow-ms 80 \
    >"$T/log" 2>&1 || { cat "$T/log"; fail "the job under tscope run"; }
unset LD_PRELOAD
[ "$(ls "$T/job" | grep -c '^tscope_r[0-3]_.*\.tsd$')" -eq 4 ] || { cat "$T/log"; fail "not 4 rank dumps"; }
grep -q "^VERDICT  straggler-bound: rank 2 " "$T/log" || { cat "$T/log"; fail "no verdict naming rank 2"; }
grep -q "^tscope: dumps in $T/job\$" "$T/log" || fail "where the dumps are"
grep -q "^tscope: report in $T/job/report.txt\$" "$T/log" || fail "where the report is"
[ -s "$T/job/report.txt" ] || fail "no report.txt"

# Real torchrun (Debian's python3-torch) through the launcher: two ranks of
# DDP over gloo that also all-reduce through the test NCCL; torchrun and the
# DataLoader workers write no dump, the two ranks do.  Not in an ASan build
# (torch is not built with it); skipped where no Python has torch.
py=/usr/bin/python3
if [ -z "${TB_ASAN_RUNTIME:-}" ] && [ -x "$py" ] &&
    "$py" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)'; then
    job=$(cd "$(dirname "$0")/../torch" && pwd)/gloo_job.py
    LD_LIBRARY_PATH="$TB_FAKENCCL_DIR" OMP_NUM_THREADS=1 "$tscope" run --out "$T/torch" -- \
        "$py" -m torch.distributed.run --nnodes 1 --nproc_per_node 2 --rdzv_backend c10d \
        --rdzv_endpoint 127.0.0.1:0 -r 2 -t 2 --log_dir "$T/torch-logs" \
        "$job" --result "$T/torch-result" --steps 6 --nccl "$TB_FAKENCCL_DIR/libnccl.so.2" \
        >"$T/torch.log" 2>&1 || { tail -40 "$T/torch.log"; fail "torchrun under tscope run"; }
    [ "$(ls "$T/torch" | grep -c '\.tsd$')" -eq 2 ] ||
        { ls "$T/torch"; tail -40 "$T/torch.log"; fail "torchrun: not 2 rank dumps"; }
    grep -q "^tscope: report in $T/torch/report.txt\$" "$T/torch.log" ||
        { tail -40 "$T/torch.log"; fail "torchrun: no report"; }
    grep -q '^  ranks 2 ' "$T/torch/report.txt" || fail "torchrun: the report is not of 2 ranks"
else
    echo "no torch (or an ASan build): the torchrun case is skipped"
fi

# Other launchers through `tscope run`: 4 test-bed ranks started by NAME,
# which names their ranks in RANK_VAR / SIZE_VAR; the launcher itself (and
# its daemons) is preloaded too and must write no dump.
launched_job() {
    name=$1 rank_var=$2 size_var=$3; shift 3
    mkdir -p "$T/$name-rdzv"
    cat >"$T/$name-rank.sh" <<RANK
#!/bin/sh
export RANK=\$$rank_var WORLD_SIZE=\$$size_var
exec "$TB_RANK" --steps 10 --compute-us 2000
RANK
    chmod +x "$T/$name-rank.sh"
    [ -n "${TB_ASAN_RUNTIME:-}" ] && export LD_PRELOAD="$TB_ASAN_RUNTIME"
    LD_LIBRARY_PATH="$TB_FAKENCCL_DIR" TSC_TESTBED_RDZV="$T/$name-rdzv" FAKENCCL_TIMEOUT_S=20 \
        "$tscope" run --out "$T/$name" -- "$@" "$T/$name-rank.sh" >"$T/$name.log" 2>&1 ||
        { tail -40 "$T/$name.log"; fail "$name under tscope run"; }
    unset LD_PRELOAD
    [ "$(ls "$T/$name" | grep -c '^tscope_r[0-3]_.*\.tsd$')" -eq 4 ] ||
        { ls "$T/$name"; tail -40 "$T/$name.log"; fail "$name: not 4 rank dumps"; }
    [ "$(ls "$T/$name" | grep -c '\.tsd$')" -eq 4 ] || { ls "$T/$name"; fail "$name: dumps beyond the ranks"; }
    grep -q '^  ranks 4 ' "$T/$name/report.txt" || fail "$name: the report is not of 4 ranks"
}
# Open MPI's mpirun on this machine (no -x LD_PRELOAD needed: local children
# inherit it).  Skipped without mpirun.
if command -v mpirun >/dev/null 2>&1; then
    OMPI_MCA_plm_rsh_agent=false launched_job mpi OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE \
        mpirun --allow-run-as-root --oversubscribe -np 4 -x TSC_TESTBED_RDZV -x LD_LIBRARY_PATH \
        -x FAKENCCL_TIMEOUT_S
else
    echo "no mpirun: the Open MPI case is skipped"
fi
# Slurm's srun, where a Slurm controller answers (srun exports the whole
# environment by default).  Skipped without one.
if command -v srun >/dev/null 2>&1 && timeout 5 sinfo >/dev/null 2>&1; then
    launched_job srun SLURM_PROCID SLURM_NTASKS srun -n 4 --overcommit
else
    echo "no running Slurm: the srun case is skipped"
fi

# The installed analyzer on the output, directly and through the launcher.
"$bin/tscope-report" "$T/job" --json >"$T/r.json" || fail "installed tscope-report"
tr -d '\n\t ' <"$T/r.json" | grep -q '"straggler":{"rank":2,' || fail "the straggler is not rank 2"
"$tscope" report info "$T/job" >"$T/info" || fail "tscope report info"
grep -q 'installtb' "$T/info" || fail "tscope report info: no run id"
echo ok

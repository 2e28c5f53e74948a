#!/bin/sh
# The study's three jobs as torch.profiler writes them with
# activities=[CUDA] (scripts/stragglers/gpu_only.py): no CPU operators, the
# collectives' metadata on their kernels.  AR and SE send on two-rank
# communicators (the peer is the other member), ST names the peer only in
# the kernel's Dst/Src Rank.  The what-if must give the same blame and the
# study's recoverable share from these as from the full traces.
#   gpu_only_study.sh PYTHON SCRIPT TEST_BINARY CORPUS_DIR
py=$1 conv=$2 bin=$3 corpus=${TSCOPE_STRAGGLER_CORPUS:-$4}
if [ ! -d "$corpus/AR" ] || [ ! -d "$corpus/ST" ] || [ ! -d "$corpus/SE" ]; then
    echo "no $corpus: skipped (see tests/data/stragglers/SOURCE.md)" >&2
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tsc_gpu_only_XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
"$py" "$conv" "$corpus/AR" "$work/AR" --p2p pair || exit 1
"$py" "$conv" "$corpus/SE" "$work/SE" --p2p pair || exit 1
"$py" "$conv" "$corpus/ST" "$work/ST" --p2p peer || exit 1
TSCOPE_STRAGGLER_CORPUS=$work WHATIF_GPU_ONLY=1 "$bin"

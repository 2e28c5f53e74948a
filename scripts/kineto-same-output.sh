#!/bin/sh
# Byte-for-byte check that two analyzer builds give the same output on
# torch.profiler traces: the report (JSON, text, the HTA-compatible window,
# streamed), `info --json` and the exported trace, on every trace directory
# given (default: every one of the shared corpus next to the source tree:
# kineto/, public/, stragglers/) plus synthetic traces written by the new
# build's tsc-gen-kineto (plain and gzip, one and several ranks, odd names,
# a gzip of two members, a cut gzip).
#   scripts/kineto-same-output.sh OLD_BUILD NEW_BUILD [DIR...]
# Exit status 0 when every output is identical, 1 otherwise.
set -u
old=$1 new=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -eq 0 ]; then
    set -- "$root"/../shared/corpus/*/*/
    gen="$new/tests/kineto/tsc-gen-kineto"
    "$gen" "$work/syn1" 1 300 20 >/dev/null &&
    "$gen" "$work/syn2" 2 200 5 >/dev/null &&
    "$gen" "$work/syn4gz" 4 50 3 gz >/dev/null &&
    "$gen" "$work/synbig" 2 4530 20 >/dev/null || exit 1
    # broken traces: cut in an event, and a stray byte inside one
    mkdir "$work/cut" "$work/junk" &&
    f=$(ls "$work"/syn2/*.json | head -1) &&
    head -c 150000 "$f" >"$work/cut/a.json" && cp "$(ls "$work"/syn2/*.json | tail -1)" "$work/cut/" &&
    sed '200s/"ts"/"ts"@/' "$f" >"$work/junk/a.json" || exit 1
    # gzip: a file of two members, and one cut in its middle
    mkdir "$work/gz2" "$work/gzcut" &&
    for f in "$work"/syn2/*.json; do
        b=$(basename "$f")
        head -n 3000 "$f" | gzip -c >"$work/gz2/$b.gz" && tail -n +3001 "$f" | gzip -c >>"$work/gz2/$b.gz" &&
        gzip -c "$f" >"$work/gzcut/$b.gz" || exit 1
    done
    g=$(ls "$work"/gzcut/*.gz | head -1)
    head -c $(($(wc -c <"$g") / 2)) "$g" >"$g.part" && mv "$g.part" "$g" || exit 1
    set -- "$@" "$work/syn1" "$work/syn2" "$work/syn4gz" "$work/synbig" "$work/cut" "$work/junk" \
        "$work/gz2" "$work/gzcut"
fi
fail=0 n=0
for d in "$@"; do
    [ -d "$d" ] || continue
    for cmd in report report-text report-span report-stream info trace; do
        case $cmd in
        report) args="--json" ;;
        report-text) args="--color never" ;;
        report-span) args="--json --window gpu-span" ;;
        report-stream) args="--json --stream-above 0" ;;
        info) args="--json" ;;
        trace) args="-o" ;;
        esac
        for b in old new; do
            eval bin=\$$b/analyzer/tscope-report
            if [ $cmd = trace ]; then
                "$bin" trace "$d" -o "$work/t.json" >"$work/$b.err" 2>&1
                mv "$work/t.json" "$work/$b.out" 2>/dev/null || : >"$work/$b.out"
            else
                "$bin" "${cmd%%-*}" "$d" $args >"$work/$b.out" 2>"$work/$b.err"
            fi
            echo "rc $?" >>"$work/$b.out"
        done
        n=$((n + 1))
        if cmp -s "$work/old.out" "$work/new.out" && cmp -s "$work/old.err" "$work/new.err"; then
            echo "same      $cmd $d ($(wc -c <"$work/new.out") bytes)"
        else
            echo "DIFFERENT $cmd $d"
            fail=1
        fi
    done
done
echo "$n outputs compared"
exit $fail

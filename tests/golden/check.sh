#!/bin/sh
# Byte-for-byte check of every tscope-report output against the committed
# checksums (tests/golden/expected.sha256), so a change meant to move no
# output (a refactoring, a speed-up) proves it.  See tests/golden/README.md.
#
#   tests/golden/check.sh BUILD_DIR            compare (the test suite runs this)
#   tests/golden/check.sh BUILD_DIR --update   rewrite expected.sha256 after an
#                                              intended output change
#
# Cases of the shared Kineto corpus are skipped where it is absent
# (TSC_GOLDEN_CORPUS=DIR names another place for it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$1
expected=$here/expected.sha256
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tsc_golden_check_XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
"$here/outputs.sh" "$build" "$tmp/out" "${TSC_GOLDEN_CORPUS:-}" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 2; }
(cd "$tmp/out" && sha256sum -- *) | sort -k 2 >"$tmp/have"
if [ "${2:-}" = "--update" ]; then
    cp "$tmp/have" "$expected"
    echo "wrote $(wc -l <"$expected") checksums to $expected"
    exit 0
fi
corpus=no
grep -q 'corpus: yes' "$tmp/log" && corpus=yes
fail=0 same=0 skipped=0
while read -r sum name; do
    got=$(awk -v n="$name" '$2 == n { print $1 }' "$tmp/have")
    if [ -z "$got" ]; then
        case $name in
        corpus_* | *.corpus.*)
            if [ $corpus = no ]; then skipped=$((skipped + 1)); continue; fi ;;
        esac
        echo "MISSING $name"
        fail=1
    elif [ "$got" != "$sum" ]; then
        echo "DIFFERS $name ($(wc -c <"$tmp/out/$name") bytes now)"
        fail=1
    else
        same=$((same + 1))
    fi
done <"$expected"
awk 'NR == FNR { known[$2] = 1; next } !($2 in known) { print "NEW     " $2 }' \
    "$expected" "$tmp/have" | grep . && fail=1
echo "$same outputs identical, $skipped skipped (no corpus)"
if [ $fail -ne 0 ]; then
    echo "outputs changed; if on purpose: tests/golden/check.sh $build --update" >&2
    echo "(see what changed: tests/golden/outputs.sh OLD_BUILD a; tests/golden/outputs.sh $build b; diff -r a b)" >&2
fi
exit $fail

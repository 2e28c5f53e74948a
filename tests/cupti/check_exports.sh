#!/bin/sh
# Usage: check_exports.sh LIBRARY EXPORTS_FILE
# The dynamic symbols LIBRARY defines must be exactly those listed in
# EXPORTS_FILE (one per line): the capture's static libraries, linked
# whole into a shared library, export nothing else.
set -eu
lib=$1
list=$2
want=$(mktemp)
have=$(mktemp)
trap 'rm -f "$want" "$have"' EXIT
grep -v '^[[:space:]]*$' "$list" | sort -u >"$want"
# Defined, global/weak symbols of the dynamic table; linker-made ones out.
nm -D --defined-only "$lib" | awk '{print $NF}' |
    grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u >"$have"
if ! cmp -s "$want" "$have"; then
    echo "exported symbols differ from $list (< expected, > exported):"
    diff "$want" "$have" || true
    exit 1
fi
echo "exports match: $(wc -l <"$want") symbols"

#!/bin/sh
# The preload must export exactly the symbols in the given lists: anything
# more would interpose on the application by accident, anything less would
# silently not trace.  Usage: check_exports.sh LIB LIST...
set -eu
lib=$1
shift
tmp=${TMPDIR:-/tmp}/tsc_exports.$$
trap 'rm -f "$tmp".want "$tmp".have' EXIT
cat "$@" | sed -e 's/#.*//' -e 's/[[:space:]]//g' | grep -v '^$' | sort -u > "$tmp".want
nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u > "$tmp".have
if ! diff -u "$tmp".want "$tmp".have; then
    echo "exported symbols of $lib differ from the lists (- missing, + unexpected)" >&2
    exit 1
fi
echo "exports ok: $(wc -l < "$tmp".have) symbols"

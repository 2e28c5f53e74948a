#!/bin/sh
# One trace directory's decode, two analyzer builds side by side: ROUNDS
# rounds, the old build then the new one in each, so that both see the
# same load.  Per run: the load average, the streaming report's load phase
# (wall s, CPU s, over every trace of DIR) and the best CPU of 5 parses of
# DIR's first trace by bench_kineto (with its events per CPU second).
#   scripts/bench-kineto-pairs.sh OLD_BUILD NEW_BUILD DIR [ROUNDS]
# Both builds should be release builds (meson --buildtype=release).
set -u
old=$1 new=$2 dir=$3 rounds=${4:-5}
trace=$(ls "$dir"/* | head -1)
i=1
while [ "$i" -le "$rounds" ]; do
    for side in old new; do
        b=$old
        [ "$side" = new ] && b=$new
        load=$(cut -d' ' -f1 /proc/loadavg)
        phase=$(TSCOPE_STREAM_TIMING=1 "$b/analyzer/tscope-report" "$dir" --json --stream-above 0 \
                2>&1 >/dev/null | sed -n 's/.*load \([0-9.]*\) \/ \([0-9.]*\);.*/wall=\1 cpu=\2/p')
        parse=$("$b/tests/kineto/bench_kineto" "$trace" 5 |
                awk '/^best_cpu_s|^events_per_cpu_s/ {printf "%s=%s ", $1, $2}')
        echo "round $i $side load=$load stream_load: $phase bench_kineto: $parse"
    done
    i=$((i + 1))
done

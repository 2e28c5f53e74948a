# Sourced by the tests that start a real Prometheus (Debian's `prometheus`):
# skip without it, a scratch folder $T cleaned on exit (and the processes
# whose pids are in $pids killed), free ports, a Prometheus on 127.0.0.1
# with a bounded config (1 s scrapes, 1 h retention), queries of its API.

prom_require() { # exits 77 (skipped) without the tools or the preload
    for t in prometheus curl python3; do
        command -v $t >/dev/null 2>&1 || { echo "no $t: skipped"; exit 77; }
    done
    [ -n "${TB_PRELOAD:-}" ] || { echo "no preload built: skipped"; exit 77; }
}

T=$(mktemp -d)
pids=
prom_cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap prom_cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/prom.log" ] && tail -5 "$T/prom.log"; exit 1; }

prom_free_ports() { # N: N ports the kernel had free (asked, then let go)
    python3 -c '
import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"
}

prom_start() { # WEB_PORT TARGET...: scrape the targets every second
    web=$1
    shift
    targets=
    for t in "$@"; do targets="$targets${targets:+, }'$t'"; done
    cat >"$T/prom.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: tscope
    honor_labels: true
    static_configs:
      - targets: [$targets]
YML
    prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/data" \
        --web.listen-address="127.0.0.1:$web" --storage.tsdb.retention.time=1h \
        >"$T/prom.log" 2>&1 &
    pids="$pids $!"
}

prom_wait_up() { # N: wait (30 s at most) until Prometheus has scraped N targets
    # successfully: its first scrape comes seconds after its start, and a
    # short job could end before it
    i=0
    while [ $i -lt 60 ]; do
        [ "$(q 'count(up == 1)' | value)" = "$1" ] && return 0
        sleep 0.5
        i=$((i + 1))
    done
    fail "Prometheus scraped fewer than $1 targets in 30 s"
}

prom_free_run() { # N: N consecutive ports the kernel had free (asked, then let go)
    python3 -c '
import random, socket, sys
n = int(sys.argv[1])
for _ in range(200):
    base = random.randint(20000, 60000 - n)
    held = []
    try:
        for p in range(base, base + n):
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        for s in held: s.close()
    print(base)
    break
else:
    sys.exit(1)' "$1"
}

q() { # QUERY [TIME]: the API's JSON answer
    curl -s -m 5 "http://127.0.0.1:$web/api/v1/query" --data-urlencode "query=$1" \
        ${2:+--data-urlencode "time=$2"}
}

value() { # the first result's value of a query's answer on stdin, "none" without
    python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "none")' 2>/dev/null
}

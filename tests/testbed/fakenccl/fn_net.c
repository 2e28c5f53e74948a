/* The simulated network (fn_net.h). */
#include "fn_net.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fn_prof_host.h"

static struct {
    long step_us;
    int slow_src, slow_dst, slow_ch;
    double slow_factor;
    int host;
    double host_factor;
    int lag_rank;
    long lag_us;
    int stuck_src, stuck_dst, stuck_ch;
    long stuck_from;
} g;

void fn_net_configure(void)
{
    g.step_us = fn_env_long("FAKENCCL_NET_STEP_US", 0, 0, 1000000);
    g.slow_src = g.slow_dst = g.slow_ch = g.host = g.lag_rank = g.stuck_src = -1;
    const char *v = getenv("FAKENCCL_SLOW_LINK");
    if (v && sscanf(v, "%d:%d:%lf:%d", &g.slow_src, &g.slow_dst, &g.slow_factor, &g.slow_ch) < 3)
        g.slow_src = g.slow_dst = -1;
    v = getenv("FAKENCCL_SLOW_HOST");
    if (v && sscanf(v, "%d:%lf", &g.host, &g.host_factor) != 2)
        g.host = -1;
    v = getenv("FAKENCCL_PROXY_LAG");
    if (v && sscanf(v, "%d:%ld", &g.lag_rank, &g.lag_us) != 2)
        g.lag_rank = -1;
    g.stuck_from = 1;
    v = getenv("FAKENCCL_PROXY_STUCK");
    if (v && sscanf(v, "%d:%d:%d:%ld", &g.stuck_src, &g.stuck_dst, &g.stuck_ch, &g.stuck_from) <
                 3)
        g.stuck_src = -1;
}

long fn_net_step_us(void) { return g.step_us; }

static int global(ncclComm_t c, int r) { return fn_info(c, r)->global; }

long fn_net_wire_us(ncclComm_t c, int src, int dst, int ch)
{
    src = global(c, src);
    dst = global(c, dst);
    double us = (double)g.step_us;
    if (src == g.slow_src && dst == g.slow_dst && (g.slow_ch < 0 || g.slow_ch == ch))
        us *= g.slow_factor;
    if (src == g.host || dst == g.host)
        us *= g.host_factor;
    return (long)us;
}

void fn_pause_us(long us)
{
    if (us <= 0)
        return;
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void fn_net_lag(ncclComm_t c)
{
    if (g.lag_rank >= 0 && global(c, c->rank) == g.lag_rank)
        fn_pause_us(g.lag_us);
}

int fn_net_stuck(ncclComm_t c, int peer, int ch)
{
    return g.stuck_src >= 0 && global(c, c->rank) == g.stuck_src &&
           global(c, peer) == g.stuck_dst && ch == g.stuck_ch &&
           (long)c->net_colls >= g.stuck_from;
}

void fn_net_hang(void)
{
    for (;;)
        fn_pause_us(1000000);
}

/* The counters live in the communicator's shared segment: a futex there
 * wakes the receiving process. */
static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *rel)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, rel, NULL, 0);
}

void fn_net_deliver(ncclComm_t c, int dst, int ch)
{
    _Atomic uint32_t *n = fn_net_counter(c, dst, ch);
    atomic_fetch_add(n, 1);
    futex(n, FUTEX_WAKE, INT_MAX, NULL);
}

int fn_net_await(ncclComm_t c, int ch)
{
    _Atomic uint32_t *n = fn_net_counter(c, c->rank, ch);
    uint32_t want = ++c->net_got[ch];
    struct timespec deadline, tick = {0, 100 * 1000 * 1000};
    fn_deadline(&deadline);
    for (;;) {
        uint32_t have = atomic_load(n);
        if ((int32_t)(have - want) >= 0)
            return 0;
        if (fn_past(&deadline))
            return -1;
        futex(n, FUTEX_WAIT, have, &tick);
    }
}

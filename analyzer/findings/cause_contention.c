/* The host cause's direct contention figures (cause_contention.h). */
#include "cause_contention.h"

#include <math.h>
#include <string.h>

static double f_wait(const cm_rank *m) { return m->wait_step_ns >= 0 ? m->wait_step_ns : NAN; }

/* Wait per ns on the CPU: more work waits more on a busy machine, in
 * proportion; contention raises the rate itself. */
static double f_wait_rate(const cm_rank *m)
{
    return m->wait_step_ns >= 0 && m->run_step_ns > 0 ? m->wait_step_ns / m->run_step_ns : NAN;
}

static double f_throttled(const cm_rank *m)
{
    return m->throttled_step_ns >= 0 ? m->throttled_step_ns : NAN;
}

/* The wait beyond what its CPU time would have cost at its peers' rate. */
static double wait_excess(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np)
{
    double rate = f_wait_rate(m), prate = median_of(c, peers, np, f_wait_rate);
    if (isnan(rate) || isnan(prate) || rate < TSA_TH_CAUSE_WAIT_RATIO * prate)
        return 0;
    return m->wait_step_ns - m->run_step_ns * prate;
}

static double throttle_excess(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np)
{
    double t = f_throttled(m), pt = median_of(c, peers, np, f_throttled);
    if (isnan(t) || isnan(pt) || t < TSA_TH_CAUSE_THROTTLE_RATIO * pt)
        return 0;
    return t - pt;
}

int cause_contention_measured(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np)
{
    return !isnan(f_wait_rate(m)) && !isnan(median_of(c, peers, np, f_wait_rate));
}

double cause_cpu_pace(cause_ctx *c, const size_t *peers, size_t np)
{
    double prate = median_of(c, peers, np, f_wait_rate);
    return isnan(prate) ? NAN : 1 + prate;
}

int cause_contention(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                     const tsa_cause_block *b, candidate *out)
{
    double floor = TSA_TH_CAUSE_REL * (double)b->peer_step_ns;
    double wait = wait_excess(c, m, peers, np), thr = throttle_excess(c, m, peers, np);
    if (wait < floor && thr < floor)
        return 0;
    int by_wait = wait >= thr;
    double extra = (double)b->extra_ns;
    out->explained = by_wait ? wait : thr;
    if (extra > 0 && out->explained > extra)
        out->explained = extra;
    out->metric = by_wait ? "main_thread_runqueue_wait_ns_per_step" : "cgroup_throttled_ns_per_step";
    out->own = by_wait ? m->wait_step_ns : m->throttled_step_ns;
    out->peers = median_of(c, peers, np, by_wait ? f_wait : f_throttled);
    int at = snprintf(out->evidence, sizeof out->evidence, "CPU contention");
    cause_contention_words(c, m, peers, np, out->evidence, sizeof out->evidence, &at);
    return 1;
}

void cause_contention_words(cause_ctx *c, const cm_rank *m, const size_t *peers, size_t np,
                            char *buf, size_t cap, int *at)
{
    double w = f_wait(m), pw = median_of(c, peers, np, f_wait);
    double rate = f_wait_rate(m), prate = median_of(c, peers, np, f_wait_rate);
    if (!isnan(w) && !isnan(pw))
        cause_words(buf, cap, at, "; its main thread waited %.2f ms per step runnable but not "
                    "running vs %.2f ms on its peers", w / 1e6, pw / 1e6);
    if (!isnan(rate) && !isnan(prate))
        cause_words(buf, cap, at, " (%.1f vs %.1f ms of waiting per ms on a CPU)", rate, prate);
    double t = f_throttled(m), pt = median_of(c, peers, np, f_throttled);
    if (!isnan(t) && !isnan(pt) && (t > 0 || pt > 0))
        cause_words(buf, cap, at, "; its cgroup's CPU quota throttled it %.2f ms per step vs "
                    "%.2f ms on its peers", t / 1e6, pt / 1e6);
}

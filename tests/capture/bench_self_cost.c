/* What measuring tscope's own cost costs (docs/self-cost.md): the start-up
 * calibration once, and the figure the writer takes twice per flush
 * period (the budget's check, the META chunk's keys).  Both run on the
 * writer thread, so the figure counts them in the writer's CPU time; this
 * prints how much that is, against the default 1 s period.  And what the
 * parts add to learn which budget level can help: the NCCL plugin counts
 * its proxy and channel events (one relaxed atomic add each, on NCCL's
 * threads) and asks for its level (one relaxed load a proxy op), the GPU
 * capture reads the writer's CPU clock twice a drain. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "fast_clock.h"
#include "self_cost.h"
#include "spin.h"

static double thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(void)
{
    tsc_clock_setup(0);
    tsc_cost_start(tsc_mono_ns());
    tsc_cost_thread_begin(TSC_COST_WRITER);
    double best_cal = 1e18;
    for (int i = 0; i < 5; i++) {
        double t0 = thread_ns();
        tsc_cost_calibrate();
        double t = thread_ns() - t0;
        best_cal = t < best_cal ? t : best_cal;
    }
    tsc_cost_inputs in = {.job_slots = 123456, .bytes_written = 1 << 20, .memory_bytes = 1 << 22};
    enum { N = 100000 };
    double best_fig = 1e18;
    for (int r = 0; r < 5; r++) {
        double t0 = thread_ns();
        for (int i = 0; i < N; i++) {
            tsc_cost_figure f;
            tsc_cost_measure(&in, &f);
            in.job_slots += f.wall_ns & 1;
        }
        double t = (thread_ns() - t0) / N;
        best_fig = t < best_fig ? t : best_fig;
    }
    tsc_cost_figure f;
    tsc_cost_measure(&in, &f);
    printf("calibration (once, at start): %.0f us of the writer's CPU; one record measured "
           "at %.1f ns\n", best_cal / 1e3, (double)f.slot_ps / 1e3);
    printf("one figure (3 clock reads of threads and process): %.0f ns; two per flush period: "
           "%.2f us per second at TSCOPE_FLUSH_MS=1000 = %.5f%% of the run\n", best_fig,
           2 * best_fig / 1e3, 2 * best_fig / 1e9 * 100);
    double best_add = 1e18, best_cut = 1e18, best_clock = 1e18;
    volatile uint32_t sink = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = thread_ns();
        for (int i = 0; i < N; i++)
            tsc_cost_part_add(TSC_COST_PART_NCCL_DETAIL, 0, 1);
        double t1 = thread_ns();
        for (int i = 0; i < N; i++)
            sink += tsc_cost_cut(TSC_COST_PART_NCCL_DETAIL);
        double t2 = thread_ns();
        for (int i = 0; i < N; i++)
            sink += (uint32_t)thread_ns();
        double t3 = thread_ns();
        best_add = (t1 - t0) / N < best_add ? (t1 - t0) / N : best_add;
        best_cut = (t2 - t1) / N < best_cut ? (t2 - t1) / N : best_cut;
        best_clock = (t3 - t2) / N < best_clock ? (t3 - t2) / N : best_clock;
    }
    printf("hot path: the job's count is the ring's own head (nothing added); a plugin proxy "
           "or channel event's count %.1f ns, a proxy op's level check %.1f ns (next to one "
           "record's %.1f ns)\n", best_add, best_cut, (double)f.slot_ps / 1e3);
    printf("GPU part: two thread CPU clock reads a drain on the writer, %.0f ns\n",
           2 * best_clock);
    return 0;
}

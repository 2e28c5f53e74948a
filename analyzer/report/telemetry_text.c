/* The telemetry rows of the text report (telemetry_text.h). */
#include "telemetry_text.h"

#include "load/rank_telemetry.h"

int tsa_telemetry_any(const tsa_analysis *a)
{
    for (size_t i = 0; i < a->job->n_ranks; i++)
        if (a->job->ranks[i].telemetry &&
            (a->job->ranks[i].telemetry->n_cpu || a->job->ranks[i].telemetry->n_gpu))
            return 1;
    return 0;
}

void tsa_telemetry_print_rows(FILE *out, const tsa_analysis *a, size_t max_lines)
{
    fprintf(out, "  %5s %7s %7s %8s %6s %7s | %9s %9s %9s %6s %7s\n", "rank", "CPU", "threads",
            "runnable", "CPUs", "workers", "SM MHz", "max MHz", "throttled", "temp", "power");
    for (size_t i = 0; i < a->n_ranks && i < a->job->n_ranks && i < max_lines; i++) {
        const tsa_rank_result *rr = &a->ranks[i];
        tsa_cpu_window c;
        tsa_gpu_window g;
        tsa_cpu_window_of(&a->job->ranks[i], rr->window_start_ns, rr->window_end_ns, &c);
        tsa_gpu_window_of(&a->job->ranks[i], rr->window_start_ns, rr->window_end_ns, &g);
        fprintf(out, "  %5d ", rr->rank);
        if (c.have)
            fprintf(out, "%6.0f%% %7u %8.1f %6.3g %7zu | ", c.busy_pct, c.threads,
                    c.runnable_mean, c.limit_cpus, c.workers);
        else
            fprintf(out, "%7s %7s %8s %6s %7s | ", "-", "-", "-", "-", "-");
        if (g.have)
            fprintf(out, "%9.0f %9u %8.0f%% %5uC %6.0fW\n", g.sm_clock_mean, g.max_sm_clock,
                    100 * g.throttled_share, g.temp_max, g.power_max_w);
        else
            fprintf(out, "%9s %9s %9s %6s %7s\n", "-", "-", "-", "-", "-");
    }
    if (a->n_ranks > max_lines)
        fprintf(out, "  ... %zu more ranks in --json per_rank (cpu, gpu_telemetry)\n",
                a->n_ranks - max_lines);
}

/* The terminal report: verdict first, then the budget with meter bars, the
 * overlap, the tables, the cross-rank section and the findings.  Aligned
 * columns so a person finds the big line in ten seconds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/analysis.h"
#include "util/fmt_duration.h"
#include "passes/hta_view.h"
#include "passes/idle_cause.h"
#include "passes/input_facts.h"
#include "idle_report.h"
#include "passes/partial.h"
#include "hang/hang.h"
#include "load/job_build.h"
#include "phase_view.h"
#include "records_cut_report.h"
#include "self_cost_report.h"
#include "telemetry_text.h"
#include "links_text.h"
#include "passes/nprof_summary.h"
#include "plugin_view.h"
#include "util/sat_math.h"
#include "passes/throughput.h"
#include "reader/text_visible.h"
#include "xrank_render.h"
#include "cause_render.h"
#include "memory_view.h"
#include "formats.h"
#include "hang_render.h"
#include "hta_render.h"
#include "pipe_render.h"

typedef struct style {
    const char *bold, *dim, *red, *yellow, *green, *cyan, *reset;
} style;

static style make_style(int color)
{
    style s = {"", "", "", "", "", "", ""};
    if (color) {
        s.bold = "\033[1m";
        s.dim = "\033[2m";
        s.red = "\033[31m";
        s.yellow = "\033[33m";
        s.green = "\033[32m";
        s.cyan = "\033[36m";
        s.reset = "\033[0m";
    }
    return s;
}

/* "12.34 s", "45.67 ms", "789.0 us" */
static const char *fmt_time(char *buf, size_t cap, double ns)
{
    return tsa_fmt_duration(buf, cap, ns);
}

static const char *fmt_bytes(char *buf, size_t cap, double b)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (b >= 1024 && u < 5) {
        b /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
    return buf;
}

/* Bytes of a table row of which `unknown` calls did not say their size:
 * "unknown" when none did, "X + ?" when some did not. */
static const char *fmt_row_bytes(char *buf, size_t cap, uint64_t bytes, uint64_t unknown,
                                 uint64_t count)
{
    if (unknown && unknown >= count)
        return snprintf(buf, cap, "unknown"), buf;
    fmt_bytes(buf, cap, (double)bytes);
    if (unknown)
        strncat(buf, " + ?", cap - strlen(buf) - 1);
    return buf;
}

/* A bandwidth column: "-" when no call has a size and a time of its own
 * (sizes unknown, or calls that only returned at once). */
static const char *fmt_gbps(char *buf, size_t cap, double gbps)
{
    if (isnan(gbps))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.1f", gbps);
    return buf;
}

static void bar(FILE *out, double share, int width, const style *st, const char *color)
{
    if (share < 0)
        share = 0;
    if (share > 1)
        share = 1;
    int full = (int)lround(share * width);
    fputs(color, out);
    for (int i = 0; i < full; i++)
        fputs("#", out);
    fputs(st->reset, out);
    fputs(st->dim, out);
    for (int i = full; i < width; i++)
        fputs(".", out);
    fputs(st->reset, out);
}

static void section(FILE *out, const style *st, const char *title)
{
    fprintf(out, "\n%s%s%s\n", st->bold, title, st->reset);
}

/* Block characters only where they will render: a color terminal (the
 * same test as colors) whose locale is UTF-8; else an ASCII ramp. */
static int utf8_ok(const style *st)
{
    if (!*st->reset)
        return 0;
    const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
    }
    return 0;
}

static void throughput_line(FILE *out, const tsa_analysis *a, const style *st)
{
    const tsa_throughput *t = &a->throughput;
    if (isnan(t->steps_per_s))
        return;
    char t2[32], t3[32], spark[256];
    fprintf(out, "  throughput %.2f steps/s", t->steps_per_s);
    if (!isnan(t->samples_per_s))
        fprintf(out, ", %.4g samples/s", t->samples_per_s);
    if (!isnan(t->tokens_per_s))
        fprintf(out, ", %.4g tokens/s", t->tokens_per_s);
    if (isnan(t->samples_per_s) && isnan(t->tokens_per_s))
        fprintf(out, " %s(--samples-per-step / --tokens-per-step for samples/s, tokens/s)%s",
                st->dim, st->reset);
    fputc('\n', out);
    tsa_sparkline(t->step_ns, t->n_steps, 60, utf8_ok(st), spark, sizeof spark);
    /* The median is the header's "median step": one name per statistic. */
    fprintf(out, "  step time p95 %s  p99 %s   %s%s%s\n",
            fmt_time(t2, sizeof t2, (double)t->step_p95_ns),
            fmt_time(t3, sizeof t3, (double)t->step_p99_ns), st->cyan, spark, st->reset);
}

/* Ranks whose GPU timeline another CUPTI client kept from tscope (it
 * subscribed first) or took over: said where the reader starts, with the
 * client's name, since their GPU figures are missing or cut. */
static void cupti_other_line(FILE *out, const tsa_job *job, const style *st)
{
    size_t n = 0;
    const tsa_rank *first = NULL;
    for (size_t i = 0; i < job->n_ranks; i++)
        if (job->ranks[i].cupti_other) {
            n++;
            first = first ? first : &job->ranks[i];
        }
    if (n)
        fprintf(out, "  %sGPU capture: CUPTI held by another client on %zu of %zu rank%s; rank %d: "
                     "%s%s\n",
                st->yellow, n, job->n_ranks, job->n_ranks == 1 ? "" : "s", first->rank,
                first->cupti_other, st->reset);
}

static void header(FILE *out, const tsa_analysis *a, const style *st)
{
    const tsa_job *job = a->job;
    char t1[32], t2[32];
    fprintf(out, "%stscope report%s  %s  run %s\n", st->bold, st->reset, job->dir,
            job->run_id && *job->run_id ? job->run_id : "(none)");
    int32_t world = tsa_missing_ranks_world(job);
    char of[48] = "";
    if (world) /* one rank of many is said where the ranks are counted */
        snprintf(of, sizeof of, " (of %d in the job)", world);
    if (tsa_hosts_unknown(job))
        fprintf(out, "  ranks %zu%s, hosts unknown (the traces do not name them)   %s\n",
                job->n_ranks, of, a->gpu ? "GPU records" : "host-only records");
    else
        fprintf(out, "  ranks %zu%s on %zu host%s   %s\n", job->n_ranks, of, a->hosts,
                a->hosts == 1 ? "" : "s", a->gpu ? "GPU records" : "host-only records");
    cupti_other_line(out, job, st);
    if (a->method == TSA_STEPS_NONE) {
        /* No repetition in the trace: no steps, one window over the run's
         * GPU work; what ran before it once (start-up) is said apart. */
        fprintf(out, "  steps none: nothing in the trace repeats as a step (no ProfilerStep, "
                     "repeating top-level call or regular collective pattern)\n");
        int64_t startup = tsa_startup_ns(a);
        if (startup > 0)
            fprintf(out, "  start-up %s before the first GPU work, once (not in the window)\n",
                    fmt_time(t1, sizeof t1, (double)startup));
        fprintf(out, "  median step unknown (no steps)   wall %s per rank (analysis window: "
                     "the run's GPU work)\n",
                fmt_time(t2, sizeof t2, (double)a->wall_ns));
    } else {
        fprintf(out,
                "  steps %zu analysed (%zu found, %d warm-up skipped) by %s, regularity cv "
                "%.1f%%\n",
                a->steps, a->steps_total, a->warmup, tsa_step_method_name(a->method),
                100 * a->step_cv);
        fprintf(out, "  median step %s   wall %s per rank (analysis window)\n",
                fmt_time(t1, sizeof t1, (double)a->median_step_ns),
                fmt_time(t2, sizeof t2, (double)a->wall_ns));
    }
    tsa_records_cut_print(out, a);
    throughput_line(out, a, st);
    fprintf(out, "  device %s   GEMM dtype %s   ",
            a->device_name ? a->device_name : "unknown", tsa_dtype_name(a->dtype));
    if (a->peak_flops > 0)
        fprintf(out, "peak %.1f TFLOP/s (%s)\n", a->peak_flops / 1e12, a->peak_source);
    else
        fprintf(out, "peak unknown\n");
}

static void budget_section(FILE *out, const tsa_analysis *a, const style *st)
{
    const tsa_budget *b = &a->budget;
    char t[32];
    section(out, st, "EFFICIENCY BUDGET (per rank: mean over the ranks)");
    fprintf(out, "  %s%zu ranks, %s rank-time in all; each line is its sum / %zu%s\n", st->dim,
            a->n_ranks, fmt_time(t, sizeof t, (double)b->wall_ns), a->n_ranks, st->reset);
    double per = a->n_ranks ? (double)a->n_ranks : 1;
    for (int l = 0; l < TSA_BL_COUNT; l++) {
        double share = b->wall_ns ? (double)b->line_ns[l] / (double)b->wall_ns : 0;
        const char *color = l == TSA_BL_USEFUL ? st->green
                            : tsa_budget_line_recoverable((tsa_budget_line)l) && share >= 0.10
                                ? st->yellow
                                : st->cyan;
        if (!tsa_line_measured(a, (tsa_budget_line)l)) {
            fprintf(out, "  %-24s %s   not measured (%s)%s\n",
                    tsa_budget_line_label((tsa_budget_line)l), st->dim,
                    l == TSA_BL_OVERHEAD ? "MFU unknown: useful compute is all compute"
                                         : "no GPU records",
                    st->reset);
            continue;
        }
        fprintf(out, "  %-24s %10s/rank %6.1f%%  ", tsa_budget_line_label((tsa_budget_line)l),
                fmt_time(t, sizeof t, (double)b->line_ns[l] / per), 100 * share);
        bar(out, share, 30, st, color);
        fprintf(out, "%s\n", tsa_budget_line_recoverable((tsa_budget_line)l) ? "  recoverable" : "");
    }
    if (isnan(b->mfu))
        fprintf(out, "  MFU unknown (%s)\n",
                a->flops > 0 ? "no peak for this device: use --peak-tflops"
                             : "no FLOPs: no GEMM records; use --flops-per-step or --params");
    else
        fprintf(out, "  %sMFU %.1f%%%s   (%.3g FLOPs from %s)\n", st->bold, 100 * b->mfu,
                st->reset, a->flops, a->flops_source);
    tsa_idle_print(out, a);
}

static void overlap_section(FILE *out, const tsa_analysis *a, const style *st)
{
    const tsa_overlap *o = &a->overlap;
    char t1[32], t2[32], t3[32], t4[32], t5[32];
    double per = a->n_ranks ? (double)a->n_ranks : 1;
    section(out, st, "COMMUNICATION OVERLAP (per rank)");
    if (!o->comm_ns) { /* 0% would claim communication that was never hidden */
        fprintf(out, "  no communication (no NCCL kernels or calls): overlap n/a\n");
        return;
    }
    fprintf(out, "  communication %s, overlapped %s (%.1f%%), exposed %s = wait %s + transfer %s\n",
            fmt_time(t1, sizeof t1, (double)o->comm_ns / per),
            fmt_time(t2, sizeof t2, (double)o->overlapped_ns / per),
            o->comm_ns ? 100.0 * (double)o->overlapped_ns / (double)o->comm_ns : 0.0,
            fmt_time(t3, sizeof t3, (double)o->exposed_ns / per),
            fmt_time(t4, sizeof t4, (double)o->exposed_wait_ns / per),
            fmt_time(t5, sizeof t5, (double)o->exposed_transfer_ns / per));
}

/* Mean time per step of each phase, over ranks and analysed steps. */
static void phases_section(FILE *out, const tsa_analysis *a, const style *st)
{
    if (!a->steps || !a->n_ranks)
        return;
    int64_t total[TSA_PHASE_COUNT] = {0}, sum = 0;
    for (size_t i = 0; i < a->n_ranks; i++)
        for (int p = 1; p < TSA_PHASE_COUNT; p++)
            TSA_SAT_ACC(total[p], a->ranks[i].phase_ns[p]);
    for (int p = 1; p < TSA_PHASE_COUNT; p++)
        TSA_SAT_ACC(sum, total[p]);
    if (sum <= 0)
        return;
    char t[32];
    double per = (double)a->n_ranks * (double)a->steps;
    section(out, st, "PHASES (per rank per step: mean)");
    for (int p = 1; p < TSA_PHASE_COUNT; p++) {
        const char *label = tsa_phase_label(a, (tsa_phase)p);
        if (!label)
            continue; /* not measured: not shown (phase_view.h) */
        double share = (double)total[p] / (double)sum;
        fprintf(out, "  %-17s %10s %6.1f%%  ", label,
                fmt_time(t, sizeof t, (double)total[p] / per), 100 * share);
        bar(out, share, 20, st, st->cyan);
        fputc('\n', out);
    }
}

/* One line per rank for small jobs (the JSON has them all). */
static void ranks_section(FILE *out, const tsa_analysis *a, const style *st)
{
    enum { MAX_LINES = 16 };
    if (a->n_ranks < 2)
        return;
    char t[6][32];
    section(out, st, "PER RANK (analysis window)");
    fprintf(out, "  %5s  %-16s %10s %10s %10s %10s %10s %6s\n", "rank", "host", "wall",
            "compute", "exp. wait", "exp. xfer", "stall", "MFU");
    for (size_t i = 0; i < a->n_ranks && i < MAX_LINES; i++) {
        const tsa_rank_result *r = &a->ranks[i];
        const tsa_budget *b = &r->budget;
        char mfu[16];
        if (isnan(b->mfu))
            snprintf(mfu, sizeof mfu, "-");
        else
            snprintf(mfu, sizeof mfu, "%.1f%%", 100 * b->mfu);
        fprintf(out, "  %5d  %-16s %10s %10s %10s %10s %10s %6s\n", r->rank,
                r->host ? tsr_fit(r->host, 16) : "?", fmt_time(t[0], 32, (double)b->wall_ns),
                fmt_time(t[1], 32, (double)(b->line_ns[TSA_BL_USEFUL] + b->line_ns[TSA_BL_OVERHEAD])),
                fmt_time(t[2], 32, (double)b->line_ns[TSA_BL_COMM_WAIT]),
                fmt_time(t[3], 32, (double)b->line_ns[TSA_BL_COMM_TRANSFER]),
                r->gpu ? fmt_time(t[4], 32, (double)b->line_ns[TSA_BL_DATA_STALL]) : "-", mfu);
    }
    if (a->n_ranks > MAX_LINES)
        fprintf(out, "  %s... %zu more ranks in --json per_rank%s\n", st->dim,
                a->n_ranks - MAX_LINES, st->reset);
}

static void tables_section(FILE *out, const tsa_analysis *a, const style *st)
{
    char t1[32], t2[32];
    if (a->n_colls) {
        section(out, st, "COLLECTIVES (sum over all ranks, analysis window)");
        fprintf(out, "  %-14s %9s %12s %12s %12s %12s %11s\n", "op", "calls", "bytes", "time",
                "exposed", "(wait)", "busbw GB/s");
        for (size_t i = 0; i < a->n_colls; i++) {
            const tsa_coll_row *c = &a->colls[i];
            char t3[32], t4[32], t5[32];
            fprintf(out, "  %-14s %9llu %12s %12s %12s %12s %11s\n", tsa_nccl_op_name(c->op),
                    (unsigned long long)c->count,
                    fmt_row_bytes(t1, sizeof t1, c->bytes, c->bytes_unknown, c->count),
                    fmt_time(t2, sizeof t2, (double)c->ns),
                    fmt_time(t3, sizeof t3, (double)c->exposed_ns),
                    fmt_time(t4, sizeof t4, (double)c->exposed_wait_ns),
                    fmt_gbps(t5, sizeof t5, c->busbw_gbps));
            for (int b = 0; b < TSA_SIZE_BUCKETS; b++)
                if (c->bucket_count[b])
                    fprintf(out, "  %s  %-12s %9llu %12s %12s %12s%s\n", st->dim,
                            tsa_size_bucket_name(b), (unsigned long long)c->bucket_count[b], "",
                            fmt_time(t2, sizeof t2, (double)c->bucket_ns[b]),
                            fmt_time(t3, sizeof t3, (double)c->bucket_exposed_ns[b]), st->reset);
        }
    }
    int64_t ktotal = 0;
    for (int c = 0; c < TSA_KCAT_COUNT; c++)
        TSA_SAT_ACC(ktotal, a->kcat_ns[c]);
    if (ktotal > 0) {
        section(out, st, "KERNELS by category (all ranks)");
        for (int c = 0; c < TSA_KCAT_COUNT; c++) {
            if (!a->kcat_count[c])
                continue;
            double share = (double)a->kcat_ns[c] / (double)ktotal;
            fprintf(out, "  %-14s %12s %6.1f%% %10llu  ", tsa_kcat_name((tsa_kcat)c),
                    fmt_time(t1, sizeof t1, (double)a->kcat_ns[c]), 100 * share,
                    (unsigned long long)a->kcat_count[c]);
            bar(out, share, 20, st, st->cyan);
            fputc('\n', out);
        }
        section(out, st, "TOP KERNELS");
        for (size_t i = 0; i < a->n_kernels; i++) {
            const tsa_kernel_row *k = &a->kernels[i];
            fprintf(out, "  %12s %6.1f%% %9llu  %-13s %s\n",
                    fmt_time(t1, sizeof t1, (double)k->ns), 100.0 * (double)k->ns / (double)ktotal,
                    (unsigned long long)k->count, tsa_kcat_name((tsa_kcat)k->category),
                    tsr_fit(k->name, 60));   /* cut on a UTF-8 character boundary */
        }
    }
    if (a->n_copies) {
        section(out, st, "COPIES");
        for (size_t i = 0; i < a->n_copies; i++) {
            const tsa_copy_row *c = &a->copies[i];
            char t3[32];
            fprintf(out, "  %-7s %9llu %12s %12s %8s GB/s\n", tsa_copy_dir_name(c->dir),
                    (unsigned long long)c->count,
                    fmt_row_bytes(t1, sizeof t1, c->bytes, c->bytes_unknown, c->count),
                    fmt_time(t2, sizeof t2, (double)c->ns), fmt_gbps(t3, sizeof t3, c->gbps));
        }
    }
}

static void findings_section(FILE *out, const tsa_analysis *a, const style *st)
{
    section(out, st, a->verdict == TSA_VERDICT_STRAGGLER_BOUND
                         ? "FINDINGS (the verdict's cause, then most recoverable; seconds per "
                           "rank, each counted once)"
                         : "FINDINGS (most recoverable first; seconds per rank, each counted "
                           "once)");
    if (!a->findings.n) {
        fprintf(out, "  %snone: nothing to fix found%s\n", st->green, st->reset);
        return;
    }
    for (size_t i = 0; i < a->findings.n; i++) {
        const tsa_finding *f = &a->findings.items[i];
        const char *c = f->severity == TSA_SEV_CRITICAL  ? st->red
                        : f->severity == TSA_SEV_WARNING ? st->yellow
                                                         : st->dim;
        fprintf(out, "  %s%-8s%s %-18s ", c, tsa_severity_name(f->severity), st->reset, f->id);
        char t[32];
        if (f->recoverable_s > 0)
            fprintf(out, "%10s  ", tsa_fmt_duration(t, sizeof t, f->recoverable_s * 1e9));
        else
            fprintf(out, "%10s  ", "");
        fprintf(out, "%s\n", f->title); /* titles name their rank themselves */
        fprintf(out, "  %*s%sfix: %s%s\n", 29, "", st->dim, f->fix, st->reset);
    }
}

static void problems_section(FILE *out, const tsa_analysis *a, const style *st)
{
    const tsa_job *job = a->job;
    if (job->n_other_runs) {
        section(out, st, "OTHER RUNS IN THIS DIRECTORY (not included)");
        for (size_t i = 0; i < job->n_other_runs; i++)
            fprintf(out, "  %s\n", *job->other_runs[i] ? job->other_runs[i] : "(no run id)");
    }
    if (job->n_duplicates) {
        section(out, st, "DUPLICATE RANKS (left out; the dump with most records is analysed)");
        for (size_t i = 0; i < job->n_duplicates; i++)
            fprintf(out, "  rank %d: left out %s (kept %s)\n", job->duplicates[i].rank,
                    job->duplicates[i].dropped_file, job->duplicates[i].kept_file);
    }
    if (job->n_problems) {
        section(out, st, "PROBLEMS READING THE DUMPS");
        size_t shown = job->n_problems < 20 ? job->n_problems : 20;
        for (size_t i = 0; i < shown; i++)
            fprintf(out, "  %s: offset %llu: %s\n", job->problems[i].file,
                    (unsigned long long)job->problems[i].offset, job->problems[i].message);
        if (shown < job->n_problems)
            fprintf(out, "  ... and %zu more\n", job->n_problems - shown);
    }
}

static void confidence_line(FILE *out, const tsa_analysis *a, const style *st)
{
    fprintf(out, "%sCONFIDENCE%s %s%s%s", st->bold, st->reset,
            a->confidence == TSA_CONF_HIGH ? st->green : a->confidence == TSA_CONF_LOW ? st->red
                                                                                        : st->yellow,
            tsa_confidence_name(a->confidence), st->reset);
    if (a->confidence == TSA_CONF_HIGH) {
        /* a trace has no loss counters: say what it cannot show */
        fprintf(out, "%s\n", tsa_job_from_traces(a->job)
                                 ? ": nothing in the traces contradicts them (a torch.profiler "
                                   "trace cannot show events it dropped, nor how far apart the "
                                   "hosts' clocks were)"
                                 : ": nothing was lost or mixed up while capturing");
        return;
    }
    const char *sep = ": lowered by ";
    for (size_t i = 0; i < a->findings.n; i++)
        if (a->findings.items[i].confidence_cap != TSA_CONF_HIGH) {
            fprintf(out, "%s%s", sep, a->findings.items[i].id);
            sep = ", ";
        }
    uint64_t lost = 0, kernels = 0;
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        lost += a->job->ranks[i].gpu_kernels_lost;
        kernels += tsa_rank_kernel_count(&a->job->ranks[i]);
    }
    if (lost)
        fprintf(out, "; kernels lost: %llu of %llu", (unsigned long long)lost,
                (unsigned long long)(kernels + lost));
    uint64_t plugin_lost = tsa_plugin_lost(a->job);
    if (plugin_lost)
        fprintf(out, "; plugin events lost: %llu", (unsigned long long)plugin_lost);
    fprintf(out, " (see findings)\n");
}

void tsa_report_print_text(FILE *out, const tsa_analysis *a, int color)
{
    style st = make_style(color);
    header(out, a, &st);
    tsa_hang_print_text(out, a->hang, 0); /* a hung job: this first (analyzer/hang) */
    /* Green only when the job is bound by the work it is meant to do. */
    const char *vc = a->verdict == TSA_VERDICT_GPU_BOUND || a->verdict == TSA_VERDICT_COMPUTE_BOUND
                         ? st.green
                     : a->verdict == TSA_VERDICT_STRAGGLER_BOUND ? st.red
                                                                 : st.yellow;
    fprintf(out, "\n%sVERDICT%s  %s%s%s: %s\n", st.bold, st.reset, vc,
            tsa_verdict_name(a->verdict), st.reset, a->verdict_reason);
    if (a->partial[0])
        fprintf(out, "  %spartial:%s %s\n", st.yellow, st.reset, a->partial);
    confidence_line(out, a, &st);
    if (a->cpu_only) {
        fprintf(out, "  no GPU records: no budget, overlap or kernel tables to show\n");
        tsa_idle_print(out, a);
    } else {
        budget_section(out, a, &st);
        overlap_section(out, a, &st);
        phases_section(out, a, &st);
        tsa_hta_view_print(out, a);
    }
    ranks_section(out, a, &st);
    if (tsa_self_cost_any(a->job)) {
        section(out, &st, "TSCOPE'S OWN COST (in the whole run, next to its budget)");
        tsa_self_cost_report_print(out, a, 16);
    }
    if (tsa_telemetry_any(a)) {
        section(out, &st, "HOST AND GPU (telemetry, analysis window)");
        tsa_telemetry_print_rows(out, a, 16);
    }
    tables_section(out, a, &st);
    if (tsa_np_any(a->job)) {
        section(out, &st, "NCCL PROFILER PLUGIN (what NCCL reported to tscope's plugin)");
        tsa_plugin_print(out, a, 6, 8);
    }
    if (tsa_links_any(a)) {
        section(out, &st, "NETWORK LINKS (NCCL profiler plugin: sender -> receiver, channel)");
        tsa_links_print(out, a, 12);
    }
    if (a->memory.n_ranks) {
        section(out, &st, "MEMORY (reserved GPU memory per rank)");
        tsa_memory_print(out, &a->memory);
    }
    if (a->have_xrank && a->xrank.instances) {
        section(out, &st, "CROSS-RANK (one row per rank: that rank's own totals)");
        tsa_xrank_print(out, &a->xrank, color);
        if (a->cause.n_blocks) {
            section(out, &st, "CAUSE (each blamed rank against its peers, same steps)");
            tsa_cause_print(out, &a->cause);
        }
    } else if (a->have_xrank) {
        /* No table to head: say why in one line. */
        section(out, &st, "CROSS-RANK");
        fprintf(out, "  %s\n", a->job->n_ranks < 2
                                     ? "one rank: nothing to compare across ranks"
                                     : "no collective matched across ranks: nothing to compare");
    }
    if (a->pipe && a->pipe->pipeline) {
        section(out, &st, "PIPELINE WHAT-IF (replay of each step's dependency graph)");
        tsa_pipe_print(out, a->pipe);
    }
    findings_section(out, a, &st);
    problems_section(out, a, &st);
}

char *tsa_report_text(const tsa_analysis *a, int color)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    tsa_report_print_text(f, a, color);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

int tsa_report_write_text(FILE *out, const tsa_analysis *a, int color)
{
    tsa_report_print_text(out, a, color);
    return 0;
}

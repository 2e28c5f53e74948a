/* The HTML report (report --html, tscope-report html): one file that opens
 * from disk with nothing else.  Styles are inline, charts are inline SVG
 * drawn here, and the page forbids itself every script and every fetch
 * (Content-Security-Policy), so a name in a dump can neither run code nor
 * call out even if an escape were missed. */
#include <math.h>
#include <stdio.h>

#include "formats.h"
#include "html_charts.h"
#include "records_cut_report.h"
#include "self_cost_report.h"
#include "html_escape.h"
#include "util/fmt_duration.h"

static const char page_style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0 24px 40px;color:#222;max-width:1400px}"
    "h1{font-size:20px;margin:16px 0 4px}h2{font-size:16px;margin:20px 0 8px}"
    "h3{font-size:15px;margin:0}.facts{color:#555;margin:0}"
    ".verdict{font-size:15px;padding:8px 12px;background:#fff4e5;border-left:4px solid #e08a00}"
    ".layout{display:grid;grid-template-columns:minmax(0,780px) minmax(280px,1fr);gap:24px}"
    ".chart{margin:0 0 28px}.reading{margin:2px 0 6px;color:#444}"
    "svg text{font:11px system-ui,sans-serif;fill:#333}svg .unit{fill:#555}"
    "svg .axis line{stroke:#888}svg .nm{fill:#999;font-style:italic}"
    "rect.good{fill:#2e8b57}rect.loss{fill:#d9822b}rect.neutral{fill:#5b7fa6}"
    "rect.nm{fill:#ccc}rect.wall{fill:#444}polyline{stroke-width:2}"
    "polyline.median{stroke:#5b7fa6}polyline.blamed{stroke:#c0392b}"
    "text.key.median{fill:#5b7fa6}text.key.blamed{fill:#c0392b}"
    "line.cap{stroke:#999;stroke-dasharray:4 3}"
    /* Kernel categories (tsa_kcat order) in the timeline, NCCL and idle. */
    "rect.k0{fill:#9e9e9e}rect.k1{fill:#1f77b4}rect.k2{fill:#9467bd}rect.k3{fill:#2ca02c}"
    "rect.k4{fill:#bcbd22}rect.k5{fill:#17becf}rect.k6{fill:#8c564b}rect.k7{fill:#d62728}"
    "rect.k8{fill:#7f7f7f}rect.k9{fill:#e377c2}rect.k10{fill:#ff7f0e}"
    "rect.comm{fill:#d62728}rect.idle{fill:#f2f2f2;stroke:#bbb;stroke-width:.5}"
    ".finding{border-left:4px solid #999;padding:4px 10px;margin:0 0 12px}"
    ".finding.critical{border-color:#c0392b}.finding.warning{border-color:#e08a00}"
    ".finding .id{font-family:monospace;color:#555}.finding .fix{color:#225}"
    "aside{position:sticky;top:8px;align-self:start}svg{max-width:100%;height:auto}"
    "@media (max-width:1100px){.layout{display:block}aside{position:static}}"
    "table{border-collapse:collapse;font-size:12px;margin:0 0 28px}caption{text-align:left;"
    "font-weight:600;padding:0 0 4px}td,th{padding:2px 8px;border-bottom:1px solid #ddd;"
    "text-align:right}td.name{text-align:left;font-family:monospace;max-width:480px;"
    "overflow-wrap:anywhere}";

static void header(FILE *out, const tsa_analysis *a)
{
    const tsa_job *job = a->job;
    char t1[32], t2[32];
    fprintf(out, "<header><h1>tscope report: run ");
    tsa_html_escape(out, job->run_id && *job->run_id ? job->run_id : "(none)");
    fprintf(out, "</h1>\n<p class=\"facts\">");
    tsa_html_escapef(out, "%zu ranks on %zu host%s, %s; ", job->n_ranks, a->hosts,
                     a->hosts == 1 ? "" : "s", a->gpu ? "GPU records" : "host-only records");
    if (a->method == TSA_STEPS_NONE) /* the window is the run, no step */
        tsa_html_escapef(out, "no steps (nothing repeats as a step); median step unknown; "
                              "wall %s per rank (the run's GPU work)",
                         tsa_fmt_duration(t2, sizeof t2, (double)a->wall_ns));
    else
        tsa_html_escapef(out, "%zu steps analysed (%d warm-up skipped); median step %s; wall %s "
                              "per rank",
                         a->steps, a->warmup,
                         tsa_fmt_duration(t1, sizeof t1, (double)a->median_step_ns),
                         tsa_fmt_duration(t2, sizeof t2, (double)a->wall_ns));
    if (!isnan(a->budget.mfu))
        fprintf(out, "; MFU %.1f%%", 100 * a->budget.mfu);
    fprintf(out, "; device ");
    tsa_html_escape(out, a->device_name ? a->device_name : "unknown");
    fprintf(out, "</p>\n<p class=\"facts\">input: ");
    tsa_html_escape(out, job->dir);
    fprintf(out, "</p>\n<p class=\"verdict\" id=\"verdict\"><b>%s</b>: ",
            tsa_verdict_name(a->verdict));
    tsa_html_escape(out, a->verdict_reason);
    fprintf(out, "<br>confidence: %s</p></header>\n", tsa_confidence_name(a->confidence));
}

/* Why each blamed rank or host is slow, beside the findings that name it. */
static void causes(FILE *out, const tsa_cause_result *r)
{
    if (!r->n_blocks)
        return;
    fprintf(out, "<h2>Why</h2>\n");
    for (size_t i = 0; i < r->n_blocks; i++) {
        const tsa_cause_block *b = &r->blocks[i];
        char own[32], peer[32];
        fprintf(out, "<div class=\"finding cause\" id=\"cause-%zu\"><b>", i);
        if (b->rank >= 0)
            tsa_html_escapef(out, "rank %d (%s), %s", b->rank, b->host ? b->host : "?",
                             b->blamed_as);
        else
            tsa_html_escapef(out, "host %s, %s", b->host ? b->host : "?", b->blamed_as);
        fprintf(out, "</b><br>");
        tsa_html_escapef(out, "work %s per step against %s on %zu peers",
                         tsa_fmt_duration(own, sizeof own, (double)b->step_ns),
                         tsa_fmt_duration(peer, sizeof peer, (double)b->peer_step_ns), b->peers);
        if (!b->n_causes)
            fprintf(out, "<br>cause unknown: no recorded figure explains it");
        for (size_t k = 0; k < b->n_causes; k++) {
            const tsa_cause *c = &b->causes[k];
            fprintf(out, "<br>%zu. <b>%s</b> explains %.0f%%: ", k + 1,
                    tsa_cause_kind_name(c->kind), 100 * c->share);
            tsa_html_escape(out, c->evidence);
            fprintf(out, "<br><span class=\"fix\">fix: ");
            tsa_html_escape(out, c->fix);
            fprintf(out, "</span>");
        }
        fprintf(out, "<br><span class=\"reading\">checked: ");
        tsa_html_escape(out, b->checked);
        fprintf(out, "</span></div>\n");
    }
}

static void findings(FILE *out, const tsa_analysis *a)
{
    fprintf(out, "<aside id=\"findings\"><h2>Findings and fixes</h2>\n");
    if (!a->findings.n)
        fprintf(out, "<p>None: nothing to fix found.</p>\n");
    for (size_t i = 0; i < a->findings.n; i++) {
        const tsa_finding *f = &a->findings.items[i];
        char t[32] = "";
        if (f->recoverable_s > 0)
            tsa_fmt_duration(t, sizeof t, f->recoverable_s * 1e9);
        fprintf(out, "<div class=\"finding %s\"><span class=\"id\">", tsa_severity_name(f->severity));
        tsa_html_escape(out, f->id);
        fprintf(out, "</span> %s%s%s<br>", tsa_severity_name(f->severity), *t ? ", recoverable " : "",
                t);
        tsa_html_escape(out, f->title);
        fprintf(out, "<br><span class=\"fix\">fix: ");
        tsa_html_escape(out, f->fix);
        fprintf(out, "</span></div>\n");
    }
    causes(out, &a->cause);
    fprintf(out, "</aside>\n");
}

void tsa_html_page_begin(FILE *out, const char *title)
{
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                 "style-src 'unsafe-inline'\">\n<title>");
    tsa_html_escape(out, title);
    fprintf(out, "</title>\n<style>%s</style></head><body>\n", page_style);
}

int tsa_report_write_html(FILE *out, const tsa_analysis *a, int color)
{
    (void)color;
    char title[256];
    snprintf(title, sizeof title, "tscope report %s", a->job->run_id ? a->job->run_id : "");
    tsa_html_page_begin(out, title);
    header(out, a);
    fprintf(out, "<div class=\"layout\"><main>\n");
    tsa_records_cut_html(out, a); /* before the figures it bounds */
    fprintf(out, "<h2>Where the time went</h2>\n");
    tsa_html_budget(out, a);
    fprintf(out, "<h2>Ranks and steps</h2>\n");
    tsa_html_heatmaps(out, a);
    tsa_html_blame(out, a);
    tsa_html_timeline(out, a);
    fprintf(out, "<h2>GPU kernels and collectives</h2>\n");
    tsa_html_kernels(out, a);
    tsa_html_collectives(out, a);
    fprintf(out, "<h2>Device memory</h2>\n");
    tsa_html_memory(out, a);
    tsa_self_cost_html(out, a);
    fprintf(out, "</main>\n");
    findings(out, a);
    fprintf(out, "</div>\n<footer><p class=\"facts\">tscope-report %s; the text report "
                 "(tscope-report DIR) has every table.</p></footer></body></html>\n",
            TSC_VERSION);
    return ferror(out) ? -1 : 0;
}

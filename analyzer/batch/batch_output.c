/* Batch rows as an aligned table, CSV (RFC 4180 quoting) or NDJSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "reader/text_visible.h"

#define N_COLS 24

static const char *const csv_header[N_COLS] = {
    "job", "run_id", "status", "ranks", "hosts", "steps", "median_step_s", "mfu",
    "top_recoverable", "top_recoverable_s", "exposed_comm_share", "data_stall_share",
    "straggler_rank", "straggler_host", "recoverable_gpu_hours", "problems", "error",
    /* added in 0.1 after error: columns only ever grow at the end */
    "verdict", "confidence", "lead_finding", "lead_finding_s", "straggler_cause",
    "slow_host", "slow_host_cause"};

static void fmt_count(char *b, size_t cap, long v)
{
    if (v < 0)
        b[0] = '\0';
    else
        snprintf(b, cap, "%ld", v);
}

static void fmt_num(char *b, size_t cap, double v, const char *fmt)
{
    if (isnan(v) || isinf(v))
        b[0] = '\0';
    else
        snprintf(b, cap, fmt, v);
}

/* The N_COLS CSV fields of a row, as text ("" unknown). */
static void csv_fields(const tsa_batch_row *r, char f[N_COLS][64], const char *ptr[N_COLS])
{
    for (int i = 0; i < N_COLS; i++)
        f[i][0] = '\0', ptr[i] = f[i];
    ptr[0] = r->job ? r->job : "";
    ptr[1] = r->run_id ? r->run_id : "";
    ptr[2] = r->status;
    fmt_count(f[3], 64, r->ranks);
    fmt_count(f[4], 64, r->hosts);
    fmt_count(f[5], 64, r->steps);
    fmt_num(f[6], 64, r->median_step_s, "%.6f");
    fmt_num(f[7], 64, r->mfu, "%.4f");
    ptr[8] = r->top_recoverable ? r->top_recoverable : "";
    fmt_num(f[9], 64, r->top_recoverable_s, "%.6f");
    fmt_num(f[10], 64, r->exposed_comm_share, "%.4f");
    fmt_num(f[11], 64, r->data_stall_share, "%.4f");
    fmt_count(f[12], 64, r->straggler_rank);
    ptr[13] = r->straggler_host ? r->straggler_host : "";
    fmt_num(f[14], 64, r->recoverable_gpu_hours, "%.6f");
    fmt_count(f[15], 64, r->problems);
    ptr[16] = r->error ? r->error : "";
    ptr[17] = r->verdict ? r->verdict : "";
    ptr[18] = r->confidence ? r->confidence : "";
    ptr[19] = r->lead_finding ? r->lead_finding : "";
    fmt_num(f[20], 64, r->lead_finding_s, "%.6f");
    ptr[21] = r->straggler_cause ? r->straggler_cause : "";
    ptr[22] = r->slow_host ? r->slow_host : "";
    ptr[23] = r->slow_host_cause ? r->slow_host_cause : "";
}

/* A text cell a spreadsheet would run as a formula (= + - @, or a tab or
 * CR before one): job paths, hosts and errors come from untrusted job
 * directories.  Such a cell is quoted and starts with an apostrophe, as
 * OWASP's CSV-injection advice and spreadsheets expect. */
static int formula_like(const char *s)
{
    return s[0] && strchr("=+-@\t\r", s[0]);
}

static void csv_field(FILE *out, const char *s, int text)
{
    int formula = text && formula_like(s);
    if (!formula && !strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    if (formula)
        fputc('\'', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void tsa_batch_print_csv(FILE *out, const tsa_batch_row *rows, size_t n)
{
    for (int i = 0; i < N_COLS; i++)
        fprintf(out, "%s%s", i ? "," : "", csv_header[i]);
    fputc('\n', out);
    for (size_t r = 0; r < n; r++) {
        char f[N_COLS][64];
        const char *p[N_COLS];
        csv_fields(&rows[r], f, p);
        for (int i = 0; i < N_COLS; i++) {
            if (i)
                fputc(',', out);
            csv_field(out, p[i], p[i] != f[i]);   /* numbers are ours, text is not */
        }
        fputc('\n', out);
    }
}

void tsa_batch_print_ndjson(FILE *out, const tsa_batch_row *rows, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        char *s = tsa_batch_row_json_text(&rows[r]);
        if (s) {
            fprintf(out, "%s\n", s);
            free(s);
        }
    }
}

void tsa_batch_print(FILE *out, int format, const tsa_batch_row *rows, size_t n, size_t top,
                     int fleet)
{
    if (format == 1)
        tsa_batch_print_csv(out, rows, n);
    else if (format == 2) {
        tsa_batch_print_ndjson(out, rows, n);
        if (fleet)
            tsa_batch_print_fleet_ndjson(out, rows, n, top);
    } else {
        tsa_batch_print_table(out, rows, n);
        if (fleet)
            tsa_batch_print_fleet(out, rows, n, top);
    }
}

int tsa_batch_exit_status(const tsa_batch_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].status, "ok"))
            return 1;
    return 0;
}

/* ------------------------------------------------------------ table */

#define T_COLS 12
static const char *const t_header[T_COLS] = {
    "job", "ranks", "hosts", "steps", "step", "MFU", "verdict", "lead finding",
    "exposed comm", "data stall", "straggler", "status"};

/* Seconds with a unit that keeps three significant digits readable. */
static void fmt_seconds(char *b, size_t cap, double s)
{
    if (isnan(s))
        snprintf(b, cap, "-");
    else if (s >= 100)
        snprintf(b, cap, "%.0f s", s);
    else if (s >= 1)
        snprintf(b, cap, "%.2f s", s);
    else if (s >= 1e-3)
        snprintf(b, cap, "%.1f ms", s * 1e3);
    else
        snprintf(b, cap, "%.1f us", s * 1e6);
}

static void table_cells(const tsa_batch_row *r, char c[T_COLS][160])
{
    /* untrusted text (paths, hosts, errors) is shown visibly (text_visible.h) */
    snprintf(c[0], 160, "%s", tsr_vis(r->job));
    fmt_count(c[1], 160, r->ranks);
    fmt_count(c[2], 160, r->hosts);
    fmt_count(c[3], 160, r->steps);
    fmt_seconds(c[4], 160, r->median_step_s);
    if (r->steps == 0 && isnan(r->median_step_s))
        snprintf(c[4], 160, "no steps");
    if (isnan(r->mfu))
        snprintf(c[5], 160, "unknown");
    else
        snprintf(c[5], 160, "%.1f%%", r->mfu * 100);
    snprintf(c[6], 160, "%s", r->verdict ? tsr_vis(r->verdict) : "-");
    if (r->lead_finding && !isnan(r->lead_finding_s) && r->lead_finding_s > 0) {
        char t[32];
        fmt_seconds(t, sizeof t, r->lead_finding_s);
        snprintf(c[7], 160, "%s %s", tsr_vis(r->lead_finding), t);
    } else
        snprintf(c[7], 160, "%s", r->lead_finding ? tsr_vis(r->lead_finding) : "-");
    for (int i = 0; i < 2; i++) {
        double v = i ? r->data_stall_share : r->exposed_comm_share;
        if (isnan(v))
            snprintf(c[8 + i], 160, "-");
        else
            snprintf(c[8 + i], 160, "%.1f%%", v * 100);
    }
    if (r->straggler_rank >= 0)
        snprintf(c[10], 160, "%ld (%s)", r->straggler_rank,
                 r->straggler_host ? tsr_vis(r->straggler_host) : "?");
    else
        snprintf(c[10], 160, "-");
    snprintf(c[11], 160, "%s%s", r->status, r->cached ? " (cached)" : "");
}

void tsa_batch_print_table(FILE *out, const tsa_batch_row *rows, size_t n)
{
    size_t w[T_COLS];
    for (int i = 0; i < T_COLS; i++)
        w[i] = strlen(t_header[i]);
    char(*cells)[T_COLS][160] = malloc((n ? n : 1) * sizeof *cells);
    if (!cells)
        return;
    for (size_t r = 0; r < n; r++) {
        table_cells(&rows[r], cells[r]);
        for (int i = 0; i < T_COLS; i++)
            if (strlen(cells[r][i]) > w[i])
                w[i] = strlen(cells[r][i]);
    }
    for (int i = 0; i < T_COLS; i++)   /* text left, numbers right */
        fprintf(out, "%s%-*s", i ? "  " : "", (int)w[i], t_header[i]);
    fputc('\n', out);
    for (size_t r = 0; r < n; r++) {
        for (int i = 0; i < T_COLS; i++) {
            int left = i == 0 || i == 6 || i == 7 || i >= 10;
            fprintf(out, "%s%*s", i ? "  " : "", left ? -(int)w[i] : (int)w[i], cells[r][i]);
        }
        fputc('\n', out);
    }
    for (size_t r = 0; r < n; r++)
        if (rows[r].error && strcmp(rows[r].status, "ok"))
            fprintf(out, "  %s: %s: %s\n", tsr_vis(rows[r].job), rows[r].status,
                    tsr_vis(rows[r].error));
    free(cells);
}

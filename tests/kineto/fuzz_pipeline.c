/* One job directory through the whole analyzer (fuzz_pipeline.h). */
#include "fuzz_pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/analysis.h"
#include "load/job_load.h"
#include "reader/record_json.h"
#include "strict_json.h"
#include "test_util.h"
#include "report/trace_export.h"
#include "load/load_any.h"
#include "driver/analyze.h"
#include "report/report.h"

static int check_text(const char *text, size_t len, char *why, size_t cap)
{
    if (!tsr_utf8_valid(text) || strlen(text) != len) {
        snprintf(why, cap, "report text: invalid UTF-8 or NUL");
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20 && text[i] != '\n' && text[i] != '\t') {
            snprintf(why, cap, "report text: control byte 0x%02x at %zu",
                     (unsigned char)text[i], i);
            return -1;
        }
    return 0;
}

static int check_json(const char *what, const char *text, size_t len, char *why, size_t cap)
{
    size_t at;
    if (strict_json_check(text, len, &at)) {
        snprintf(why, cap, "%s: not strict JSON at byte %zu: '%.40s'", what, at,
                 at < len ? text + at : "");
        return -1;
    }
    return 0;
}

static int reports(const tsa_analysis *a, char *why, size_t cap)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return 0;
    tsa_report_print_text(mem, a, 0);
    fclose(mem);
    int rc = text ? check_text(text, len, why, cap) : 0;
    free(text);
    char *json = rc ? NULL : tsa_report_json(a);
    if (json)
        rc = check_json("report JSON", json, strlen(json), why, cap);
    free(json);
    return rc;
}

static int trace(const tsa_job *job, const char *scratch, fuzz_pipeline_stats *st, char *why,
                 size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/fuzz-trace.json", scratch);
    tsa_trace_options topt;
    tsa_trace_default_options(&topt);
    char **files = NULL, err[512];
    size_t n_files = 0;
    int rc = 0;
    if (!tsa_trace_export(job, &topt, path, &files, &n_files, err, sizeof err)) {
        st->exported++;
        for (size_t i = 0; i < n_files && !rc; i++) {
            size_t len = 0;
            char *text = tu_read_file(files[i], &len);
            if (text)
                rc = check_json("trace", text, len, why, cap);
            free(text);
        }
    }
    for (size_t i = 0; i < n_files; i++) {
        unlink(files[i]);
        free(files[i]);
    }
    free(files);
    return rc;
}

int fuzz_pipeline_dir(const char *dir, const char *scratch, fuzz_pipeline_stats *st,
                      char *why, size_t cap)
{
    st->runs++;
    tsa_job *job = NULL;
    char err[512];
    /* not lean, as the trace command loads */
    tsa_load_options lopt = {.quiet = 1};
    if (tsa_views_load_job(dir, &lopt, &job, err, sizeof err))
        return 0;   /* refused cleanly */
    st->loaded++;
    int rc = 0;
    tsa_analysis *a = tsa_analyze(job, NULL);
    if (a) {
        st->analysed++;
        rc = reports(a, why, cap);
        tsa_analysis_free(a);
    }
    if (!rc)
        rc = trace(job, scratch, st, why, cap);
    tsa_job_free(job);
    return rc;
}

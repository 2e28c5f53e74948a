/* `tscope-report hang DIR [--json]`: only the hang view ("my job hangs:
 * what to run", docs/hangs.md). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "model/analysis.h"
#include "load/job_load.h"
#include "hang/hang.h"
#include "driver/analyze.h"
#include "report/hang_render.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: tscope-report hang DIR [--json]\n"
                 "  which collective a hung job is stuck in, which ranks never reached it,\n"
                 "  desynchronised collectives and ranks that ended early (docs/hangs.md)\n"
                 "exit status: 0 nothing found, 1 found something, 2 usage or unreadable\n");
}

int tsa_cmd_hang(int argc, char **argv)
{
    const char *dir = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' || dir) {
            usage(stderr);
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    tsa_load_options lopt = {.quiet = 1, .lean = 1};
    tsa_job *job = NULL;
    char err[512];
    if (tsa_job_load_ex(dir, &lopt, &job, err, sizeof err)) {
        fprintf(stderr, "tscope-report: %s\n", err);
        return 2;
    }
    tsa_analysis *a = tsa_analyze(job, NULL);
    if (!a) {
        fprintf(stderr, "tscope-report: out of memory during the analysis\n");
        tsa_job_free(job);
        return 2;
    }
    const tsa_hang_result *h = a->hang;
    int found = h && h->n;
    if (json) {
        cJSON *root = cJSON_CreateObject();
        cJSON *arr = cJSON_AddArrayToObject(root, "findings");
        for (size_t i = 0; i < a->findings.n; i++) {
            const tsa_finding *f = &a->findings.items[i];
            if (strcmp(f->id, "DIST.HANG") && strcmp(f->id, "DIST.DESYNC") &&
                strcmp(f->id, "RANK.EXITED_EARLY"))
                continue;
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "id", f->id);
            cJSON_AddStringToObject(x, "title", f->title);
            cJSON *ev = cJSON_AddArrayToObject(x, "evidence"); /* as in the report's JSON */
            for (size_t k = 0; k < f->n_evidence; k++)
                cJSON_AddItemToArray(ev, cJSON_CreateString(f->evidence[k]));
            tsa_hang_add_json(x, h, f);
            cJSON_AddItemToArray(arr, x);
        }
        if (h && h->last_step >= 0)
            cJSON_AddNumberToObject(root, "last_step", (double)h->last_step);
        else
            cJSON_AddNullToObject(root, "last_step");
        char *s = cJSON_Print(root);
        if (s)
            puts(s);
        free(s);
        cJSON_Delete(root);
    } else {
        tsa_hang_print_text(stdout, h, 1);
    }
    tsa_analysis_free(a);
    tsa_job_free(job);
    return found ? 1 : 0;
}

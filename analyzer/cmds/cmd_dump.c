/* tscope-report dump [--json] [--descs] DIR|FILE... : every record, in file
 * order.  Each file is read twice: the first pass only builds the kernel ->
 * NCCL op join and learns the final rank, so the second pass can print each
 * record once, complete. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "reader/dump_reader.h"
#include "reader_cli.h"
#include "reader/nccl_join.h"
#include "reader/record_json.h"
#include "reader/text_visible.h"

typedef struct dump_opts {
    int json;
    int descs;
} dump_opts;

typedef struct dump_ctx {
    const dump_opts *opt;
    tsr_nccl_join join;
    int rank;
    FILE *out;
} dump_ctx;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tscope-report dump [--json] [--descs] DIR|FILE...\n"
            "  Print every record of the dumps, in file order.\n"
            "  --json   one JSON object per line (keys: docs in analyzer/reader/record_json.h)\n"
            "  --descs  also print descriptor definitions\n"
            "Problems go to stderr as FILE: offset N: message.\n"
            "Exit status: 0 clean, 1 problems found, 2 nothing readable or bad usage.\n");
}

static void first_pass_event(void *vctx, const tsr_file *f, const tsr_event *e)
{
    (void)f;
    tsr_nccl_join_add(&((dump_ctx *)vctx)->join, e);
}

/* Plain text: fixed columns for the common keys, then key=value pairs. */
static void print_text(FILE *out, cJSON *o)
{
    const cJSON *rank = cJSON_GetObjectItemCaseSensitive(o, "rank");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    char *r = rank ? cJSON_PrintUnformatted(rank) : NULL;
    fprintf(out, "r%-5s %-7s", r ? r : "?", cJSON_IsString(kind) ? tsr_vis(kind->valuestring) : "?");
    free(r);
    for (const cJSON *c = o->child; c; c = c->next) {
        if (c == rank || c == kind)
            continue;
        if (cJSON_IsString(c)) {
            fprintf(out, " %s=%s", tsr_vis(c->string), tsr_vis(c->valuestring));
            continue;
        }
        char *v = cJSON_PrintUnformatted(c);
        if (!strcmp(c->string, "start_ns") || !strcmp(c->string, "end_ns"))
            fprintf(out, " %s=%20s", c->string, v ? v : "?");
        else if (!strcmp(c->string, "tid"))
            fprintf(out, " tid=%-7s", v ? v : "?");
        else
            fprintf(out, " %s=%s", c->string, v ? v : "?");
        free(v);
    }
    fputc('\n', out);
}

static void emit(dump_ctx *c, cJSON *o)
{
    if (!o)
        return;
    if (c->opt->json) {
        char *s = cJSON_PrintUnformatted(o);
        if (s) {
            fputs(s, c->out);
            fputc('\n', c->out);
            free(s);
        }
    } else {
        print_text(c->out, o);
    }
    cJSON_Delete(o);
}

static void on_event(void *vctx, const tsr_file *f, const tsr_event *e)
{
    dump_ctx *c = vctx;
    const char *op = e->kind == TSC_EV_KERNEL || e->kind == TSC_EV_KERNEL_LAUNCH
                         ? tsr_nccl_join_kernel_op(&c->join, f, e)
                         : NULL;
    emit(c, tsr_event_json(f, e, c->rank, op));
}

static void on_meta(void *vctx, const tsr_file *f, const char *k, const char *v, int end)
{
    (void)f;
    dump_ctx *c = vctx;
    emit(c, tsr_meta_json(c->rank, k, v, end));
}

static void on_desc(void *vctx, const tsr_file *f, const tsr_desc *d)
{
    (void)f;
    dump_ctx *c = vctx;
    if (c->opt->descs)
        emit(c, tsr_desc_json(d, c->rank));
}

static void on_problem(void *vctx, const char *path, uint64_t off, const char *msg)
{
    (void)vctx;
    fflush(stdout);
    fprintf(stderr, "%s: offset %llu: %s\n", tsr_vis(path), (unsigned long long)off, tsr_vis(msg));
}

static int parse_rank(const char *s)
{
    if (!s || !*s)
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v < -1 || v > INT32_MAX ? -1 : (int)v;
}

/* TSR_OK, TSR_PROBLEMS or TSR_UNREADABLE for one file. */
static int dump_one(const char *path, const dump_opts *opt)
{
    dump_ctx c = {.opt = opt, .rank = -1, .out = stdout};
    tsr_callbacks pass1 = {.on_event = first_pass_event};
    int status;
    tsr_file *f = tsr_open(path, &pass1, &c, &status);
    if (f) {
        tsr_read_all(f);
        c.rank = parse_rank(tsr_meta(f, TSC_META_RANK));
        tsr_close(f);
    }
    tsr_callbacks pass2 = {.on_meta = on_meta, .on_desc = on_desc, .on_event = on_event,
                           .on_problem = on_problem};
    status = tsr_read_file(path, &pass2, &c, NULL);
    tsr_nccl_join_free(&c.join);
    return status;
}

int tsa_cmd_dump(int argc, char **argv)
{
    dump_opts opt = {0};
    const tsr_cli_flag flags[] = {{"--json", &opt.json}, {"--descs", &opt.descs}, {NULL, NULL}};
    const tsr_cli cli = {"dump", flags, usage};
    char **paths;
    size_t n, errors;
    int rc = tsr_cli_parse(&cli, argc, argv, &paths, &n, &errors);
    if (rc >= 0)
        return rc;
    size_t readable = 0, with_problems = 0;
    for (size_t k = 0; k < n; k++) {
        int st = dump_one(paths[k], &opt);
        readable += st != TSR_UNREADABLE;
        with_problems += st != TSR_OK;
    }
    tsr_free_paths(paths, n);
    fflush(stdout);
    if (readable == 0)
        return 2;
    return with_problems || errors ? 1 : 0;
}

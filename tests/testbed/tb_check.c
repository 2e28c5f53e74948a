/* Comparison of recorded NCCL calls with the rank programs' own account. */
#include "tb_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_harness.h"

#define MAX_KEYS 128

cJSON *tb_load_expect(const char *prefix, int rank)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.%d", prefix, rank);
    char *text = tb_read_file(path);
    if (!text)
        return NULL;
    cJSON *o = cJSON_Parse(text);
    free(text);
    return o;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

cJSON *tb_records_of(cJSON *all, int rank, const char *kind)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *o;
    cJSON_ArrayForEach(o, all) {
        if (num(o, "rank") == rank && !strcmp(str(o, "kind"), kind))
            cJSON_AddItemReferenceToArray(out, (cJSON *)o);
    }
    return out;
}

const char *tb_meta_value(cJSON *all, int rank, const char *key)
{
    const char *found = NULL;
    const cJSON *o;
    cJSON_ArrayForEach(o, all) {
        if (num(o, "rank") == rank && !strcmp(str(o, "kind"), "meta") &&
            !strcmp(str(o, "key"), key))
            found = str(o, "value"); /* file order: the last one is the latest */
    }
    return found;
}

static int sequenced(const char *op)
{
    static const char *const ops[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                      "Bcast", "Reduce", "AlltoAll", "Gather", "Scatter",
                                      "Send", "Recv"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op, ops[i]))
            return 1;
    return 0;
}

typedef struct verdict { char *why; size_t cap; } verdict;

static int bad(verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(verdict *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->why, v->cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* Per NCCL function: exact calls (and bytes for data-moving calls), both
 * directions. */
static int check_totals(verdict *v, int rank, cJSON *recs, const cJSON *expect)
{
    cJSON *got = cJSON_CreateObject();
    const cJSON *r;
    cJSON_ArrayForEach(r, recs) {
        const char *op = str(r, "op");
        cJSON *o = cJSON_GetObjectItemCaseSensitive(got, op);
        if (!o) {
            o = cJSON_AddObjectToObject(got, op);
            cJSON_AddNumberToObject(o, "calls", 0);
            cJSON_AddNumberToObject(o, "bytes", 0);
        }
        cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "calls"), num(o, "calls") + 1);
        cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "bytes"),
                             num(o, "bytes") + num(r, "bytes"));
    }
    int rc = 0;
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(expect, "ops"), *w, *g;
    cJSON_ArrayForEach(w, want) {
        g = cJSON_GetObjectItemCaseSensitive(got, w->string);
        double gc = g ? num(g, "calls") : 0, gb = g ? num(g, "bytes") : 0;
        if (gc != num(w, "calls") || (sequenced(w->string) && gb != num(w, "bytes"))) {
            rc = bad(v, "rank %d %s: recorded %.0f calls / %.0f bytes, program made %.0f / %.0f",
                     rank, w->string, gc, gb, num(w, "calls"), num(w, "bytes"));
            break;
        }
    }
    cJSON_ArrayForEach(g, got) {
        if (rc == 0 && !cJSON_GetObjectItemCaseSensitive(want, g->string))
            rc = bad(v, "rank %d: recorded %.0f %s calls the program never made", rank,
                     num(g, "calls"), g->string);
    }
    cJSON_Delete(got);
    return rc;
}

static int by_seq(const void *a, const void *b)
{
    double x = num(*(cJSON *const *)a, "seq"), y = num(*(cJSON *const *)b, "seq");
    return x < y ? -1 : x > y;
}

typedef struct key_id { char key[32]; char comm[40]; } key_id;

/* Does the recorded call list (sorted by seq) equal the expected one? */
static int same_calls(cJSON **calls, int n, const cJSON *exp_comm)
{
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(exp_comm, "ops");
    if (cJSON_GetArraySize(ops) != n)
        return 0;
    for (int i = 0; i < n; i++) {
        const cJSON *pair = cJSON_GetArrayItem(ops, i);
        const cJSON *op = cJSON_GetArrayItem(pair, 0), *bytes = cJSON_GetArrayItem(pair, 1);
        if (!cJSON_IsString(op) || !cJSON_IsNumber(bytes) ||
            strcmp(op->valuestring, str(calls[i], "op")) ||
            bytes->valuedouble != num(calls[i], "bytes"))
            return 0;
    }
    return 1;
}

/* One recorded communicator of one rank against the program's account. */
static int check_one_comm(verdict *v, int rank, const char *comm, cJSON **calls, int n,
                          const cJSON *exp_comms, int *used, key_id *ids, int *nids)
{
    qsort(calls, (size_t)n, sizeof *calls, by_seq);
    for (int i = 0; i < n; i++)
        if (num(calls[i], "seq") != i)
            return bad(v, "rank %d comm %s: sequence numbers not 0..%d (position %d has %.0f)",
                       rank, comm, n - 1, i, num(calls[i], "seq"));
    double tid = n ? num(calls[0], "tid") : -1;
    int match = -1, idx = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, exp_comms) {
        if (!used[idx] && num(e, "tid") == tid && same_calls(calls, n, e)) {
            match = idx;
            break;
        }
        idx++;
    }
    if (match < 0)
        return bad(v, "rank %d comm %s (%d calls, tid %.0f): no communicator of the program "
                   "made exactly these calls in this order", rank, comm, n, tid);
    used[match] = 1;
    const cJSON *m = cJSON_GetArrayItem(exp_comms, match);
    for (int i = 0; i < n; i++)
        if (num(calls[i], "comm_size") != num(m, "size") ||
            num(calls[i], "comm_rank") != num(m, "rank"))
            return bad(v, "rank %d comm %s: comm_size/comm_rank %.0f/%.0f, want %.0f/%.0f", rank,
                       str(m, "key"), num(calls[i], "comm_size"), num(calls[i], "comm_rank"),
                       num(m, "size"), num(m, "rank"));
    /* The same key must be the same id on every rank. */
    int j = 0;
    while (j < *nids && strcmp(ids[j].key, str(m, "key")))
        j++;
    if (j == *nids) {
        if (*nids == MAX_KEYS)
            return bad(v, "too many communicators");
        snprintf(ids[j].key, sizeof ids[j].key, "%s", str(m, "key"));
        snprintf(ids[j].comm, sizeof ids[j].comm, "%.39s", comm);
        (*nids)++;
    } else if (strcmp(ids[j].comm, comm)) {
        return bad(v, "communicator %s has id %s on rank %d but %s on an earlier rank",
                   ids[j].key, comm, rank, ids[j].comm);
    }
    return 0;
}

static int check_comms(verdict *v, int rank, cJSON *recs, const cJSON *expect, key_id *ids,
                       int *nids)
{
    /* Distinct communicator ids among this rank's sequenced calls. */
    char comms[MAX_KEYS][40];
    int ncomms = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, recs) {
        if (!sequenced(str(r, "op")))
            continue;
        int k = 0;
        while (k < ncomms && strcmp(comms[k], str(r, "comm")))
            k++;
        if (k == ncomms) {
            if (ncomms == MAX_KEYS)
                return bad(v, "rank %d: too many communicators", rank);
            snprintf(comms[ncomms++], 40, "%.39s", str(r, "comm"));
        }
    }
    const cJSON *exp_comms = cJSON_GetObjectItemCaseSensitive(expect, "comms"), *e;
    int used[MAX_KEYS] = {0}, nexp = 0;
    cJSON_ArrayForEach(e, exp_comms) nexp += num(e, "calls") > 0;
    if (ncomms != nexp)
        return bad(v, "rank %d: calls on %d communicators, program used %d", rank, ncomms, nexp);
    if (cJSON_GetArraySize(exp_comms) > MAX_KEYS)
        return bad(v, "rank %d: too many communicators", rank);

    cJSON **calls = malloc(sizeof *calls * (size_t)(cJSON_GetArraySize(recs) + 1));
    if (!calls)
        return bad(v, "out of memory");
    int rc = 0;
    for (int k = 0; k < ncomms && rc == 0; k++) {
        int n = 0;
        cJSON_ArrayForEach(r, recs) {
            if (sequenced(str(r, "op")) && !strcmp(str(r, "comm"), comms[k]))
                calls[n++] = (cJSON *)r;
        }
        rc = check_one_comm(v, rank, comms[k], calls, n, exp_comms, used, ids, nids);
    }
    free(calls);
    return rc;
}

static int check_rank(verdict *v, cJSON *all, const char *expect_prefix, int rank, key_id *ids,
                      int *nids)
{
    cJSON *expect = tb_load_expect(expect_prefix, rank);
    if (!expect)
        return bad(v, "no expectation file %s.%d", expect_prefix, rank);
    cJSON *recs = tb_records_of(all, rank, "nccl");
    int rc = 0;
    if (cJSON_GetArraySize(recs) == 0)
        rc = bad(v, "rank %d: no NCCL records in the dumps", rank);
    if (rc == 0)
        rc = check_totals(v, rank, recs, expect);
    if (rc == 0)
        rc = check_comms(v, rank, recs, expect, ids, nids);
    const char *dropped = tb_meta_value(all, rank, "dropped_events");
    if (rc == 0 && dropped && strcmp(dropped, "0"))
        rc = bad(v, "rank %d dropped %s events", rank, dropped);
    const char *pid = tb_meta_value(all, rank, "pid");
    if (rc == 0 && pid && atof(pid) != num(expect, "pid"))
        rc = bad(v, "rank %d: dump pid %s, rank process was %.0f", rank, pid, num(expect, "pid"));
    cJSON_Delete(recs);
    cJSON_Delete(expect);
    return rc;
}

int tb_check_records(cJSON *all, const char *expect_prefix, int n, char *why, size_t cap)
{
    verdict v = {why, cap};
    key_id ids[MAX_KEYS];
    int nids = 0;
    for (int rank = 0; rank < n; rank++)
        if (check_rank(&v, all, expect_prefix, rank, ids, &nids) != 0)
            return -1;
    for (int a = 0; a < nids; a++)
        for (int b = a + 1; b < nids; b++)
            if (!strcmp(ids[a].comm, ids[b].comm))
                return bad(&v, "communicators %s and %s share the id %s", ids[a].key,
                           ids[b].key, ids[a].comm);
    return 0;
}

int tb_check_job(const char *out_dir, const char *expect_prefix, int n, char *why, size_t cap)
{
    int status;
    cJSON *all = tb_dump_json(out_dir, &status);
    verdict v = {why, cap};
    if (!all)
        return bad(&v, "tscope-report dump --json %s did not run", out_dir);
    int rc = status == 0 ? tb_check_records(all, expect_prefix, n, why, cap)
                         : bad(&v, "tscope-report dump --json exited with status 0x%x", status);
    cJSON_Delete(all);
    return rc;
}

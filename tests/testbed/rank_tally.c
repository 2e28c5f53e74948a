/* Bookkeeping of the rank program's NCCL calls, written as JSON. */
#include "rank_tally.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TB_MAX_COMMS 80
#define TB_MAX_SLOTS 80

typedef struct tb_call { const char *op; uint64_t bytes; } tb_call;

struct tb_comm_tally {
    char key[32];
    int size, rank;
    pid_t tid;          /* thread that issued its calls */
    tb_call *calls;
    size_t ncalls, cap;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static tb_comm_tally comms[TB_MAX_COMMS];
static int ncomms;
static cJSON *totals; /* {"AllReduce": {"calls": n, "bytes": b}} */
static uint64_t checksums[TB_MAX_SLOTS];

tb_comm_tally *tb_tally_comm(const char *key, int size, int rank)
{
    pthread_mutex_lock(&mu);
    tb_comm_tally *c = NULL;
    if (ncomms < TB_MAX_COMMS) {
        c = &comms[ncomms++];
        snprintf(c->key, sizeof c->key, "%s", key);
        c->size = size;
        c->rank = rank;
        c->tid = gettid();
    }
    pthread_mutex_unlock(&mu);
    return c;
}

static void add_total(const char *op, uint64_t bytes)
{
    if (!totals)
        totals = cJSON_CreateObject();
    cJSON *o = cJSON_GetObjectItemCaseSensitive(totals, op);
    if (!o) {
        o = cJSON_AddObjectToObject(totals, op);
        cJSON_AddNumberToObject(o, "calls", 0);
        cJSON_AddNumberToObject(o, "bytes", 0);
    }
    cJSON *calls = cJSON_GetObjectItemCaseSensitive(o, "calls");
    cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bytes");
    cJSON_SetNumberValue(calls, calls->valuedouble + 1);
    cJSON_SetNumberValue(b, b->valuedouble + (double)bytes);
}

void tb_tally_call(tb_comm_tally *c, const char *op, uint64_t bytes, int sequenced)
{
    pthread_mutex_lock(&mu);
    add_total(op, bytes);
    if (c && sequenced) {
        if (c->ncalls == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 64;
            tb_call *n = realloc(c->calls, cap * sizeof *n);
            if (n) {
                c->calls = n;
                c->cap = cap;
            }
        }
        if (c->ncalls < c->cap)
            c->calls[c->ncalls++] = (tb_call){op, bytes};
    }
    pthread_mutex_unlock(&mu);
}

/* FNV-1a, per slot: each thread owns one slot, so no ordering between
 * threads leaks into the result. */
void tb_checksum_add(int slot, const void *p, size_t n)
{
    if (slot < 0 || slot >= TB_MAX_SLOTS)
        return;
    uint64_t h = checksums[slot] ? checksums[slot] : 0xcbf29ce484222325ull;
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    checksums[slot] = h;
}

uint64_t tb_checksum_total(void)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < TB_MAX_SLOTS; i++) {
        h ^= checksums[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

int tb_tally_write(const char *path, int rank, int world, int forked)
{
    cJSON *root = cJSON_CreateObject();
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)tb_checksum_total());
    cJSON_AddNumberToObject(root, "rank", rank);
    cJSON_AddNumberToObject(root, "world_size", world);
    cJSON_AddNumberToObject(root, "pid", getpid());
    cJSON_AddStringToObject(root, "checksum", hex);
    cJSON_AddBoolToObject(root, "forked", forked);
    pthread_mutex_lock(&mu);
    cJSON_AddItemToObject(root, "ops", totals ? cJSON_Duplicate(totals, 1) : cJSON_CreateObject());
    cJSON *arr = cJSON_AddArrayToObject(root, "comms");
    for (int i = 0; i < ncomms; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "key", comms[i].key);
        cJSON_AddNumberToObject(c, "size", comms[i].size);
        cJSON_AddNumberToObject(c, "rank", comms[i].rank);
        cJSON_AddNumberToObject(c, "tid", comms[i].tid);
        cJSON_AddNumberToObject(c, "calls", (double)comms[i].ncalls);
        cJSON *ops = cJSON_AddArrayToObject(c, "ops");
        for (size_t k = 0; k < comms[i].ncalls; k++) {
            cJSON *pair = cJSON_CreateArray();
            cJSON_AddItemToArray(pair, cJSON_CreateString(comms[i].calls[k].op));
            cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)comms[i].calls[k].bytes));
            cJSON_AddItemToArray(ops, pair);
        }
        cJSON_AddItemToArray(arr, c);
    }
    pthread_mutex_unlock(&mu);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return -1;
    FILE *f = fopen(path, "w");
    int rc = -1;
    if (f) {
        rc = fputs(text, f) < 0 ? -1 : 0;
        if (fclose(f) != 0)
            rc = -1;
    }
    free(text);
    return rc;
}

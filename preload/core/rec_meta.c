#include "rec_meta.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dump_file.h"
#include "warn.h"
#include "spin.h"

#ifndef TSC_VERSION
#define TSC_VERSION "unknown"
#endif

static struct {
    char key[TSC_META_KEY_MAX];
    char val[TSC_META_VAL_MAX];
} g_meta[TSC_META_MAX];
static int g_nmeta;
static unsigned g_meta_dropped; /* keys refused: store full or key too long */
static _Atomic int g_meta_lock;

/* 0, or -1 when the key could not be stored. */
static int set_locked(const char *key, const char *value)
{
    if (!key || !*key)
        return 0;
    int i;
    for (i = 0; i < g_nmeta; i++)
        if (!strcmp(g_meta[i].key, key))
            break;
    if (i == g_nmeta) {
        if (g_nmeta == TSC_META_MAX || strlen(key) >= TSC_META_KEY_MAX) {
            g_meta_dropped++;
            return -1;
        }
        g_nmeta++;
        snprintf(g_meta[i].key, TSC_META_KEY_MAX, "%s", key);
    }
    snprintf(g_meta[i].val, TSC_META_VAL_MAX, "%s", value ? value : "");
    return 0;
}

void tsc_rec_meta(const char *key, const char *value)
{
    int saved = errno;
    tsc_spin_lock(&g_meta_lock);
    int rc = set_locked(key, value);
    tsc_spin_unlock(&g_meta_lock);
    if (rc < 0)
        tsc_warn_once("meta_full", "tscope: the dump's metadata store is full or a key is too "
                      "long; key %.64s and any later ones are counted in meta_keys_dropped", key);
    errno = saved;
}

int tsc_meta_get(const char *key, char *out, size_t cap)
{
    int found = 0;
    tsc_spin_lock(&g_meta_lock);
    for (int i = 0; i < g_nmeta && !found; i++)
        if (!strcmp(g_meta[i].key, key)) {
            snprintf(out, cap, "%s", g_meta[i].val);
            found = 1;
        }
    tsc_spin_unlock(&g_meta_lock);
    return found ? 0 : -1;
}

void tsc_meta_set_int(const char *key, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    tsc_rec_meta(key, b);
}

static void read_cmdline(char *out, size_t cap)
{
    out[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0)
        return;
    while (n > 0 && out[n - 1] == '\0')
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    out[n] = '\0';
}

void tsc_meta_gather(const char *host, const tsc_identity *id, uint64_t realtime_ns,
                     uint64_t monotonic_ns)
{
    char b[TSC_META_VAL_MAX];
    tsc_rec_meta(TSC_META_HOST, host);
    tsc_meta_set_int(TSC_META_PID, getpid());
    tsc_meta_set_int(TSC_META_PPID, getppid());
    tsc_meta_set_int(TSC_META_RANK, id->rank);
    tsc_meta_set_int(TSC_META_LOCAL_RANK, id->local_rank);
    tsc_meta_set_int(TSC_META_WORLD_SIZE, id->world_size);
    tsc_rec_meta(TSC_META_RUN_ID, id->run_id);
    tsc_rec_meta(TSC_META_RUN_ID_SOURCE, id->run_id_source);
    if (id->restart >= 0)
        tsc_meta_set_int(TSC_META_RESTART, id->restart);
    read_cmdline(b, sizeof b);
    tsc_rec_meta(TSC_META_CMDLINE, b);
    snprintf(b, sizeof b, "%llu", (unsigned long long)realtime_ns);
    tsc_rec_meta(TSC_META_START_REALTIME, b);
    snprintf(b, sizeof b, "%llu", (unsigned long long)monotonic_ns);
    tsc_rec_meta(TSC_META_START_MONOTONIC, b);
    tsc_rec_meta(TSC_META_LIB_VERSION, TSC_VERSION);
}

size_t tsc_meta_encode_all(char *buf, size_t cap, const char *const *keys,
                           const char *const *vals, size_t n, int from_signal)
{
    if (!from_signal)
        tsc_spin_lock(&g_meta_lock);
    else if (!tsc_spin_lock_bounded(&g_meta_lock, 20))
        return 0; /* interrupted a tsc_rec_meta on this thread: skip META */
    const char *k[TSC_META_MAX + 17], *v[TSC_META_MAX + 17];
    size_t m = 0;
    for (int i = 0; i < g_nmeta; i++) {
        k[m] = g_meta[i].key;
        v[m++] = g_meta[i].val;
    }
    char dropped[16];
    if (g_meta_dropped) {
        snprintf(dropped, sizeof dropped, "%u", g_meta_dropped);
        k[m] = TSC_META_KEYS_DROPPED;
        v[m++] = dropped;
    }
    for (size_t i = 0; i < n && m < sizeof k / sizeof k[0]; i++) {
        k[m] = keys[i];
        v[m++] = vals[i];
    }
    size_t len = tsc_meta_encode(buf, cap, k, v, m);
    tsc_spin_unlock(&g_meta_lock);
    return len;
}

void tsc_meta_after_fork(void) { atomic_store(&g_meta_lock, 0); }

/* Held configuration warnings (config_warn.h). */
#include "config_warn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "warn.h"

#define MAX_HELD 8    /* one per variable; there are six */

typedef struct held {
    char var[40];
    char text[320];
} held;

/* Written by the single thread that loads the configuration, read by the
 * single thread that sets up recording, which comes after it. */
static held g_held[MAX_HELD];
static int g_n_held;

void tsc_config_warn_defer(const char *var, const char *value, const char *used)
{
    for (int i = 0; i < g_n_held; i++)
        if (!strcmp(g_held[i].var, var))
            return;
    if (g_n_held == MAX_HELD)
        return;
    held *h = &g_held[g_n_held++];
    snprintf(h->var, sizeof h->var, "%s", var);
    snprintf(h->text, sizeof h->text, "ignoring %s='%.200s' (not valid), using %s", var, value,
             used);
}

/* 1 when this process is the job's first to claim the marker, or when no
 * marker can be made; 0 when another process already warned. */
static int first_of_job(const char *out_dir, const char *run_id)
{
    if (!out_dir)
        return 1;
    char path[4096 + 320];
    int n = snprintf(path, sizeof path, "%s/.tscope-config-warned.", out_dir);
    /* the run id as a file name: anything but [A-Za-z0-9._-] becomes '_' */
    for (const char *p = run_id && *run_id ? run_id : "none"; *p && n < 4096 + 300; p++)
        path[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ? *p : '_';
    path[n] = '\0';
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
        close(fd);
        return 1;
    }
    return errno != EEXIST;
}

void tsc_config_warn_flush(const char *out_dir, const char *run_id)
{
    if (!g_n_held)
        return;
    int saved = errno;
    if (first_of_job(out_dir, run_id))
        for (int i = 0; i < g_n_held; i++) {
            char key[80];
            snprintf(key, sizeof key, "config:%.39s", g_held[i].var);
            tsc_warn_once(key, "%s", g_held[i].text);
        }
    g_n_held = 0;
    errno = saved;
}

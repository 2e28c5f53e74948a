/* A scratch directory per test program for generated jobs (gen_job.h):
 * cmocka group setup creates it, teardown removes it.  Header-only: each
 * test program has its own. */
#ifndef TSC_GEN_TMPDIR_H
#define TSC_GEN_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char tmpdir[256];

static int tmpdir_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tsa_gen_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int tmpdir_teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif

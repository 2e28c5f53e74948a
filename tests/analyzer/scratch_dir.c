/* Group scratch directory (scratch_dir.h). */
#include "scratch_dir.h"

#include <stdio.h>
#include <stdlib.h>

char scratch_dir[256];

int scratch_setup(void **state)
{
    (void)state;
    snprintf(scratch_dir, sizeof scratch_dir, "/tmp/tsa_test_XXXXXX");
    return mkdtemp(scratch_dir) ? 0 : -1;
}

int scratch_teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A scratch directory for a whole cmocka group: made by the group setup,
 * removed with everything in it by the group teardown. */
#ifndef TSA_TEST_SCRATCH_DIR_H
#define TSA_TEST_SCRATCH_DIR_H

extern char scratch_dir[256];

int scratch_setup(void **state);     /* cmocka group setup */
int scratch_teardown(void **state);  /* cmocka group teardown */

#endif

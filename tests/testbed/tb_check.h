/* The end-to-end verdict on one job: does what the preload recorded (read
 * back with `tscope-report dump --json`) match exactly what the rank
 * programs say they called (their --expect files)?  The verdict is
 * returned (with the first mismatch in words) rather than asserted, so the
 * checker itself can be tested on tampered expectations. */
#ifndef TB_CHECK_H
#define TB_CHECK_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Load `<prefix>.<rank>` written by tsc-testbed-rank --expect. */
cJSON *tb_load_expect(const char *prefix, int rank);

/* All checks on a job of n ranks whose dumps are in out_dir.  Returns 0,
 * or -1 with the first mismatch described in why:
 *   - per rank and NCCL function: exact call count and byte total;
 *   - per communicator: sequence numbers 0..k-1, calls in the order the
 *     program made them, comm_size and comm_rank as expected;
 *   - a communicator has one id on all its ranks; different communicators
 *     have different ids;
 *   - no events dropped. */
int tb_check_job(const char *out_dir, const char *expect_prefix, int n, char *why, size_t cap);

/* The same on records already read (a dump --json array). */
int tb_check_records(cJSON *all, const char *expect_prefix, int n, char *why, size_t cap);

/* The nccl records of one rank from a dump --json array (borrowed refs in
 * a new array; delete with cJSON_Delete, which does not free the items). */
cJSON *tb_records_of(cJSON *all, int rank, const char *kind);

/* Latest value of a metadata key for a rank (END chunk wins), or NULL. */
const char *tb_meta_value(cJSON *all, int rank, const char *key);

#endif

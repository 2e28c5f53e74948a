/* cmocka checks on test-bed jobs, for tests that include cmocka.h first. */
#ifndef TB_ASSERT_H
#define TB_ASSERT_H

#include <sys/wait.h>

#include "tb_job.h"

/* Runs the job; fails the test, with the job's stderr, unless every rank
 * exited 0 in time. */
static inline void tb_run_job_ok(const tb_job *job)
{
    tb_result r;
    assert_int_equal(tb_run_job(job, &r), 0);
    if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status))
        fail_msg("job failed: status 0x%x\n%.2000s", r.status, r.err);
    tb_result_free(&r);
}

#endif

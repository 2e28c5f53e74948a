/* Generated torch.profiler jobs for the batch tests. */
#ifndef VIEWS_BATCH_JOBS_H
#define VIEWS_BATCH_JOBS_H

/* root/name (name may hold '/': missing parents are made) with 4 ranks
 * of 12 steps.  Trace files are named after host; the straggler rank
 * (-1 none) runs delay_us longer per step on host "<host>9", the others
 * on "<host>0".  Returns 0 or -1. */
int tb_write_job(const char *root, const char *name, const char *host, int straggler,
                 int delay_us);

#endif

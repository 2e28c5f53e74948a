/* Building a tsa_job in memory: used by the dump loader, by the
 * torch.profiler importer (kineto_build.c) and by tests.
 *
 *   tsa_job *job = tsa_job_new("dir");
 *   tsa_rank *r = tsa_job_add_rank(job);     // pointer valid until the next add_rank
 *   r->rank = 0; ...
 *   tsa_kernel k = {.start_ns = .., .end_ns = .., .name = tsa_rank_intern(r, "gemm")};
 *   tsa_rank_add_kernel(r, &k);
 *   ...
 *   tsa_job_finish(job);   // sorts arrays, extents, kernel categories, ranks
 *   tsa_analysis *a = tsa_analyze(job, NULL);
 *
 * The add functions copy the record and return 0, or -1 when out of memory.
 * tsa_job_finish: fills kernel.category from the kernel name when it is
 * TSA_KCAT_OTHER, links NCCL calls to their kernels when kernel.nccl is set,
 * sorts every array by start time (keeping links valid), sets first_ns /
 * last_ns, and sorts ranks by rank number.  Call it once after building. */
#ifndef TSA_JOB_BUILD_H
#define TSA_JOB_BUILD_H

#include "model/model.h"
#include "kernel_category.h"
#include "rank_strings.h"
#include "util/vec.h"

tsa_job *tsa_job_new(const char *dir);
tsa_rank *tsa_job_add_rank(tsa_job *job);
int tsa_job_add_problem(tsa_job *job, const char *file, uint64_t offset,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int tsa_job_add_other_run(tsa_job *job, const char *run_id);

int tsa_rank_add_nccl(tsa_rank *r, const tsa_nccl_op *op);
int tsa_rank_add_kernel(tsa_rank *r, const tsa_kernel *k);
int tsa_rank_add_copy(tsa_rank *r, const tsa_copy *c);
int tsa_rank_add_sync(tsa_rank *r, const tsa_sync *s);
int tsa_rank_add_gemm(tsa_rank *r, const tsa_gemm *g);
int tsa_rank_add_api(tsa_rank *r, const tsa_api *a);
int tsa_rank_add_range(tsa_rank *r, const tsa_range *rg);
int tsa_rank_add_thread(tsa_rank *r, uint32_t tid, const char *name);

/* Append a zeroed record and return it for filling in place (the loader's
 * hot path: building a record on the stack and copying it costs a store-
 * forwarding stall per record); NULL on OOM.  Valid until the next append
 * to the same array. */
tsa_kernel *tsa_rank_new_kernel(tsa_rank *r);
tsa_api *tsa_rank_new_api(tsa_rank *r);
tsa_gemm *tsa_rank_new_gemm(tsa_rank *r);

/* Record counts of a rank, for sizing the next one: the loader reserves
 * what the previous rank held (ranks of one job are alike), so its arrays
 * grow without a copy per doubling.  Reserved but unused capacity is not
 * touched (no RSS) and tsa_rank_shrink gives it back. */
typedef struct tsa_rank_counts {
    size_t nccl, kernels, copies, syncs, gemms, apis, ranges;
} tsa_rank_counts;
void tsa_rank_counts_of(const tsa_rank *r, tsa_rank_counts *c);
/* Grow the rank's array capacities to at least c (plus an eighth); 0, or
 * -1 on OOM (the rank is unchanged and still valid). */
int tsa_rank_reserve(tsa_rank *r, const tsa_rank_counts *c);

/* Name of a host thread, "" when unknown. */
const char *tsa_rank_thread_name(const tsa_rank *r, uint32_t tid);

const char *tsa_phase_name(tsa_phase p);
const char *tsa_dtype_name(tsa_dtype d);
const char *tsa_nccl_op_name(uint8_t op);

const char *tsa_copy_dir_name(uint8_t dir);

/* 1 for collectives whose instance ends together on every rank of the
 * communicator (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce,
 * AlltoAll, Gather, Scatter); 0 for send/recv, group and comm calls. */
int tsa_nccl_is_collective(uint8_t op);

int tsa_job_finish(tsa_job *job);
/* tsa_job_finish for one rank (idempotent; tsa_job_finish calls it). */
int tsa_rank_finish(tsa_rank *r);
/* tsa_rank_finish in two steps, for a loader that drops most API records
 * first (they are only needed in order once filtered): everything but the
 * API sort, then the API sort. */
int tsa_rank_finish_but_apis(tsa_rank *r);
int tsa_rank_sort_apis(tsa_rank *r);
/* The last step of tsa_job_finish: sort ranks by rank number.  For
 * builders that called tsa_rank_finish on every rank already (the loader:
 * a second pass over every array would find nothing to do). */
void tsa_job_sort_ranks(tsa_job *job);
/* Reallocate the rank's arrays to their exact sizes. */
void tsa_rank_shrink(tsa_rank *r);
void tsa_job_free(tsa_job *job); /* also declared in job_load.h */
void tsa_rank_free_contents(tsa_rank *r);

#endif

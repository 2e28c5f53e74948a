/* What an input can and cannot show: a torch.profiler trace names no
 * host, may hold launches without kernel records, may hold collectives of
 * a CPU backend (gloo), and cannot show lost events or clock skew. */
#ifndef TSA_INPUT_FACTS_H
#define TSA_INPUT_FACTS_H

#include <stddef.h>

#include "model/model.h"

/* Launch calls were traced but no kernel record came with them (CUDA
 * activity off, or a CUPTI range-profiler trace). */
int tsa_rank_launches_only(const tsa_job *job);

/* The GPU a job's traces name while no rank has a kernel or copy record
 * but one holds CUDA runtime calls (a sync, a launch API): the model ran
 * on the CPU beside a GPU.  NULL otherwise. */
const char *tsa_job_idle_gpu(const tsa_job *job);

/* NCCL calls of r that are not a CPU backend's (TSA_NCCL_F_CPU_BACKEND). */
size_t tsa_rank_gpu_collectives(const tsa_rank *r);

/* No rank names its host (torch.profiler traces whose file names do not
 * carry it): the report says so rather than "1 host". */
int tsa_hosts_unknown(const tsa_job *job);

struct tsa_analysis;
/* Without steps: the longest time a rank's records run before its window
 * (the run's GPU work) opens, i.e. its one-off start-up; 0 when none. */
int64_t tsa_startup_ns(const struct tsa_analysis *a);

/* Every rank was read from a torch.profiler trace (not a tscope dump). */
int tsa_job_from_traces(const tsa_job *job);

#endif

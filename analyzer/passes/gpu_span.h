/* Spans of a rank's GPU records: the whole-run window of a trace without
 * step markers, HTA's span for --window gpu-span, and the end of the GPU
 * records of an input cut short. */
#ifndef TSA_GPU_SPAN_H
#define TSA_GPU_SPAN_H

#include <stdint.h>

#include "model/model.h"

/* First start and last end over the rank's kernels and copies; 0 when it
 * has none (then *s and *e are untouched), else 1. */
int tsa_rank_gpu_span(const tsa_rank *r, int64_t *s, int64_t *e);

/* The GPU records Holistic Trace Analysis keeps: with ProfilerStep ranges,
 * those whose launching API call (by correlation id) started before the
 * last ProfilerStep's start (the last step is incomplete in a
 * torch.profiler trace; a record whose launch is not in the trace is
 * dropped too); without them, every GPU record.  keep_kernel[i] and
 * keep_copy[i] get 1 or 0.  Returns the number kept, -1 on OOM. */
int64_t tsa_rank_hta_kept(const tsa_rank *r, uint8_t *keep_kernel, uint8_t *keep_copy);

/* HTA's span: first start to last end of the records it keeps.  0 when it
 * keeps none (*s, *e untouched), 1 otherwise, -1 on OOM. */
int tsa_rank_hta_span(const tsa_rank *r, int64_t *s, int64_t *e);

#endif

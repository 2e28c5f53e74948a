/* The calls a torch.profiler trace's main thread makes at the top of its
 * loop, for finding iterations in a trace without ProfilerStep, DataLoader
 * or Optimizer.step records (passes/steps_toplevel.h). */
#ifndef TSA_KINETO_LOOP_H
#define TSA_KINETO_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Every CPU-side call (operator, annotation, Python frame) of the trace,
 * gathered as they come: nesting is only known once all are read. */
typedef struct kineto_loop {
    tsa_range *calls;
    size_t n, cap;
    int full;               /* stopped gathering at KINETO_LOOP_MAX */
} kineto_loop;

/* Calls kept at most: 24 bytes each, so at most 192 MB for a trace that
 * holds more (its iterations are then not found this way). */
#define KINETO_LOOP_MAX ((size_t)8 << 20)

/* One call [s, e) of thread tid, named by the string index name.  0, or
 * -1 on OOM. */
int kineto_loop_add(kineto_loop *l, int64_t s, int64_t e, uint32_t tid, uint32_t name);

/* Reduces the calls to the main thread's top-level calls under its
 * wrappers (a call that holds nearly all of its level is a wrapper, such
 * as main() or a profiling context: its children are the level below),
 * shifted by base_ns, into r->top_calls; frees l.  The main thread is the
 * one whose top-level calls take the most time.  0, or -1 on OOM. */
int kineto_loop_finish(kineto_loop *l, tsa_rank *r, int64_t base_ns);

#endif

/* Steps of a torch.profiler trace without step records, from a call its
 * main thread repeats at the top of its loop: a user function, an
 * nn.Module's forward, an annotation or a runtime stage (not an ATen
 * operator, which a single iteration calls many times). */
#ifndef TSA_STEPS_TOPLEVEL_H
#define TSA_STEPS_TOPLEVEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* The starts of the call repeated at the top of r's loop, in order, from
 * r->top_calls (load/kineto_loop.h): a malloc'ed array in *starts and its
 * length; 0 when no call repeats at least 3 times while taking at least
 * half of the level (*starts NULL).  -1 on OOM. */
int tsa_top_call_starts(const tsa_rank *r, int64_t **starts, size_t *n);

/* 1 when name is a library operator or frame rather than a loop's own
 * call. */
int tsa_is_library_call(const char *name);

#endif

/* Host activity of a torch.profiler trace, for the rank being built: the
 * spans that explain GPU idle time (what the host was doing), and the CPU
 * ops that mark iterations. */
#ifndef TSA_KINETO_HOST_H
#define TSA_KINETO_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "kineto/kineto_internal.h"
#include "model/model.h"

/* Host activity of a trace (kineto_host.c): the spans that explain GPU
 * idle time, appended to r->host_spans as events come. */
#define KINETO_HOST_THREADS 64
typedef struct kineto_host {
    uint32_t tid[KINETO_HOST_THREADS];
    size_t last[KINETO_HOST_THREADS];   /* index of the thread's last CPU-op span */
    size_t last_py[KINETO_HOST_THREADS]; /* and of its last Python span (SIZE_MAX: none) */
    size_t n_threads;
    /* What the last runtime API name was (a trace repeats a few, and
     * classifying one runs some thirty string compares): its text, 0 when
     * none or too long to keep, and the answers. */
    char api_name[64];
    size_t api_name_len;    /* strlen + 1 */
    int api_launch, api_blocking;
    tsa_host_kind api_kind;
} kineto_host;

/* A CPU-side event (cpu_op, user_annotation; annotation: 1 for the
 * latter); a Python function (python_function); a runtime or driver API
 * call.  0, or -1 on OOM. */
int kineto_host_cpu_event(tsa_rank *r, kineto_host *h, const kineto_event *ev, int annotation);
int kineto_host_python_event(tsa_rank *r, kineto_host *h, const kineto_event *ev);
int kineto_host_api_event(tsa_rank *r, kineto_host *h, const kineto_event *ev);
/* Moves the spans onto the trace's base time and sorts them. */
void kineto_host_finish(tsa_rank *r, int64_t base_ns);
/* A CPU op that starts an iteration: Optimizer.step#..., DataLoader __next__. */
int kineto_is_step_marker_op(const char *name);
int kineto_is_dataloader_next(const char *name);

#endif

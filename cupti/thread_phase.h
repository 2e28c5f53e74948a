/* Phase hints from host thread names.
 *
 * PyTorch's autograd engine runs the CUDA part of backward on one thread
 * per device named "pt_autograd_<device>" (set through prctl, visible in
 * /proc/self/task/<tid>/comm), so launches from those threads are backward
 * work (and DDP's bucket all-reduces issued there overlap it).  Forward and
 * the optimizer step run on the thread that called the training loop: the
 * process's main thread (tid == pid) or a thread Python names after the
 * interpreter ("python", "python3.12", "pt_main_thread").  Everything else
 * (DataLoader pin-memory threads, NCCL's proxy and watchdog threads, CUPTI's
 * worker) is "other".  Only a hint: a job that runs backward on its own
 * threads is classified by name alone.  Pure function, used by the analyzer
 * too.
 */
#ifndef TSC_THREAD_PHASE_H
#define TSC_THREAD_PHASE_H

#include <stddef.h>
#include <stdint.h>

typedef enum tsc_thread_phase {
    TSC_PHASE_OTHER = 0,
    TSC_PHASE_BACKWARD = 1,          /* pt_autograd_<N> */
    TSC_PHASE_FORWARD_OPTIMIZER = 2, /* main / python thread */
    TSC_PHASE_COMM = 3,              /* NCCL's own threads (proxy, watchdog) */
    TSC_PHASE_DATA = 4,              /* DataLoader pin-memory thread */
} tsc_thread_phase;

/* name: thread name (comm, up to 15 chars, not necessarily NUL-terminated
 * within name_len); tid/pid: 0 if unknown.  *device receives N of
 * pt_autograd_N (or -1). */
tsc_thread_phase tsc_thread_phase_of(const char *name, size_t name_len, uint32_t tid,
                                     uint32_t pid, int *device);

/* "backward", "forward_optimizer", "comm", "data", "other". */
const char *tsc_thread_phase_name(tsc_thread_phase p);

#endif

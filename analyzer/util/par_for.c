#include "par_for.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct par_state {
    int (*fn)(void *ctx, size_t i, int worker);
    void *ctx;
    size_t n;
    atomic_size_t next;
    atomic_int failed;
} par_state;

typedef struct par_worker {
    par_state *s;
    int id;
} par_worker;

static void *work(void *arg)
{
    par_worker *w = arg;
    par_state *s = w->s;
    for (;;) {
        if (atomic_load(&s->failed))
            break;
        size_t i = atomic_fetch_add(&s->next, 1);
        if (i >= s->n)
            break;
        if (s->fn(s->ctx, i, w->id))
            atomic_store(&s->failed, 1);
    }
    return NULL;
}

int tsa_par_for(size_t n, int threads, int (*fn)(void *ctx, size_t i, int worker), void *ctx)
{
    par_state s = {.fn = fn, .ctx = ctx, .n = n};
    atomic_init(&s.next, 0);
    atomic_init(&s.failed, 0);
    if (threads < 1)
        threads = 1;
    if ((size_t)threads > n)
        threads = n ? (int)n : 1;
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    par_worker *w = calloc((size_t)threads, sizeof *w);
    int started = 0;
    if (tid && w)
        /* Thread 0 is this one; a thread that cannot start leaves its
         * share to the others. */
        for (int t = 1; t < threads; t++) {
            w[t] = (par_worker){&s, t};
            if (pthread_create(&tid[t], NULL, work, &w[t]))
                break;
            started = t;
        }
    par_worker self = {&s, 0};
    work(&self);
    for (int t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
    free(w);
    return atomic_load(&s.failed) ? -1 : 0;
}

int tsa_cores_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

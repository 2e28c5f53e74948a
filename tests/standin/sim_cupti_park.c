/* See sim_cupti_park.h. */
#include "sim_cupti_park.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PARK_LIMIT_S 10 /* a process that never flushes still gets its records */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static uint64_t flushes_ended;
static int flushes_waiting;
static uint64_t parked_batches;
/* Once a flush has waited for the worker, the worker goes on without
 * parking until that flush ends (no hand-over per batch). */
static uint64_t free_while = UINT64_MAX;

int simp_enabled(void)
{
    static int on = -1;
    if (on < 0) {
        const char *s = getenv("STANDIN_WORKER_PARKS");
        on = s != NULL && strcmp(s, "1") == 0;
    }
    return on;
}

static uint64_t read_locked(const uint64_t *v)
{
    pthread_mutex_lock(&lock);
    uint64_t x = *v;
    pthread_mutex_unlock(&lock);
    return x;
}

uint64_t simp_mark(void)
{
    return read_locked(&flushes_ended);
}

void simp_park(uint64_t mark)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += PARK_LIMIT_S;
    pthread_mutex_lock(&lock);
    if (flushes_ended == mark && flushes_waiting == 0 && free_while != mark)
        parked_batches++;
    while (flushes_ended == mark && flushes_waiting == 0 && free_while != mark)
        if (pthread_cond_timedwait(&changed, &lock, &until) == ETIMEDOUT)
            break;
    if (flushes_waiting > 0)
        free_while = flushes_ended;
    pthread_mutex_unlock(&lock);
}

uint64_t simp_parked_batches(void)
{
    return read_locked(&parked_batches);
}

void simp_flush_waiting(int delta)
{
    pthread_mutex_lock(&lock);
    flushes_waiting += delta;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

void simp_flush_ended(void)
{
    pthread_mutex_lock(&lock);
    flushes_ended++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

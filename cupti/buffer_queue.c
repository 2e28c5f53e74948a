/* See buffer_queue.h: a ring under a mutex (a push per CUPTI buffer). */
#include "buffer_queue.h"

#include <pthread.h>

#define TSC_BQ_CAP 512u   /* more than the pool can ever hand out */

static struct {
    pthread_mutex_t lock;
    tsc_done_buffer ring[TSC_BQ_CAP];
    size_t head, n;
} q = {.lock = PTHREAD_MUTEX_INITIALIZER};

void tsc_bq_push(uint8_t *buf, size_t valid)
{
    pthread_mutex_lock(&q.lock);
    if (q.n < TSC_BQ_CAP) {
        q.ring[(q.head + q.n) % TSC_BQ_CAP] = (tsc_done_buffer){buf, valid};
        q.n++;
    }
    pthread_mutex_unlock(&q.lock);
}

size_t tsc_bq_pop(tsc_done_buffer *out, size_t max)
{
    pthread_mutex_lock(&q.lock);
    size_t k = q.n < max ? q.n : max;
    for (size_t i = 0; i < k; i++)
        out[i] = q.ring[(q.head + i) % TSC_BQ_CAP];
    q.head = (q.head + k) % TSC_BQ_CAP;
    q.n -= k;
    pthread_mutex_unlock(&q.lock);
    return k;
}

size_t tsc_bq_depth(void)
{
    pthread_mutex_lock(&q.lock);
    size_t n = q.n;
    pthread_mutex_unlock(&q.lock);
    return n;
}

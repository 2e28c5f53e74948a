/* See buffer_pool.h.  A mutex around a free list: taken about a hundred
 * times a second at the highest launch rates, never on a launch. */
#include "buffer_pool.h"

#include <pthread.h>
#include <stdlib.h>

#define TSC_POOL_MAX 256u

static struct {
    pthread_mutex_t lock;
    size_t buf_bytes;
    unsigned max;
    uint8_t *free_list[TSC_POOL_MAX];
    unsigned n_free;
    unsigned in_use;
    tsc_pool_stats stats;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .buf_bytes = 4u << 20, .max = 16};

void tsc_pool_configure(size_t buf_bytes, unsigned max)
{
    pthread_mutex_lock(&pool.lock);
    pool.buf_bytes = buf_bytes;
    pool.max = max > TSC_POOL_MAX ? TSC_POOL_MAX : max;
    pthread_mutex_unlock(&pool.lock);
}

uint8_t *tsc_pool_get(size_t *size)
{
    uint8_t *b = NULL;
    pthread_mutex_lock(&pool.lock);
    if (pool.n_free > 0) {
        b = pool.free_list[--pool.n_free];
    } else if (pool.stats.allocated < pool.max) {
        b = malloc(pool.buf_bytes);
        if (b != NULL)
            pool.stats.allocated++;
    }
    if (b != NULL) {
        pool.in_use++;
        if (pool.in_use > pool.stats.in_use_peak)
            pool.stats.in_use_peak = pool.in_use;
        pool.stats.given++;
    } else {
        pool.stats.refused++;
    }
    *size = b ? pool.buf_bytes : 0;
    pthread_mutex_unlock(&pool.lock);
    return b;
}

void tsc_pool_put(uint8_t *buf)
{
    if (buf == NULL)
        return;
    pthread_mutex_lock(&pool.lock);
    if (pool.n_free < TSC_POOL_MAX)
        pool.free_list[pool.n_free++] = buf;
    else
        free(buf);
    if (pool.in_use > 0)
        pool.in_use--;
    pthread_mutex_unlock(&pool.lock);
}

tsc_pool_stats tsc_pool_get_stats(void)
{
    pthread_mutex_lock(&pool.lock);
    tsc_pool_stats s = pool.stats;
    s.in_use = pool.in_use;
    pthread_mutex_unlock(&pool.lock);
    return s;
}

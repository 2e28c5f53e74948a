/* Device model of the stand-in; see sim_gpu.h. */
#include "sim_gpu.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct sim_stream {
    int used;
    uint64_t busy_until;
    uint64_t ends[SIM_QUEUE_DEPTH];   /* end times of the last launches, a ring */
    uint64_t n_queued;
    sim_graph *capture;                /* non-NULL while capturing */
} sim_stream;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sim_stream streams[SIM_MAX_STREAMS] = {[0] = {.used = 1}};
static atomic_uint graph_ids = 0;
static atomic_ullong node_ids = 0;

uint64_t sim_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sim_sleep_until(uint64_t t)
{
    for (;;) {
        uint64_t now = sim_realtime_ns();
        if (now >= t)
            return;
        uint64_t left = t - now;
        /* Short waits spin: a device queue drains in microseconds. */
        if (left < 20000)
            continue;
        struct timespec ts = {.tv_sec = (time_t)(left / 1000000000ull),
                              .tv_nsec = (long)(left % 1000000000ull)};
        nanosleep(&ts, NULL);
    }
}

/* Stream handles are 1-based indices disguised as pointers. */
int sim_stream_index(CUstream s)
{
    uintptr_t v = (uintptr_t)s;
    if (v == 0 || v >= SIM_MAX_STREAMS)
        return 0;
    return (int)v;
}

CUstream sim_stream_create(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 1; i < SIM_MAX_STREAMS; i++) {
        if (!streams[i].used) {
            memset(&streams[i], 0, sizeof streams[i]);
            streams[i].used = 1;
            pthread_mutex_unlock(&lock);
            return (CUstream)(uintptr_t)i;
        }
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

uint32_t sim_cupti_stream_id(int stream)
{
    /* CUPTI's ids are small numbers that are not the handles. */
    return 7u + (uint32_t)stream;
}

void sim_gpu_place(int stream, uint64_t dur_ns, sim_work *w)
{
    sim_stream *s = &streams[stream];
    for (;;) {
        pthread_mutex_lock(&lock);
        uint64_t now = sim_realtime_ns();
        uint64_t oldest = s->ends[s->n_queued % SIM_QUEUE_DEPTH];
        if (s->n_queued < SIM_QUEUE_DEPTH || oldest <= now) {
            uint64_t start = now + SIM_LAUNCH_LATENCY_NS;
            if (s->busy_until > start)
                start = s->busy_until;
            w->start = start;
            w->end = start + dur_ns;
            s->busy_until = w->end;
            s->ends[s->n_queued % SIM_QUEUE_DEPTH] = w->end;
            s->n_queued++;
            pthread_mutex_unlock(&lock);
            return;
        }
        pthread_mutex_unlock(&lock);
        sim_sleep_until(oldest);
    }
}

void sim_gpu_wait(int stream)
{
    uint64_t until = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SIM_MAX_STREAMS; i++)
        if ((stream < 0 || i == stream) && streams[i].busy_until > until)
            until = streams[i].busy_until;
    pthread_mutex_unlock(&lock);
    sim_sleep_until(until);
}

int sim_capture_begin(int stream)
{
    sim_graph *g = calloc(1, sizeof *g);
    if (g == NULL)
        return -1;
    pthread_mutex_lock(&lock);
    streams[stream].capture = g;
    pthread_mutex_unlock(&lock);
    return 0;
}

sim_graph *sim_capture_target(int stream)
{
    pthread_mutex_lock(&lock);
    sim_graph *g = streams[stream].capture;
    pthread_mutex_unlock(&lock);
    return g;
}

sim_graph *sim_capture_end(int stream)
{
    pthread_mutex_lock(&lock);
    sim_graph *g = streams[stream].capture;
    streams[stream].capture = NULL;
    pthread_mutex_unlock(&lock);
    return g;
}

uint32_t sim_next_graph_id(void)
{
    return atomic_fetch_add(&graph_ids, 1) + 1;
}

uint64_t sim_next_node_id(void)
{
    return atomic_fetch_add(&node_ids, 1) + 1;
}

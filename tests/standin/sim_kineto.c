/* A second CUPTI client, shaped like torch.profiler's Kineto: linked
 * against libcupti (so its CUPTI calls go through the dynamic linker) and
 * loaded by the stand-in job with RTLD_LOCAL, as libtorch is.  It
 * subscribes (cuptiSubscribe_v2 first, as newer Kineto does), registers
 * its own buffers, enables kernels and runtime calls, and may install a
 * timestamp callback on another clock.
 *
 * SIM_KINETO_TRACE=FILE: at stop it also writes what it received as
 * torch.profiler writes its trace (Kineto's JSON: a ProfilerStep#N range
 * per step the job marked, each kernel with its stream and correlation),
 * so that the checks comparing a dump with "the profiler's trace of the
 * same steps" (scripts/gpu-check) run on the stand-in too. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))

static CUpti_SubscriberHandle sub;
static atomic_ullong kernels_seen;

/* What SIM_KINETO_TRACE writes: kernels as they come, steps as marked. */
typedef struct seen_kernel {
    char name[160];
    uint64_t start, end;
    uint32_t correlation, stream, device;
} seen_kernel;
typedef struct seen_step {
    int step;
    uint64_t start, end;
} seen_step;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static seen_kernel *seen;
static size_t n_seen, cap_seen;
static seen_step *steps;
static size_t n_steps, cap_steps;

/* Grow *base (of *cap elements of size sz) to hold one more; 0 on success. */
static int grow(void **base, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t want = *cap ? *cap * 2 : 256;
    void *p = realloc(*base, want * sz);
    if (p == NULL)
        return -1;
    *base = p;
    *cap = want;
    return 0;
}

static void keep_kernel(const CUpti_ActivityKernel10 *k)
{
    if (getenv("SIM_KINETO_TRACE") == NULL)
        return;
    pthread_mutex_lock(&seen_lock);
    if (grow((void **)&seen, &cap_seen, n_seen, sizeof *seen) == 0) {
        seen_kernel *s = &seen[n_seen++];
        snprintf(s->name, sizeof s->name, "%s", k->name ? k->name : "?");
        s->start = k->start;
        s->end = k->end;
        s->correlation = k->correlationId;
        s->stream = k->streamId;
        s->device = k->deviceId;
    }
    pthread_mutex_unlock(&seen_lock);
}

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *p)
{
    (void)ud, (void)d, (void)id, (void)p;
}

static void CUPTIAPI request(uint8_t **buf, size_t *size, size_t *max)
{
    *size = 1 << 20;
    *buf = malloc(*size);
    *max = 0;
}

static void CUPTIAPI complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                              size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            atomic_fetch_add(&kernels_seen, 1);
            keep_kernel((const CUpti_ActivityKernel10 *)rec);
        }
    free(buf);
}

/* A clock that is not CLOCK_REALTIME (Kineto's TSC-based one). */
static uint64_t CUPTIAPI other_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Returns the CUptiResult of the subscription. */
EXPORT int sim_kineto_start(int use_v2, int own_clock)
{
    CUptiResult r;
    if (use_v2) {
        CUpti_SubscriberParams p = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE};
        r = cuptiSubscribe_v2(&sub, on_cb, NULL, &p);
    } else {
        r = cuptiSubscribe(&sub, on_cb, NULL);
    }
    if (r != CUPTI_SUCCESS)
        return (int)r;
    cuptiActivityRegisterCallbacks(request, complete);
    if (own_clock)
        cuptiActivityRegisterTimestampCallback(other_clock);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    return (int)r;
}

/* The job marks a step (CLOCK_REALTIME ns), as prof.step() does. */
EXPORT void sim_kineto_step(int step, uint64_t start, uint64_t end)
{
    pthread_mutex_lock(&seen_lock);
    if (grow((void **)&steps, &cap_steps, n_steps, sizeof *steps) == 0)
        steps[n_steps++] = (seen_step){step, start, end};
    pthread_mutex_unlock(&seen_lock);
}

/* Kineto writes microseconds with three decimals. */
static void put_us(FILE *f, const char *key, uint64_t ns)
{
    fprintf(f, "\"%s\": %llu.%03llu", key, (unsigned long long)(ns / 1000),
            (unsigned long long)(ns % 1000));
}

static void write_trace(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    fprintf(f, "{\"schemaVersion\": 1, \"traceEvents\": [\n");
    const char *sep = "";
    for (size_t i = 0; i < n_steps; i++, sep = ",\n") {
        fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                   "\"ProfilerStep#%d\", \"pid\": 1, \"tid\": 1, ",
                sep, steps[i].step);
        put_us(f, "ts", steps[i].start);
        fprintf(f, ", ");
        put_us(f, "dur", steps[i].end - steps[i].start);
        fprintf(f, ", \"args\": {}}");
    }
    for (size_t i = 0; i < n_seen; i++, sep = ",\n") {
        const seen_kernel *k = &seen[i];
        fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", "
                   "\"pid\": %u, \"tid\": %u, ",
                sep, k->name, k->device, k->stream);
        put_us(f, "ts", k->start);
        fprintf(f, ", ");
        put_us(f, "dur", k->end - k->start);
        fprintf(f, ", \"args\": {\"device\": %u, \"stream\": %u, \"correlation\": %u}}",
                k->device, k->stream, k->correlation);
    }
    fprintf(f, "\n]}\n");
    fclose(f);
}

/* Kernel records this client received, after a flush. */
EXPORT unsigned long long sim_kineto_stop(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    const char *trace = getenv("SIM_KINETO_TRACE");
    if (trace && *trace) {
        pthread_mutex_lock(&seen_lock);
        write_trace(trace);
        pthread_mutex_unlock(&seen_lock);
    }
    return atomic_load(&kernels_seen);
}

/* What the client finds set when it took CUPTI over. */
EXPORT int sim_kineto_thread_id_type(void)
{
    CUpti_ActivityThreadIdType t = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
    cuptiGetThreadIdType(&t);
    return (int)t;
}

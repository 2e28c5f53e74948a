/* What the host did, from a torch.profiler trace's CPU-side events: the
 * spans that explain GPU idle time (DataLoader waits, synchronisations,
 * blocking allocator calls, CPU operators; core/idle_cause.h) and the
 * ranges that mark iterations when the trace has no ProfilerStep
 * (Optimizer.step, DataLoader __next__; core/steps.c).
 *
 * CPU operators nest, and a trace holds hundreds of thousands of them: a
 * span that starts inside the previous span of its thread only extends
 * it, so a thread keeps about one span per top-level operator. */
#include "kineto_host.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* Runtime calls that hold the host until the device is done. */
static int blocking_api(const char *n, tsa_host_kind *kind)
{
    static const char *const syncs[] = {"cudaStreamSynchronize", "cudaDeviceSynchronize",
                                        "cudaEventSynchronize", "hipStreamSynchronize",
                                        "hipDeviceSynchronize", "hipEventSynchronize",
                                        "cuStreamSynchronize", "cuCtxSynchronize", NULL};
    static const char *const allocs[] = {"cudaFree", "cudaMalloc", "cudaFreeHost",
                                         "cudaHostAlloc", "cudaMallocHost", "hipFree",
                                         "hipMalloc", "hipHostFree", "hipHostMalloc",
                                         "cuMemFree", "cuMemAlloc", NULL};
    for (const char *const *p = syncs; *p; p++)
        if (starts(n, *p)) {
            *kind = TSA_HOST_SYNC;
            return 1;
        }
    for (const char *const *p = allocs; *p; p++)
        if (!strcmp(n, *p) || (starts(n, *p) && n[strlen(*p)] == '_')) {
            *kind = TSA_HOST_ALLOC;
            return 1;
        }
    /* a copy without Async returns when the copy is done */
    if (!strcmp(n, "cudaMemcpy") || !strcmp(n, "hipMemcpy") || starts(n, "cudaMemcpy_") ||
        !strcmp(n, "cudaMemcpy2D") || !strcmp(n, "hipMemcpyWithStream") ||
        !strcmp(n, "hipMemcpyDtoH") || !strcmp(n, "cuMemcpyDtoH_v2")) {
        *kind = TSA_HOST_SYNC;
        return 1;
    }
    return 0;
}

static int is_launch_api(const char *n)
{
    return starts(n, "cudaLaunchKernel") || starts(n, "cuLaunchKernel") ||
           starts(n, "hipLaunchKernel") || starts(n, "hipExtLaunchKernel") ||
           starts(n, "hipModuleLaunchKernel") || starts(n, "hipExtModuleLaunchKernel") ||
           starts(n, "cudaLaunchCooperativeKernel") || starts(n, "cudaGraphLaunch") ||
           starts(n, "hipGraphLaunch");
}

int kineto_is_dataloader_next(const char *n)
{
    return strstr(n, "DataLoader") && strstr(n, "__next__");
}

static int add_span(tsa_rank *r, kineto_host *h, const kineto_event *ev, tsa_host_kind kind)
{
    int64_t s = ev->ts_ns, e = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    uint32_t tid = (uint32_t)ev->tid;
    if (kind == TSA_HOST_CPU_OP || kind == TSA_HOST_PYTHON) {
        size_t t = 0;
        while (t < h->n_threads && h->tid[t] != tid)
            t++;
        if (t == h->n_threads && h->n_threads < KINETO_HOST_THREADS) {
            h->tid[h->n_threads] = tid;
            h->last[h->n_threads] = h->last_py[h->n_threads] = SIZE_MAX;
            h->n_threads++;
        }
        size_t *at = t < h->n_threads ? (kind == TSA_HOST_PYTHON ? &h->last_py[t] : &h->last[t])
                                      : NULL;
        if (at && *at != SIZE_MAX) {
            tsa_host_span *last = &r->host_spans[*at];
            if (s >= last->start_ns && s <= last->end_ns) {
                if (e > last->end_ns)
                    last->end_ns = e;
                return 0;
            }
        }
        if (at)
            *at = r->n_host_spans;
    }
    tsa_host_span sp = {s, e, tid, (uint8_t)kind};
    return TSA_VEC_PUSH(r->host_spans, r->n_host_spans, r->cap_host_spans, sp);
}

int kineto_host_cpu_event(tsa_rank *r, kineto_host *h, const kineto_event *ev, int annotation)
{
    const char *n = ev->name.s ? ev->name.s : "";
    r->host_records = 1;
    if (kineto_is_dataloader_next(n))
        return add_span(r, h, ev, TSA_HOST_DATA);
    if (!strcmp(n, "aten::item") || !strcmp(n, "aten::_local_scalar_dense"))
        return add_span(r, h, ev, TSA_HOST_SYNC);
    /* Annotations and step markers are regions of the loop, not work. */
    if (annotation || starts(n, "ProfilerStep#"))
        return 0;
    return add_span(r, h, ev, TSA_HOST_CPU_OP);
}

int kineto_host_python_event(tsa_rank *r, kineto_host *h, const kineto_event *ev)
{
    r->host_records = 1;
    return add_span(r, h, ev, TSA_HOST_PYTHON);
}

int kineto_host_api_event(tsa_rank *r, kineto_host *h, const kineto_event *ev)
{
    const char *n = ev->name.s ? ev->name.s : "";
    size_t len = ev->name.s ? ev->name.len : 0;
    if (!(h->api_name_len == len + 1 && !memcmp(h->api_name, n, len))) {
        h->api_launch = is_launch_api(n);
        h->api_blocking = blocking_api(n, &h->api_kind);
        h->api_name_len = 0;
        if (len < sizeof h->api_name) {
            memcpy(h->api_name, n, len);
            h->api_name_len = len + 1;
        }
    }
    if (h->api_launch)
        r->launches++;
    if (h->api_blocking)
        return add_span(r, h, ev, h->api_kind);
    return 0;
}

int kineto_is_step_marker_op(const char *n)
{
    return starts(n, "Optimizer.step#") || kineto_is_dataloader_next(n);
}

static int cmp_span(const void *pa, const void *pb)
{
    const tsa_host_span *a = pa, *b = pb;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->end_ns > b->end_ns) - (a->end_ns < b->end_ns);
}

void kineto_host_finish(tsa_rank *r, int64_t base_ns)
{
    for (size_t i = 0; i < r->n_host_spans; i++) {
        r->host_spans[i].start_ns += base_ns;
        r->host_spans[i].end_ns += base_ns;
    }
    if (r->n_host_spans > 1)
        qsort(r->host_spans, r->n_host_spans, sizeof *r->host_spans, cmp_span);
}

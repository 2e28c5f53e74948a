/* How fast the writer turns CUPTI buffers into dump records.
 *
 * Builds activity buffers the way CUPTI 13 lays them out (records one
 * after another, 8-byte aligned): per launch a runtime call, the driver
 * call nested in it (same correlation id), and in separate buffers the
 * kernels, as CUPTI's global and per-context queues deliver them.  Feeds
 * them through the real sink into the real GPU record stream of a real
 * dump, on one thread, and prints records and kernels per second of that
 * thread's CPU time and bytes per kernel in the file.
 *
 * Usage: bench_sink [LAUNCHES [ROUNDS]]   (TSCOPE_OUT: where the dump goes)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>
#include <cupti_driver_cbid.h>

#include "activity_sink.h"
#include "bulk_stream.h"
#include "recorder.h"
#include "recorder_internal.h"

#define BUF_BYTES (4u << 20)

static size_t aligned(size_t n)
{
    return (n + 7u) & ~(size_t)7u;
}

static CUptiResult next_record(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    size_t off = 0;
    if (*rec != NULL) {
        size_t size = (*rec)->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                          ? sizeof(CUpti_ActivityKernel10)
                          : sizeof(CUpti_ActivityAPI);
        off = (size_t)((uint8_t *)*rec - buf) + aligned(size);
    }
    if (off + sizeof(CUpti_Activity) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)(buf + off);
    return CUPTI_SUCCESS;
}

static const char *const names[] = {"_Z11fwd_layer_kPfS_i", "_Z11bwd_layer_kPfS_i",
                                    "_Z25multi_tensor_apply_kernelPfi",
                                    "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x32"};

typedef struct buffers {
    uint8_t *api, *kern;
    size_t api_used, kern_used;
} buffers;

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const tsc_sink_out gpu_stream = {
    .intern = tsc_bulk_intern, .string = tsc_bulk_string, .event = tsc_bulk_event,
    .generation = tsc_bulk_generation};

static void flush_buffers(buffers *b, uint64_t *records)
{
    /* Kernels first: the per-context queue's buffer often comes back
     * before the global one that holds their launch calls. */
    tsc_sink_buffer(b->kern, b->kern_used, next_record, &gpu_stream);
    tsc_sink_buffer(b->api, b->api_used, next_record, &gpu_stream);
    tsc_bulk_commit();
    *records += b->kern_used / aligned(sizeof(CUpti_ActivityKernel10)) +
                b->api_used / aligned(sizeof(CUpti_ActivityAPI));
    b->api_used = b->kern_used = 0;
}

int main(int argc, char **argv)
{
    long launches = argc > 1 ? atol(argv[1]) : 1000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (!tsc_rec_active()) {
        fprintf(stderr, "bench_sink: recorder not active (TSCOPE_OUT writable?)\n");
        return 1;
    }
    tsc_sink_reset(TSC_CUPTI_FULL);
    buffers b = {malloc(BUF_BYTES), malloc(BUF_BYTES), 0, 0};
    uint64_t t = 1795600000000000000ull;
    uint32_t corr = 1;
    for (int round = 0; round < rounds; round++) {
        uint64_t records = 0;
        double cpu0 = thread_cpu_s();
        for (long i = 0; i < launches; i++, corr++, t += 3000) {
            if (b.api_used + 2 * aligned(sizeof(CUpti_ActivityAPI)) > BUF_BYTES ||
                b.kern_used + aligned(sizeof(CUpti_ActivityKernel10)) > BUF_BYTES)
                flush_buffers(&b, &records);
            CUpti_ActivityAPI a;
            memset(&a, 0, sizeof a);
            a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
            a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
            a.start = t + 200;
            a.end = t + 1800;
            a.threadId = 4242;
            a.correlationId = corr;
            memcpy(b.api + b.api_used, &a, sizeof a);
            b.api_used += aligned(sizeof a);
            a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
            a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
            a.start = t;
            a.end = t + 2000;
            memcpy(b.api + b.api_used, &a, sizeof a);
            b.api_used += aligned(sizeof a);
            CUpti_ActivityKernel10 k;
            memset(&k, 0, sizeof k);
            k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k.start = t + 5000;
            k.end = t + 7000;
            k.streamId = 7;
            k.gridX = (int32_t)(i % 7) + 1;
            k.gridY = k.gridZ = k.blockY = k.blockZ = 1;
            k.blockX = 256;
            k.correlationId = corr;
            k.name = names[i % 4];
            memcpy(b.kern + b.kern_used, &k, sizeof k);
            b.kern_used += aligned(sizeof k);
        }
        flush_buffers(&b, &records);
        tsc_sink_age(&gpu_stream, 1);
        double cpu = thread_cpu_s() - cpu0;
        printf("round %d: %ld launches, %llu records in %.3f s CPU: %.2f M records/s, "
               "%.2f M kernels/s, %.0f ns per launch\n",
               round, launches, (unsigned long long)records, cpu, (double)records / cpu / 1e6,
               (double)launches / cpu / 1e6, cpu * 1e9 / (double)launches);
    }
    tsc_sink_finish(&gpu_stream);
    tsc_bulk_commit();
    tsc_sink_stats st = tsc_sink_get_stats();
    tsc_rec_stats rs;
    tsc_rec_get_stats(&rs);
    printf("kernels written %llu (with their launch %llu), launches alone %llu; "
           "dump %llu bytes so far: %.1f bytes per kernel\n",
           (unsigned long long)st.kernels, (unsigned long long)st.kernels_folded,
           (unsigned long long)st.calls_alone, (unsigned long long)rs.bytes_written,
           (double)rs.bytes_written / (double)(st.kernels ? st.kernels : 1));
    free(b.api);
    free(b.kern);
    return 0;
}

/* Kinds of operation, signatures and a median for the what-if. */
#include <stdlib.h>

#include "tsc_format.h"
#include "wi_internal.h"

uint8_t wi_okind_of_comm(uint8_t op)
{
    switch (op) {
    case TSC_NCCL_SEND:
    case TSC_NCCL_RECV:
        return TSA_OK_P2P;
    case TSC_NCCL_ALLREDUCE:
        return TSA_OK_ALLREDUCE;
    case TSC_NCCL_ALLGATHER:
        return TSA_OK_ALLGATHER;
    case TSC_NCCL_REDUCESCATTER:
        return TSA_OK_REDUCESCATTER;
    case TSC_NCCL_ALLTOALL:
        return TSA_OK_ALLTOALL;
    default:
        return TSA_OK_OTHER_COMM;
    }
}

uint8_t wi_okind_of_phase(uint8_t phase)
{
    switch (phase) {
    case TSA_PHASE_FORWARD:
        return TSA_OK_FORWARD;
    case TSA_PHASE_BACKWARD:
        return TSA_OK_BACKWARD;
    case TSA_PHASE_OPTIMIZER:
        return TSA_OK_OPTIMIZER;
    case TSA_PHASE_UNKNOWN:
        return TSA_OK_COMPUTE;
    default:
        return TSA_OK_OTHER_COMPUTE;
    }
}

const char *tsa_pipe_okind_name(int k)
{
    static const char *names[TSA_OK_COUNT] = {
        "compute", "forward compute", "backward compute", "optimizer", "other compute",
        "send/recv", "AllReduce", "AllGather", "ReduceScatter", "AlltoAll", "other comm"};
    return k >= 0 && k < TSA_OK_COUNT ? names[k] : "?";
}

uint64_t wi_hash(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

uint64_t wi_hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return wi_hash(h, 0x2f);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
int64_t wi_median_i64(int64_t *v, size_t n)
{
    if (!n)
        return 0;
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

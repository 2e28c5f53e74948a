/* Name tables for Kineto input: which PyTorch collective or NCCL kernel is
 * which NCCL operation, and torch dtype names.  Kernel categories come from
 * the one categorizer (load/kernel_category.c), as for dumps. */
#include "kineto_internal.h"

#include <string.h>
#include <strings.h>

#include "tsc_format.h"

typedef struct name_op {
    const char *name;
    int op;
} name_op;

/* c10d's names as record_param_comms writes them ("Collective name"). */
static const name_op collectives[] = {
    {"allreduce", TSC_NCCL_ALLREDUCE},
    {"all_reduce", TSC_NCCL_ALLREDUCE},
    {"allreduce_coalesced", TSC_NCCL_ALLREDUCE},
    {"allgather", TSC_NCCL_ALLGATHER},
    {"all_gather", TSC_NCCL_ALLGATHER},
    {"_allgather_base", TSC_NCCL_ALLGATHER},
    {"allgather_into_tensor_coalesced", TSC_NCCL_ALLGATHER},
    {"allgather_coalesced", TSC_NCCL_ALLGATHER},
    {"all_gather_into_tensor", TSC_NCCL_ALLGATHER},
    {"reduce_scatter", TSC_NCCL_REDUCESCATTER},
    {"_reduce_scatter_base", TSC_NCCL_REDUCESCATTER},
    {"reduce_scatter_tensor_coalesced", TSC_NCCL_REDUCESCATTER},
    {"reduce_scatter_tensor", TSC_NCCL_REDUCESCATTER},
    {"broadcast", TSC_NCCL_BROADCAST},
    {"reduce", TSC_NCCL_REDUCE},
    {"all_to_all", TSC_NCCL_ALLTOALL},
    {"alltoall", TSC_NCCL_ALLTOALL},
    {"alltoall_base", TSC_NCCL_ALLTOALL},
    {"all_to_all_single", TSC_NCCL_ALLTOALL},
    {"gather", TSC_NCCL_GATHER},
    {"scatter", TSC_NCCL_SCATTER},
    {"send", TSC_NCCL_SEND},
    {"recv", TSC_NCCL_RECV},
    {"recvAnysource", TSC_NCCL_RECV},
};

int kineto_nccl_op_from_collective(const char *c)
{
    if (!c || !*c)
        return 0;
    for (size_t i = 0; i < sizeof collectives / sizeof collectives[0]; i++)
        if (!strcasecmp(c, collectives[i].name))
            return collectives[i].op;
    return 0;
}

int kineto_is_nccl_kernel(const char *k)
{
    return k && (!strncmp(k, "ncclDevKernel", 13) || !strncmp(k, "ncclKernel", 10) ||
                 !strncmp(k, "ncclSymkDevKernel", 17) || !strncmp(k, "void ncclKernel", 15) ||
                 !strncmp(k, "void ncclDevKernel", 18));
}

/* The operation named right after the kernel prefix: ncclDevKernel_AllReduce_...,
 * ncclKernel_AllGather_RING_LL_..., ncclSymkDevKernel_AllReduce_...  The
 * name says nothing of the algorithm NCCL really used. */
int kineto_nccl_op_from_kernel(const char *k)
{
    if (!kineto_is_nccl_kernel(k))
        return 0;
    const char *u = strchr(k, '_');
    if (!u)
        return 0;
    u++;
    static const name_op prefixes[] = {
        {"AllReduce", TSC_NCCL_ALLREDUCE},
        {"AllGather", TSC_NCCL_ALLGATHER},
        {"ReduceScatter", TSC_NCCL_REDUCESCATTER},
        {"Broadcast", TSC_NCCL_BROADCAST},
        {"Reduce", TSC_NCCL_REDUCE},   /* after ReduceScatter */
        {"AllToAll", TSC_NCCL_ALLTOALL},
        /* Point-to-point: the kernel name does not say which way the bytes
         * went, so a SendRecv kernel without its CPU op counts as a Send. */
        {"SendRecv", TSC_NCCL_SEND},
        {"Send", TSC_NCCL_SEND},
        {"Recv", TSC_NCCL_RECV},
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(u, prefixes[i].name, strlen(prefixes[i].name)))
            return prefixes[i].op;
    return 0;
}

int kineto_dtype_from_torch(const char *d, unsigned *elem_size)
{
    static const struct {
        const char *name;
        int dt;
        unsigned size;
    } table[] = {
        {"Float", TSC_DT_FLOAT32, 4},     {"float", TSC_DT_FLOAT32, 4},
        {"Half", TSC_DT_FLOAT16, 2},      {"BFloat16", TSC_DT_BFLOAT16, 2},
        {"Double", TSC_DT_FLOAT64, 8},    {"Int", TSC_DT_INT32, 4},
        {"Long", TSC_DT_INT64, 8},        {"Char", TSC_DT_INT8, 1},
        {"Byte", TSC_DT_UINT8, 1},        {"Bool", TSC_DT_UINT8, 1},
        {"Float8_e4m3fn", TSC_DT_FLOAT8E4M3, 1}, {"Float8_e5m2", TSC_DT_FLOAT8E5M2, 1},
        {"UInt32", TSC_DT_UINT32, 4},     {"UInt64", TSC_DT_UINT64, 8},
        /* C++ type names of a CPU op's "Input type" */
        {"double", TSC_DT_FLOAT64, 8},    {"long int", TSC_DT_INT64, 8},
        {"int", TSC_DT_INT32, 4},         {"bool", TSC_DT_UINT8, 1},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (d && !strcmp(d, table[i].name)) {
            *elem_size = table[i].size;
            return table[i].dt;
        }
    *elem_size = 0;
    return TSC_DT_NONE;
}

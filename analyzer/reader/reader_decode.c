/* Typed views of descriptor payloads.  Payloads are unaligned byte runs, so
 * every decoder copies into an aligned struct after checking type and size. */
#include <string.h>

#include "reader_internal.h"

size_t tsr_desc_min_len(uint8_t type)
{
    switch (type) {
    case TSC_DESC_NCCL_CALL: return sizeof(tsc_desc_nccl_call);
    case TSC_DESC_THREAD: return sizeof(tsc_desc_thread);
    case TSC_DESC_KERNEL: return sizeof(tsc_desc_kernel);
    case TSC_DESC_COPY: return sizeof(tsc_desc_copy);
    case TSC_DESC_SYNC: return sizeof(tsc_desc_sync);
    case TSC_DESC_API: return sizeof(tsc_desc_api);
    case TSC_DESC_GEMM: return sizeof(tsc_desc_gemm);
    case TSC_DESC_TASK: return sizeof(tsc_desc_task);
    case TSC_DESC_MEM: return sizeof(tsc_desc_mem);
    case TSC_DESC_KERNEL_LAUNCH: return sizeof(tsc_desc_kernel_launch);
    case TSC_DESC_GRAPH_NODE: return sizeof(tsc_desc_graph_node);
    default: return 0; /* strings and unknown types: any length */
    }
}

uint8_t tsr_desc_type_for_kind(uint8_t kind)
{
    return (uint8_t)tsc_event_desc_type(kind);
}

static int decode(const tsr_desc *d, uint8_t type, void *out, size_t size)
{
    if (!d || !d->payload || d->type != type || d->len < size)
        return -1;
    memcpy(out, d->payload, size);
    return 0;
}

int tsr_decode_nccl_call(const tsr_desc *d, tsc_desc_nccl_call *out)
{
    return decode(d, TSC_DESC_NCCL_CALL, out, sizeof *out);
}

/* A kernel launch descriptor begins with the kernel's configuration. */
int tsr_decode_kernel(const tsr_desc *d, tsc_desc_kernel *out)
{
    if (d && d->type == TSC_DESC_KERNEL_LAUNCH)
        return decode(d, TSC_DESC_KERNEL_LAUNCH, out, sizeof *out);
    return decode(d, TSC_DESC_KERNEL, out, sizeof *out);
}

int tsr_decode_kernel_launch(const tsr_desc *d, tsc_desc_kernel_launch *out)
{
    return decode(d, TSC_DESC_KERNEL_LAUNCH, out, sizeof *out);
}

int tsr_decode_graph_node(const tsr_desc *d, tsc_desc_graph_node *out)
{
    return decode(d, TSC_DESC_GRAPH_NODE, out, sizeof *out);
}

void tsr_split_kernel_launch(const tsr_event *e, tsr_launch_split *out)
{
    out->kernel_start = e->start_ns;
    out->kernel_end = e->start_ns + TSC_LO32(e->end_ns);
    out->call_start = e->start_ns - TSC_HI32(e->val);
    out->call_end = out->call_start + TSC_HI32(e->end_ns);
    out->correlation = TSC_LO32(e->val);
}

int tsr_decode_copy(const tsr_desc *d, tsc_desc_copy *out)
{
    return decode(d, TSC_DESC_COPY, out, sizeof *out);
}

int tsr_decode_sync(const tsr_desc *d, tsc_desc_sync *out)
{
    return decode(d, TSC_DESC_SYNC, out, sizeof *out);
}

int tsr_decode_api(const tsr_desc *d, tsc_desc_api *out)
{
    return decode(d, TSC_DESC_API, out, sizeof *out);
}

int tsr_decode_gemm(const tsr_desc *d, tsc_desc_gemm *out)
{
    return decode(d, TSC_DESC_GEMM, out, sizeof *out);
}

int tsr_decode_mem(const tsr_desc *d, tsc_desc_mem *out)
{
    return decode(d, TSC_DESC_MEM, out, sizeof *out);
}

int tsr_decode_thread(const tsr_desc *d, uint32_t *tid, const char **name, size_t *name_len)
{
    tsc_desc_thread t;
    if (decode(d, TSC_DESC_THREAD, &t, sizeof t) != 0 || t.name_len > d->len - sizeof t)
        return -1;
    if (tid)
        *tid = t.tid;
    if (name)
        *name = (const char *)d->payload + sizeof t;
    if (name_len)
        *name_len = t.name_len;
    return 0;
}

int tsr_decode_task(const tsr_desc *d, tsc_desc_task *out, const char **name)
{
    if (decode(d, TSC_DESC_TASK, out, sizeof *out) != 0 || out->name_len > d->len - sizeof *out)
        return -1;
    if (name)
        *name = (const char *)d->payload + sizeof *out;
    return 0;
}

int tsr_decode_string(const tsr_desc *d, const char **s, size_t *len)
{
    if (!d || !d->payload || d->type != TSC_DESC_STRING)
        return -1;
    if (s)
        *s = (const char *)d->payload;
    if (len)
        *len = d->len;
    return 0;
}

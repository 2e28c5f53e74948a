#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "record_json.h"
#include "util/json_int.h"

static void add_i64(cJSON *o, const char *k, int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    cJSON_AddRawToObject(o, k, buf);
}

static void add_hex(cJSON *o, const char *k, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
    cJSON_AddStringToObject(o, k, buf);
}

/* A name from a table, or the number when the table does not know it. */
static void add_name(cJSON *o, const char *k, const char *name, uint64_t v)
{
    if (name)
        cJSON_AddStringToObject(o, k, name);
    else
        tsa_json_add_u64(o, k, v);
}

/* Raw text, like every integer here: cJSON's number output goes through
 * double formatting and a sscanf round-trip check, which dominated the
 * cost of `dump --json`. */
static void add_triple(cJSON *o, const char *k, const uint32_t v[3])
{
    char buf[40];
    snprintf(buf, sizeof buf, "[%u,%u,%u]", v[0], v[1], v[2]);
    cJSON_AddRawToObject(o, k, buf);
}

/* The layouts of the event kinds table's JSON column (format/
 * tsc_event_kinds.h), json_<layout>: a kind's own keys.  DESCR layouts
 * read its descriptor, its file (for strings) and the NCCL operation its
 * kernel's name gives, and return -1 when the descriptor is not usable;
 * SLOT layouts read the slot alone. */
typedef struct kind_json {
    cJSON *o;
    const tsr_file *f;
    const tsr_event *e;
    const char *nccl_op;
} kind_json;

static int json_nccl_call(const kind_json *j)
{
    cJSON *o = j->o;
    const tsr_event *e = j->e;
    tsc_desc_nccl_call call;
    if (tsr_decode_nccl_call(e->desc, &call))
        return -1;
    const tsc_desc_nccl_call *c = &call;
    add_name(o, "op", tsr_nccl_op_name(c->op), c->op);
    add_name(o, "dtype", tsr_nccl_dtype_name(c->dtype), c->dtype);
    tsa_json_add_u64(o, "count", c->count);
    tsa_json_add_u64(o, "bytes", c->bytes);
    add_hex(o, "comm", c->comm_id);
    tsa_json_add_u64(o, "comm_rank", c->comm_rank);
    tsa_json_add_u64(o, "comm_size", c->comm_size);
    tsa_json_add_u64(o, "seq", e->val);
    add_i64(o, "peer", c->peer);
    add_name(o, "redop", tsr_nccl_redop_name(c->redop), c->redop);
    add_hex(o, "stream", c->stream);
    tsa_json_add_u64(o, "result", (uint8_t)(e->aux >> 8));
    tsa_json_add_u64(o, "group_depth", (uint8_t)(e->aux & 0xff));
    cJSON_AddBoolToObject(o, "in_group", (e->flags & TSC_NCCL_F_IN_GROUP) != 0);
    cJSON_AddBoolToObject(o, "async", (e->flags & TSC_NCCL_F_ASYNC_ERR) != 0);
    add_hex(o, "parent_comm", c->parent_comm_id);
    add_i64(o, "color", c->color);
    return 0;
}

static void kernel_keys(cJSON *o, const tsr_file *f, uint64_t correlation,
                        const tsc_desc_kernel *k, const char *nccl_op)
{
    tsr_json_add_text(o, "name", tsr_string(f, k->name));
    tsa_json_add_u64(o, "device", k->device);
    tsa_json_add_u64(o, "stream", k->stream);
    add_triple(o, "grid", k->grid);
    add_triple(o, "block", k->block);
    tsa_json_add_u64(o, "shared_mem", k->shared_mem);
    tsa_json_add_u64(o, "correlation", correlation);
    tsa_json_add_u64(o, "graph_id", k->graph_id);
    if (nccl_op)
        cJSON_AddStringToObject(o, "nccl_op", nccl_op);
}

static int json_copy(const kind_json *j)
{
    cJSON *o = j->o;
    const tsr_event *e = j->e;
    tsc_desc_copy copy;
    if (tsr_decode_copy(e->desc, &copy))
        return -1;
    const tsc_desc_copy *c = &copy;
    add_name(o, "dir", tsr_copy_dir_name(c->dir), c->dir);
    tsa_json_add_u64(o, "bytes", c->bytes);
    cJSON_AddBoolToObject(o, "pinned", c->pinned != 0);
    tsa_json_add_u64(o, "device", c->device);
    if (c->dir == TSC_COPY_P2P)
        tsa_json_add_u64(o, "dst_device", c->dst_device);
    tsa_json_add_u64(o, "stream", c->stream);
    tsa_json_add_u64(o, "correlation", e->val);
    return 0;
}

static int json_gemm(const kind_json *j)
{
    cJSON *o = j->o;
    const tsr_event *e = j->e;
    tsc_desc_gemm gemm;
    if (tsr_decode_gemm(e->desc, &gemm))
        return -1;
    const tsc_desc_gemm *g = &gemm;
    tsa_json_add_u64(o, "m", g->m);
    tsa_json_add_u64(o, "n", g->n);
    tsa_json_add_u64(o, "k", g->k);
    tsa_json_add_u64(o, "batch", g->batch);
    tsa_json_add_u64(o, "flops", g->flops);
    tsa_json_add_u64(o, "transa", g->transa);
    tsa_json_add_u64(o, "transb", g->transb);
    add_name(o, "api", tsr_gemm_api_name(g->api), g->api);
    tsa_json_add_u64(o, "a_type", g->a_type);
    tsa_json_add_u64(o, "c_type", g->c_type);
    tsa_json_add_u64(o, "compute_type", g->compute_type);
    cJSON_AddBoolToObject(o, "complex", g->complex != 0);
    tsa_json_add_u64(o, "call", e->val);
    return 0;
}

static int json_mem(const kind_json *j)
{
    cJSON *o = j->o;
    const tsr_event *e = j->e;
    tsc_desc_mem mem;
    if (tsr_decode_mem(e->desc, &mem))
        return -1;
    const tsc_desc_mem *m = &mem;
    add_name(o, "source", tsr_mem_source_name(m->source), m->source);
    tsa_json_add_u64(o, "bytes", e->val);
    tsa_json_add_u64(o, "device", m->device);
    tsa_json_add_u64(o, "stream", m->stream);
    tsa_json_add_u64(o, "mem_kind", m->mem_kind);
    if (e->kind == TSC_EV_MEM_POOL)
        add_name(o, "pool_op", tsr_mem_pool_op_name(e->flags), e->flags);
    if (m->pool)
        add_hex(o, "pool", m->pool);
    return 0;
}

/* A kernel with its launching call (1.2): the kernel's keys, and the call
 * as an object. */
static void kernel_launch_keys(cJSON *o, const tsr_file *f, const tsr_event *e,
                               const tsc_desc_kernel_launch *d, const char *nccl_op)
{
    tsr_launch_split s;
    tsr_split_kernel_launch(e, &s);
    kernel_keys(o, f, s.correlation, &d->kernel, nccl_op);
    cJSON *call = cJSON_AddObjectToObject(o, "launch");
    if (!call)
        return;
    tsr_json_add_text(call, "name", tsr_string(f, d->api_name));
    add_name(call, "domain", tsr_api_domain_name(d->api_domain), d->api_domain);
    tsa_json_add_u64(call, "cbid", d->api_cbid);
    tsa_json_add_u64(call, "start_ns", s.call_start);
    tsa_json_add_u64(call, "end_ns", s.call_end);
    if (d->graph_node)
        tsa_json_add_u64(o, "graph_node", d->graph_node);
}

static int json_kernel(const kind_json *j)
{
    tsc_desc_kernel k;
    if (tsr_decode_kernel(j->e->desc, &k))
        return -1;
    kernel_keys(j->o, j->f, j->e->val, &k, j->nccl_op);
    return 0;
}

static int json_kernel_launch(const kind_json *j)
{
    tsc_desc_kernel_launch kl;
    if (tsr_decode_kernel_launch(j->e->desc, &kl))
        return -1;
    kernel_launch_keys(j->o, j->f, j->e, &kl, j->nccl_op);
    return 0;
}

static int json_graph_node(const kind_json *j)
{
    tsc_desc_graph_node gn;
    if (tsr_decode_graph_node(j->e->desc, &gn))
        return -1;
    tsa_json_add_u64(j->o, "graph_node", gn.node);
    add_hex(j->o, "external_id", gn.external_id);
    return 0;
}

static int json_sync(const kind_json *j)
{
    tsc_desc_sync s;
    if (tsr_decode_sync(j->e->desc, &s))
        return -1;
    add_name(j->o, "type", tsr_sync_type_name(s.type), s.type);
    tsa_json_add_u64(j->o, "stream", s.stream);
    tsa_json_add_u64(j->o, "correlation", j->e->val);
    return 0;
}

static int json_api(const kind_json *j)
{
    tsc_desc_api a;
    if (tsr_decode_api(j->e->desc, &a))
        return -1;
    tsr_json_add_text(j->o, "name", tsr_string(j->f, a.name));
    add_name(j->o, "domain", tsr_api_domain_name(a.domain), a.domain);
    tsa_json_add_u64(j->o, "cbid", a.cbid);
    tsa_json_add_u64(j->o, "correlation", j->e->val);
    return 0;
}

static int json_nvtx(const kind_json *j)
{
    if (!j->e->desc)
        return -1;
    tsr_json_add_text(j->o, "name", (const char *)j->e->desc->payload);
    return 0;
}

static void json_extcorr(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "correlation", e->desc_id);
    add_hex(o, "external_id", e->val);
    tsa_json_add_u64(o, "ext_kind", e->flags);
}

static void json_gpu_metric(cJSON *o, const tsr_event *e)
{
    add_name(o, "metric", tsr_gpu_metric_name(e->aux), e->aux);
    tsa_json_add_u64(o, "device", e->flags);
    tsa_json_add_u64(o, "value", e->val);
}

static void json_proc_cpu(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "cpu_ns", e->val);
    tsa_json_add_u64(o, "runnable", e->aux);
    tsa_json_add_u64(o, "threads", e->desc_id);
}

/* A name of known length as a JSON string, cut to fit buf. */
static void add_counted_text(cJSON *o, const char *k, const char *s, size_t len, char *buf,
                             size_t cap)
{
    size_t l = len < cap - 1 ? len : cap - 1;
    memcpy(buf, s, l);
    buf[l] = 0;
    tsr_json_add_text(o, k, buf);
}

static int json_task_cpu(const kind_json *j)
{
    tsc_desc_task t;
    const char *name;
    if (tsr_decode_task(j->e->desc, &t, &name))
        return -1;
    tsa_json_add_u64(j->o, "task", t.tid);
    add_name(j->o, "role", tsr_task_role_name(t.role), t.role);
    char buf[64];
    add_counted_text(j->o, "name", name, t.name_len, buf, sizeof buf);
    char st[2] = {(char)(j->e->aux & 0x7f), 0};
    tsr_json_add_text(j->o, "state", st);
    tsa_json_add_u64(j->o, "cpu_ns", j->e->val);
    return 0;
}

static void json_host_load(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "load1_milli", e->val);
    tsa_json_add_u64(o, "running", e->aux);
}

static void json_cpu_throttle(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "throttled_ns", e->val);
    tsa_json_add_u64(o, "throttled_periods", e->desc_id);
    tsa_json_add_u64(o, "cgroup_version", e->flags == 1 ? 1 : 2);
}

static int json_net_counter(const kind_json *j)
{
    const char *port;
    size_t len;
    if (tsr_decode_string(j->e->desc, &port, &len))
        return -1;
    char buf[96];
    add_counted_text(j->o, "port", port, len, buf, sizeof buf);
    add_name(j->o, "counter", tsr_net_counter_name(j->e->aux), j->e->aux);
    tsa_json_add_u64(j->o, "value", j->e->val);
    return 0;
}

static void json_np_comm(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "plugin_version", e->flags);
    tsa_json_add_u64(o, "comm_index", e->aux);
    tsa_json_add_u64(o, "comm_rank", e->desc_id);
    add_hex(o, "comm_id", e->val);
}

/* The op id, op and sequence number of NP_COLL and NP_CE_COLL. */
static void np_coll_op_keys(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "op_id", e->desc_id);
    tsa_json_add_u64(o, "op", TSC_NP_COLL_OP(e->val));
    tsa_json_add_u64(o, "seq", TSC_NP_COLL_SEQ(e->val));
}

static void json_np_coll(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "comm_index", e->aux);
    tsa_json_add_u64(o, "channels", e->flags);
    np_coll_op_keys(o, e);
}

static void json_np_ce_coll(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "comm_index", e->aux);
    /* flags: sync by multicast, intra-batch sync */
    tsa_json_add_u64(o, "multicast_sync", e->flags & 1);
    tsa_json_add_u64(o, "intra_batch_sync", e->flags >> 1 & 1);
    np_coll_op_keys(o, e);
}

static void json_np_proxy(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "comm_index", e->aux);
    tsa_json_add_u64(o, "channel", e->flags);
    tsa_json_add_u64(o, "op_id", e->desc_id);
    tsa_json_add_u64(o, "bytes", e->val);
}

/* start/end hold durations here (format.md) */
static void json_np_proxy_wait(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "send", e->flags & 1);
    tsa_json_add_u64(o, "pxn", (e->flags & TSC_NP_WAIT_PXN) != 0);
    tsa_json_add_u64(o, "peer", e->desc_id);
    tsa_json_add_u64(o, "steps", e->aux);
    tsa_json_add_u64(o, "wait_peer_ns", e->start_ns);
    tsa_json_add_u64(o, "wire_ns", e->end_ns);
    tsa_json_add_u64(o, "wait_gpu_ns", e->val);
}

static void json_np_kernel_ch(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "comm_index", e->aux);
    tsa_json_add_u64(o, "channel", e->flags & 0x7f);
    tsa_json_add_u64(o, "gpu_timer", !(e->flags & TSC_NP_KCH_NO_GPU_TIMER));
    tsa_json_add_u64(o, "op_id", e->desc_id);
    tsa_json_add_u64(o, "gpu_ns", e->val);
}

static void json_np_ce_sync(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "comm_index", e->aux);
    tsa_json_add_u64(o, "op_id", e->desc_id);
    tsa_json_add_u64(o, "complete", e->flags);
    tsa_json_add_u64(o, "ranks", e->val);
}

static void json_np_ce_batch(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "comm_index", e->aux);
    tsa_json_add_u64(o, "op_id", e->desc_id);
    tsa_json_add_u64(o, "intra_sync", e->flags);
    tsa_json_add_u64(o, "bytes", e->val & TSC_NP_BATCH_BYTES_MAX);
    tsa_json_add_u64(o, "copies", e->val >> 48);
}

static void json_np_captured(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "comm_index", e->aux);
    tsa_json_add_u64(o, "p2p", e->flags & 1);
    tsa_json_add_u64(o, "op", TSC_NP_COLL_OP(e->val));
    tsa_json_add_u64(o, "count", TSC_NP_COLL_SEQ(e->val));
}

static void json_np_proxy_stall(cJSON *o, const tsr_event *e)
{
    tsa_json_add_u64(o, "comm_index", e->aux);
    tsa_json_add_u64(o, "channel", e->flags);
    tsa_json_add_u64(o, "peer", e->desc_id);
    tsa_json_add_u64(o, "op_id", TSC_NP_STALL_OP(e->val));
    tsa_json_add_u64(o, "send", (uint64_t)TSC_NP_STALL_SEND(e->val));
    tsa_json_add_u64(o, "steps_ended", TSC_NP_STALL_STEPS(e->val));
    tsa_json_add_u64(o, "step_state", TSC_NP_STALL_STATE(e->val));
}

/* Kind-specific keys, as the table's JSON column says; 0 when the
 * descriptor was usable (and for kinds not in the table: no keys). */
static int kind_keys(cJSON *o, const tsr_file *f, const tsr_event *e, const char *nccl_op)
{
    const kind_json j = {.o = o, .f = f, .e = e, .nccl_op = nccl_op};
#define JSON_DESCR(layout) json_##layout(&j)
#define JSON_SLOT(layout) (json_##layout(o, e), 0)
#define JSON_VAL(key) (tsa_json_add_u64(o, #key, e->val), 0)
#define JSON_NONE 0
#define KIND_KEYS(id, code, name, desc, range, times, json) \
    case code: return JSON_##json;
    switch (e->kind) {
        TSC_EVENT_KINDS(KIND_KEYS)
    default: return 0;
    }
#undef KIND_KEYS
#undef JSON_NONE
#undef JSON_VAL
#undef JSON_SLOT
#undef JSON_DESCR
}

/* Sync, API and kernel launch descriptors carry the calling thread; CUPTI
 * delivers their records on its own thread, so the chunk tid would be the
 * wrong one. */
static uint32_t event_tid(const tsr_event *e)
{
    tsc_desc_sync s;
    tsc_desc_api a;
    tsc_desc_kernel_launch kl;
    switch (tsr_desc_type_for_kind(e->kind)) {
    case TSC_DESC_SYNC:
        if (tsr_decode_sync(e->desc, &s) == 0 && s.tid)
            return s.tid;
        break;
    case TSC_DESC_API:
        if (tsr_decode_api(e->desc, &a) == 0 && a.tid)
            return a.tid;
        break;
    case TSC_DESC_KERNEL_LAUNCH:
        if (tsr_decode_kernel_launch(e->desc, &kl) == 0)
            return kl.tid;
        break;
    default: break;
    }
    return e->tid;
}

cJSON *tsr_event_json(const tsr_file *f, const tsr_event *e, int rank, const char *nccl_op)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_i64(o, "rank", rank);
    add_name(o, "kind", tsr_event_kind_name(e->kind), e->kind);
    uint64_t start = e->start_ns, end = e->end_ns;
    if (e->kind == TSC_EV_KERNEL_LAUNCH) {
        tsr_launch_split s;
        tsr_split_kernel_launch(e, &s);
        end = s.kernel_end;  /* the slot packs durations; show times */
    }
    tsa_json_add_u64(o, "start_ns", start);
    tsa_json_add_u64(o, "end_ns", end);
    tsa_json_add_u64(o, "tid", event_tid(e));
    if (kind_keys(o, f, e, nccl_op) != 0) {
        tsa_json_add_u64(o, "desc", e->desc_id);
        cJSON_AddStringToObject(o, "error", "undefined descriptor");
    }
    return o;
}

cJSON *tsr_meta_json(int rank, const char *key, const char *value, int end_chunk)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_i64(o, "rank", rank);
    cJSON_AddStringToObject(o, "kind", "meta");
    cJSON_AddStringToObject(o, "chunk", end_chunk ? "END" : "META");
    tsr_json_add_text(o, "key", key);
    tsr_json_add_text(o, "value", value);
    return o;
}

cJSON *tsr_desc_json(const tsr_desc *d, int rank)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_i64(o, "rank", rank);
    cJSON_AddStringToObject(o, "kind", "desc");
    tsa_json_add_u64(o, "id", d->id);
    add_name(o, "type", tsr_desc_type_name(d->type), d->type);
    tsa_json_add_u64(o, "len", d->len);
    tsa_json_add_u64(o, "tid", d->tid);
    const char *s;
    uint32_t tid;
    size_t n;
    if (tsr_decode_string(d, &s, NULL) == 0) {
        tsr_json_add_text(o, "text", s);
    } else if (tsr_decode_thread(d, &tid, &s, &n) == 0) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(n < 255 ? n : 255), s);
        tsa_json_add_u64(o, "thread_tid", tid);
        tsr_json_add_text(o, "name", name);
    }
    return o;
}

/* "nccl_plugin" JSON key (plugin_view.h). */
#include "plugin_view.h"

#include <stdio.h>

#include "passes/coll_transfer.h"
#include "passes/nprof_summary.h"
#include "tsc_nccl_ops.h"
#include "util/json_int.h"

static void add_hex(cJSON *o, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long)v);
    cJSON_AddStringToObject(o, key, buf);
}

static double gbps(uint64_t bytes, uint64_t ns) { return ns ? (double)bytes / (double)ns : 0; }

static cJSON *xfer_rows(const tsa_xfer *x, size_t n, int channels)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        if (channels) {
            cJSON_AddNumberToObject(o, "channel", x[i].channel);
        } else {
            cJSON_AddNumberToObject(o, "src_rank", x[i].src);
            cJSON_AddNumberToObject(o, "dst_rank", x[i].dst);
        }
        tsa_json_add_u64(o, "proxy_ops", x[i].ops);
        tsa_json_add_u64(o, "steps", x[i].steps);
        tsa_json_add_u64(o, "bytes", x[i].bytes);
        tsa_json_add_u64(o, "wire_ns", x[i].wire_ns);
        tsa_json_add_u64(o, "credit_wait_ns", x[i].wait_peer_ns);
        tsa_json_add_num(o, "gbps", gbps(x[i].bytes, x[i].wire_ns));
        if (channels && x[i].kernel_n)
            tsa_json_add_num(o, "kernel_us_mean",
                             (double)x[i].kernel_ns / (double)x[i].kernel_n / 1e3);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *transfers(const tsa_analysis *a)
{
    tsa_coll_xfer *x;
    size_t n;
    if (tsa_coll_xfers(a->job, &x, &n))
        return NULL;
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "op", tsc_nccl_op_name(x[i].op));
        add_hex(o, "comm_id", x[i].comm_id);
        tsa_json_add_u64(o, "comm_size", x[i].comm_size);
        tsa_json_add_u64(o, "collectives", x[i].colls);
        tsa_json_add_u64(o, "ranks", x[i].ranks);
        tsa_json_add_u64(o, "bytes", x[i].bytes);
        tsa_json_add_u64(o, "wire_ns", x[i].wire_ns);
        tsa_json_add_num(o, "gbps", gbps(x[i].bytes, x[i].wire_ns));
        cJSON_AddItemToObject(o, "by_peer", xfer_rows(x[i].peers, x[i].n_peers, 0));
        cJSON_AddItemToObject(o, "by_channel", xfer_rows(x[i].channels, x[i].n_channels, 1));
        cJSON_AddItemToArray(arr, o);
    }
    tsa_coll_xfers_free(x, n);
    return arr;
}

static cJSON *replays(const tsa_np_summary *s)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < s->n_replays; i++) {
        const tsa_np_replay *r = &s->replays[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddNumberToObject(o, "rank", r->rank);
        add_hex(o, "comm_id", r->comm_id);
        cJSON_AddStringToObject(o, "op", tsc_nccl_op_name(r->op));
        tsa_json_add_u64(o, "seq", r->seq);
        tsa_json_add_u64(o, "collectives", r->colls);
        tsa_json_add_u64(o, "proxy_ops", r->proxy_ops);
        tsa_json_add_u64(o, "steps", r->steps);
        tsa_json_add_u64(o, "bytes", r->bytes);
        tsa_json_add_u64(o, "wire_ns", r->wire_ns);
        if (r->kernel_ns >= 0)
            tsa_json_add_num(o, "kernel_us_median", r->kernel_ns / 1e3);
        else
            cJSON_AddNullToObject(o, "kernel_us_median");
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

cJSON *tsa_plugin_json(const tsa_analysis *a)
{
    tsa_np_summary s;
    if (!tsa_np_any(a->job) || tsa_np_summarize(a->job, &s))
        return NULL;
    cJSON *o = cJSON_CreateObject();
    if (o) {
        tsa_json_add_u64(o, "ranks", s.ranks);
        cJSON_AddNumberToObject(o, "version_min", s.version_min);
        cJSON_AddNumberToObject(o, "version_max", s.version_max);
        tsa_json_add_u64(o, "collectives", s.colls);
        tsa_json_add_u64(o, "ce_collectives", s.ce_colls);
        tsa_json_add_u64(o, "send_recv", s.p2p);
        tsa_json_add_u64(o, "joined", s.joined);
        tsa_json_add_u64(o, "without_call", s.no_call);
        tsa_json_add_u64(o, "captured_calls", s.captured_calls);
        tsa_json_add_u64(o, "kernel_channels", s.kch);
        if (s.kch_gpu && s.kernel_ns_median >= 0) {
            tsa_json_add_num(o, "kernel_us_median", s.kernel_ns_median / 1e3);
            tsa_json_add_num(o, "kernel_us_p95", s.kernel_ns_p95 / 1e3);
        }
        tsa_json_add_u64(o, "proxy_ops", s.proxies);
        tsa_json_add_u64(o, "events_lost", s.lost);
        tsa_json_add_u64(o, "pxn_proxy_ops", s.pxn_ops);
        cJSON *t = transfers(a);
        if (t)
            cJSON_AddItemToObject(o, "collective_transfers", t);
        cJSON_AddItemToObject(o, "graph_replays", replays(&s));
    }
    tsa_np_summary_free(&s);
    return o;
}

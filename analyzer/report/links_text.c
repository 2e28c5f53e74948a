/* NETWORK LINKS section and "links" JSON key (links_text.h). */
#include "links_text.h"

#include <stdlib.h>

#include "findings/netlink.h"
#include "load/nprof_reduce.h"
#include "util/json_int.h"

static int slowest_first(const void *pa, const void *pb)
{
    const tsa_link_stat *a = pa, *b = pb;
    return (a->step_ns_median < b->step_ns_median) - (a->step_ns_median > b->step_ns_median);
}

static double gbps(const tsa_link_stat *l)
{
    return l->wire_ns ? (double)l->bytes / (double)l->wire_ns : 0;
}

int tsa_links_any(const tsa_analysis *a)
{
    for (size_t i = 0; i < a->job->n_ranks; i++)
        if (tsa_np_proxy_count(&a->job->ranks[i]))
            return 1;
    return 0;
}

int tsa_links_print(FILE *out, const tsa_analysis *a, size_t max_lines)
{
    tsa_link_stat *l;
    size_t n;
    double med;
    if (tsa_link_stats(a->job, &l, &n, &med))
        return -1;
    if (!n) {
        free(l);
        return 0;
    }
    qsort(l, n, sizeof *l, slowest_first);
    fprintf(out, "  %zu links, median %.0f us per network step; slowest first\n", n, med / 1e3);
    fprintf(out, "  %-16s %4s %7s %12s %10s %12s %8s %8s %8s %8s\n", "link", "ch", "ops",
            "us/step", "GB/s", "recv us/step", "x peers", "x src", "x dst", "src gpu");
    for (size_t i = 0; i < n && i < max_lines; i++) {
        char name[40];
        snprintf(name, sizeof name, "%d -> %d", l[i].src, l[i].dst);
        fprintf(out, "  %-16s %4d %7zu %12.0f %10.3f %12.0f %8.2f %8.2f %8.2f %8.2f\n", name,
                l[i].channel, l[i].ops, l[i].step_ns_median / 1e3, gbps(&l[i]),
                l[i].recv_wait_ns_median >= 0 ? l[i].recv_wait_ns_median / 1e3 : -1,
                l[i].peer_rel, l[i].src_other_rel, l[i].dst_other_rel, l[i].src_gpu_rel);
    }
    if (n > max_lines)
        fprintf(out, "  ... %zu more (--json: all)\n", n - max_lines);
    free(l);
    return 0;
}

cJSON *tsa_links_json(const tsa_analysis *a)
{
    tsa_link_stat *l;
    size_t n;
    double med;
    if (tsa_link_stats(a->job, &l, &n, &med) || !n) {
        free(l);
        return NULL;
    }
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *x = cJSON_CreateObject();
        if (!x)
            break;
        cJSON_AddNumberToObject(x, "src_rank", l[i].src);
        cJSON_AddNumberToObject(x, "dst_rank", l[i].dst);
        cJSON_AddNumberToObject(x, "channel", l[i].channel);
        cJSON_AddNumberToObject(x, "proxy_ops", (double)l[i].ops);
        tsa_json_add_num(x, "step_us", l[i].step_ns_median / 1e3);
        tsa_json_add_u64(x, "bytes", l[i].bytes);
        tsa_json_add_u64(x, "wire_ns", l[i].wire_ns);
        tsa_json_add_num(x, "gbps", gbps(&l[i]));
        if (l[i].recv_wait_ns_median >= 0)
            tsa_json_add_num(x, "recv_wait_us", l[i].recv_wait_ns_median / 1e3);
        else
            cJSON_AddNullToObject(x, "recv_wait_us");
        tsa_json_add_num(x, "peers_step_us", l[i].base_ns / 1e3);
        tsa_json_add_num(x, "vs_peer_links", l[i].peer_rel);
        tsa_json_add_num(x, "src_other_links", l[i].src_other_rel);
        tsa_json_add_num(x, "dst_other_links", l[i].dst_other_rel);
        tsa_json_add_num(x, "src_gpu_wait_rel", l[i].src_gpu_rel);
        cJSON_AddItemToArray(arr, x);
    }
    free(l);
    return arr;
}

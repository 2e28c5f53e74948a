/* The hang view (text) and the JSON fields of the hang findings. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "load/job_build.h"
#include "hang_render.h"

void tsa_hang_print_text(FILE *out, const tsa_hang_result *h, int always)
{
    if (!h || (!h->n && !always))
        return;
    fprintf(out, "\nHANGS, DESYNCS, EARLY EXITS\n");
    if (!h->n)
        fprintf(out, "  none found: every call that was entered was left, and no rank ended "
                     "while others went on\n");
    if (h->last_step >= 0)
        fprintf(out, "  last step completed by every rank: %ld\n", h->last_step);
    if (h->no_data.n) {
        char buf[256];
        fprintf(out, "  no data (no dump): %s of %d\n",
                tsa_rank_list_format(&h->no_data, buf, sizeof buf), h->world_size);
    }
    for (size_t i = 0; i < h->n; i++) {
        const tsa_hang_item *it = &h->items[i];
        fprintf(out, "  %s  %s\n", it->id, it->title ? it->title : "");
        for (size_t g = 0; g < it->n_groups; g++) {
            char buf[256];
            const tsa_hang_group *gr = &it->groups[g];
            fprintf(out, "      %-24s %s\n",
                    gr->ranks.n ? tsa_rank_list_format(&gr->ranks, buf, sizeof buf) : "",
                    gr->what);
        }
    }
}

static cJSON *ranks_json(const tsa_rank_list *l)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < l->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(l->v[i]));
    return a;
}

void tsa_hang_add_json(cJSON *x, const tsa_hang_result *h, const tsa_finding *f)
{
    for (size_t i = 0; h && x && f && f->title && i < h->n; i++) {
        const tsa_hang_item *it = &h->items[i];
        if (strcmp(it->id, f->id) || !it->title || strcmp(it->title, f->title))
            continue;
        char comm[24];
        snprintf(comm, sizeof comm, "%016llx", (unsigned long long)it->comm_id);
        cJSON_AddStringToObject(x, "op", tsa_nccl_op_name(it->op));
        cJSON_AddStringToObject(x, "comm", comm);
        cJSON_AddNumberToObject(x, "seq", (double)it->seq);
        if (it->kind == TSA_HANG_HANG) {
            cJSON_AddItemToObject(x, "missing_ranks", ranks_json(&it->missing));
            cJSON_AddItemToObject(x, "stuck_ranks", ranks_json(&it->stuck));
            cJSON_AddItemToObject(x, "exited_ranks", ranks_json(&it->exited));
            cJSON_AddItemToObject(x, "no_data_ranks", ranks_json(&it->no_data));
            cJSON_AddBoolToObject(x, "on_gpu", it->on_gpu);
            cJSON_AddBoolToObject(x, "watchdog", it->watchdog);
            /* only with the plugin's stalled proxy ops (hang_proxy.c) */
            cJSON *links = it->n_links ? cJSON_AddArrayToObject(x, "stopped_links") : NULL;
            for (size_t l = 0; links && l < it->n_links; l++) {
                const tsa_hang_link *k = &it->links[l];
                cJSON *o = cJSON_CreateObject();
                cJSON_AddNumberToObject(o, "src_rank", k->src);
                cJSON_AddNumberToObject(o, "dst_rank", k->dst);
                cJSON_AddNumberToObject(o, "channel", k->channel);
                if (k->step >= 0)
                    cJSON_AddNumberToObject(o, "step", (double)k->step);
                else
                    cJSON_AddNullToObject(o, "step");
                cJSON_AddBoolToObject(o, "sender_posted", k->sender_posted);
                cJSON_AddBoolToObject(o, "receiver_waits", k->receiver_waits);
                cJSON_AddItemToArray(links, o);
            }
        } else {
            cJSON_AddItemToObject(x, "ranks", ranks_json(&it->ranks));
        }
        if (it->kind == TSA_HANG_EXITED) {
            if (it->has_exit_code)
                cJSON_AddNumberToObject(x, "exit_code", it->exit_code);
            else
                cJSON_AddNullToObject(x, "exit_code");
            if (it->signal)
                cJSON_AddNumberToObject(x, "signal", it->signal);
            else
                cJSON_AddNullToObject(x, "signal");
        }
        cJSON *groups = cJSON_AddArrayToObject(x, "groups");
        for (size_t g = 0; groups && g < it->n_groups; g++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToObject(o, "ranks", ranks_json(&it->groups[g].ranks));
            cJSON_AddStringToObject(o, "what", it->groups[g].what);
            cJSON_AddItemToArray(groups, o);
        }
        if (h->last_step >= 0)
            cJSON_AddNumberToObject(x, "last_step", (double)h->last_step);
        return;
    }
}

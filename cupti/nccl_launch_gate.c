#include "nccl_launch_gate.h"

#include <stdatomic.h>

/* NCCL's descriptor ids: an open-addressing set, inserted into by the
 * application's threads, read by the writer; never removed (a descriptor
 * id stays an NCCL call's for the process's life). */
#define DESC_SLOTS 8192u
#define DESC_PROBES 64u
static _Atomic uint32_t nccl_descs[DESC_SLOTS];

static unsigned desc_home(uint32_t desc)
{
    return (unsigned)((desc * 2654435761u) % DESC_SLOTS);
}

void tsc_gate_note_nccl_desc(uint32_t desc)
{
    if (desc == 0)
        return;
    for (unsigned i = 0, s = desc_home(desc); i < DESC_PROBES; i++, s = (s + 1) % DESC_SLOTS) {
        uint32_t seen = atomic_load_explicit(&nccl_descs[s], memory_order_acquire);
        if (seen == desc)
            return;
        if (seen == 0) {
            uint32_t empty = 0;
            if (atomic_compare_exchange_strong_explicit(&nccl_descs[s], &empty, desc,
                                                        memory_order_release,
                                                        memory_order_acquire) ||
                empty == desc)
                return;
        }
    }
}

int tsc_gate_is_nccl_external_id(uint64_t external_id)
{
    if ((external_id >> 63) == 0)
        return 0;
    uint32_t desc = (uint32_t)(external_id >> 32) & 0x7fffffffu;
    if (desc == 0)
        return 0;
    for (unsigned i = 0, s = desc_home(desc); i < DESC_PROBES; i++, s = (s + 1) % DESC_SLOTS) {
        uint32_t seen = atomic_load_explicit(&nccl_descs[s], memory_order_acquire);
        if (seen == desc)
            return 1;
        if (seen == 0)
            return 0;
    }
    return 0;
}

void tsc_gate_note(tsc_launch_gate *g, uint32_t correlation)
{
    if (correlation == 0 || tsc_gate_has(g, correlation))
        return;
    g->ids[g->next] = correlation;
    g->next = (g->next + 1) % TSC_GATE_SLOTS;
}

int tsc_gate_has(const tsc_launch_gate *g, uint32_t correlation)
{
    if (correlation == 0)
        return 0;
    /* Newest first: the record is nearly always the last one noted. */
    for (unsigned i = 0; i < TSC_GATE_SLOTS; i++)
        if (g->ids[(g->next + TSC_GATE_SLOTS - 1 - i) % TSC_GATE_SLOTS] == correlation)
            return 1;
    return 0;
}

#include "nccl_launch_gate.h"

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

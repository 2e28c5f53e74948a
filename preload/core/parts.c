/* The table of the capture's optional parts (parts.h): registered once at
 * start-up, then only read, so every moment (a signal handler's flush
 * too) walks a plain array. */
#include "parts.h"

static const tsc_part *g_parts[TSC_PARTS_MAX];
static size_t g_nparts;

int (*tsc_parts_push_corr_fn)(uint64_t id);
void (*tsc_parts_pop_corr_fn)(void);

TSC_TLS int tsc_call_in_nccl;
TSC_TLS uint64_t tsc_call_init_comm;

void tsc_parts_register(const tsc_part *part)
{
    if (g_nparts == TSC_PARTS_MAX)
        return; /* process/parts.c asserts the list fits */
    g_parts[g_nparts++] = part;
    if (!tsc_parts_push_corr_fn && part->push_corr && part->pop_corr) {
        tsc_parts_push_corr_fn = part->push_corr;
        tsc_parts_pop_corr_fn = part->pop_corr;
    }
}

/* Every registered part's `moment`, called with the arguments given. */
#define EACH_PART(moment, ...)                                                               \
    for (size_t i = 0; i < g_nparts; i++)                                                    \
        if (g_parts[i]->moment)                                                              \
            g_parts[i]->moment(__VA_ARGS__)

void tsc_parts_activate(void) { EACH_PART(activate); }
void tsc_parts_setup(void) { EACH_PART(setup); }
void tsc_parts_start(void) { EACH_PART(start); }
void tsc_parts_flush(int from_signal) { EACH_PART(flush, from_signal); }
void tsc_parts_drain(void) { EACH_PART(drain); }
void tsc_parts_meta(void) { EACH_PART(meta); }
void tsc_parts_exit(void) { EACH_PART(exit); }
void tsc_parts_fork_child(void) { EACH_PART(fork_child); }
void tsc_parts_comm_created(void) { EACH_PART(comm_created); }

int tsc_parts_have_drain(void)
{
    for (size_t i = 0; i < g_nparts; i++)
        if (g_parts[i]->drain)
            return 1;
    return 0;
}

size_t tsc_parts_own_records(uint64_t now, tsc_event *out, uint32_t *tids, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < g_nparts && n < cap; i++)
        if (g_parts[i]->own_records)
            n += g_parts[i]->own_records(now, out + n, tids + n, cap - n);
    return n;
}

int tsc_parts_saw_no_device_work(void)
{
    for (size_t i = 0; i < g_nparts; i++)
        if (g_parts[i]->saw_no_device_work && g_parts[i]->saw_no_device_work())
            return 1;
    return 0;
}

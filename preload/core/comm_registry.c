#include "comm_registry.h"

#include <pthread.h>
#include <string.h>

#define EMPTY ((uintptr_t)0)
#define REMOVED ((uintptr_t)1)

static tsc_comm_info table[TSC_COMM_CAPACITY];
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t slot_of(uintptr_t key)
{
    uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 40) & (TSC_COMM_CAPACITY - 1);
}

tsc_comm_info *tsc_comm_lookup(const void *comm)
{
    uintptr_t key = (uintptr_t)comm;
    if (key <= REMOVED)
        return NULL;
    uint32_t i = slot_of(key);
    for (uint32_t n = 0; n < TSC_COMM_CAPACITY; n++, i = (i + 1) & (TSC_COMM_CAPACITY - 1)) {
        uintptr_t k = atomic_load_explicit(&table[i].key, memory_order_acquire);
        if (k == key)
            return &table[i];
        if (k == EMPTY)
            return NULL;
    }
    return NULL;
}

static _Atomic uint32_t added_ever;

uint32_t tsc_comm_count_ever(void)
{
    return atomic_load(&added_ever);
}

tsc_comm_info *tsc_comm_add(const void *comm, uint64_t comm_id, int32_t rank, int32_t size)
{
    uintptr_t key = (uintptr_t)comm;
    if (key <= REMOVED)
        return NULL;
    pthread_mutex_lock(&write_lock);
    tsc_comm_info *e = tsc_comm_lookup(comm);
    if (!e) {
        uint32_t i = slot_of(key);
        for (uint32_t n = 0; n < TSC_COMM_CAPACITY; n++, i = (i + 1) & (TSC_COMM_CAPACITY - 1)) {
            uintptr_t k = atomic_load_explicit(&table[i].key, memory_order_relaxed);
            if (k == EMPTY || k == REMOVED) {
                e = &table[i];
                break;
            }
        }
    }
    if (e) {
        atomic_fetch_add(&added_ever, 1);
        /* Fields first, key last: a reader that sees the key sees them. */
        e->comm_id = comm_id;
        atomic_store_explicit(&e->rank, rank, memory_order_relaxed);
        atomic_store_explicit(&e->size, size, memory_order_relaxed);
        atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
        atomic_store_explicit(&e->splits, 0, memory_order_relaxed);
        atomic_store_explicit(&e->shrinks, 0, memory_order_relaxed);
        atomic_store_explicit(&e->key, key, memory_order_release);
    }
    pthread_mutex_unlock(&write_lock);
    return e;
}

void tsc_comm_remove(const void *comm)
{
    pthread_mutex_lock(&write_lock);
    tsc_comm_info *e = tsc_comm_lookup(comm);
    if (e)
        atomic_store_explicit(&e->key, REMOVED, memory_order_release);
    pthread_mutex_unlock(&write_lock);
}

uint32_t tsc_comm_count_live(void)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < TSC_COMM_CAPACITY; i++)
        n += atomic_load(&table[i].key) > REMOVED;
    return n;
}

void tsc_comm_registry_clear(void)
{
    pthread_mutex_lock(&write_lock);
    for (uint32_t i = 0; i < TSC_COMM_CAPACITY; i++)
        atomic_store(&table[i].key, EMPTY);
    atomic_store(&added_ever, 0);
    pthread_mutex_unlock(&write_lock);
}

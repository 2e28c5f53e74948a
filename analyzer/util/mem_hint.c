/* Memory hints (mem_hint.h). */
#include "mem_hint.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

void tsa_hint_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (!p || bytes < TSA_HUGE_HINT_MIN)
        return;
    uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

void *tsa_realloc_huge(void *p, size_t old_bytes, size_t bytes)
{
    void *n = malloc(bytes);
    if (!n)
        return NULL;
    tsa_hint_huge(n, bytes);
    if (p) {
        /* never past the old block, whatever capacity its owner counted */
        size_t keep = old_bytes < bytes ? old_bytes : bytes;
        size_t usable = malloc_usable_size(p);
        memcpy(n, p, keep < usable ? keep : usable);
        free(p);
    }
    return n;
}

void tsa_keep_freed_memory(size_t keep_bytes)
{
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    /* Fixing the thresholds also stops glibc's own adjustment of them. */
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, keep_bytes > INT32_MAX ? INT32_MAX : (int)keep_bytes);
#else
    (void)keep_bytes;
#endif
}

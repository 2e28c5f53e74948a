/* Memory hints for the loader's large arrays. */
#ifndef TSA_MEM_HINT_H
#define TSA_MEM_HINT_H

#include <stddef.h>

/* Ask for transparent huge pages on the whole 2 MiB pages inside
 * [p, p + bytes) before they are first touched: a large array then takes
 * one page fault per 2 MiB instead of per 4 KiB.  Only a hint: does
 * nothing for small arrays, or where the kernel does not support it. */
void tsa_hint_huge(void *p, size_t bytes);
#define TSA_HUGE_HINT_MIN ((size_t)8 << 20)   /* smaller: no hint */

/* realloc(p, bytes) for a large array (old_bytes of it in use): the new
 * block is hinted (tsa_hint_huge) before the old contents are copied into
 * it, where realloc would copy first and so touch every 4 KiB page of the
 * new block one fault at a time.  NULL when out of memory (p kept). */
void *tsa_realloc_huge(void *p, size_t old_bytes, size_t bytes);

/* Keep freed memory in the heap for reuse instead of returning it to the
 * kernel (process-wide; called by the loader).  glibc hands blocks above a
 * moving threshold (128 KiB at first) to mmap and gives small heap tails
 * back: the loader's per-rank sort keys and merge buffers, freed and asked
 * for again for every rank, then cost a page fault and the kernel's zeroing
 * of every page each time (a third of the report's CPU time on the 8-rank
 * job).  Blocks up to 32 MiB (glibc's limit) now come from the heap, and
 * up to keep_bytes of free memory at the heap's top stay there: the
 * in-memory loader keeps 256 MiB; the streaming report, whose memory is
 * meant to stay small, 32 MiB (measured on 2,048 ranks x 1,000 steps: peak
 * 367 MiB instead of 451, no more system time). */
void tsa_keep_freed_memory(size_t keep_bytes);

#endif

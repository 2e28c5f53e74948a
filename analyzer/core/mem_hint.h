/* Memory hints for the loader's large arrays. */
#ifndef TSA_MEM_HINT_H
#define TSA_MEM_HINT_H

#include <stddef.h>

/* Ask for transparent huge pages on the whole 2 MiB pages inside
 * [p, p + bytes) before they are first touched: a large array then takes
 * one page fault per 2 MiB instead of per 4 KiB.  Only a hint: does
 * nothing for small arrays, or where the kernel does not support it. */
void tsa_hint_huge(void *p, size_t bytes);

#endif

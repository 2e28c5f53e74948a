/* The one way the preload finds the function an interposed name would
 * have reached without tscope (NCCL, cuBLAS, CUPTI, libc).
 *
 * dlsym(RTLD_NEXT) sees only the global scope after this library.  Python
 * loads extension modules with RTLD_LOCAL, so a cuBLAS or NCCL pulled in
 * by one of them is not there, yet the extension's calls still bind to
 * tscope's exported wrapper first (the preload is global): without the
 * real function the wrapper could only fail the call.  So when RTLD_NEXT
 * finds nothing, every loaded object is asked, in load order, and the
 * first definition outside this library is taken.
 */
#ifndef TSC_REAL_SYM_H
#define TSC_REAL_SYM_H

#include <stdatomic.h>

/* The real definition of `name`, or NULL when no loaded object has one.
 * Slow (walks the loaded objects when RTLD_NEXT fails): cache the result;
 * errno is preserved. */
void *tsc_real_sym(const char *name);

/* A cached lookup: one acquire load once found.  A miss is not cached (the
 * library may be loaded later). */
typedef struct tsc_real_fn {
    const char *name;
    _Atomic(void *) fn;
} tsc_real_fn;

#define TSC_REAL_FN(sym) {.name = #sym}

static inline void *tsc_real_get(tsc_real_fn *r)
{
    void *f = atomic_load_explicit(&r->fn, memory_order_acquire);
    if (__builtin_expect(f != 0, 1))
        return f;
    f = tsc_real_sym(r->name);
    if (f)
        atomic_store_explicit(&r->fn, f, memory_order_release);
    return f;
}

#endif

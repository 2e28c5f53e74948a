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

/* The way every wrapper holds its real function: one static tsc_real_fn
 * per symbol, and tsc_real_get on each call, which costs one acquire load
 * once found.  A miss is looked up again on the next call (the library may
 * be loaded later), except for an optional symbol (a query the wrappers can
 * do without), whose first miss is final. */
typedef struct tsc_real_fn {
    const char *name;
    int optional;
    _Atomic(void *) fn;
    _Atomic int gave_up;
} tsc_real_fn;

#define TSC_REAL_FN(sym) {.name = #sym}
#define TSC_REAL_FN_OPTIONAL(sym) {.name = #sym, .optional = 1}

/* The lookup behind tsc_real_get's first call (errno preserved). */
void *tsc_real_get_slow(tsc_real_fn *r);

static inline void *tsc_real_get(tsc_real_fn *r)
{
    void *f = atomic_load_explicit(&r->fn, memory_order_acquire);
    if (__builtin_expect(f != 0, 1))
        return f;
    return tsc_real_get_slow(r);
}

#endif

/* See real_sym.h. */
#include "real_sym.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OBJECTS 1024

typedef struct object_list {
    char *names[MAX_OBJECTS];
    size_t n;
    uintptr_t self_base;
} object_list;

/* Names only: dlopen must not be called while the loader lists objects. */
static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    object_list *l = arg;
    if (l->n == MAX_OBJECTS || info->dlpi_name == NULL || info->dlpi_name[0] == '\0' ||
        (uintptr_t)info->dlpi_addr == l->self_base)
        return 0;
    char *copy = strdup(info->dlpi_name);
    if (copy)
        l->names[l->n++] = copy;
    return 0;
}

static uintptr_t base_of(const void *addr)
{
    Dl_info di;
    return dladdr(addr, &di) && di.dli_fbase ? (uintptr_t)di.dli_fbase : 0;
}

static void *search_loaded(const char *name, uintptr_t self)
{
    object_list *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    l->self_base = self;
    dl_iterate_phdr(collect, l);
    void *found = NULL;
    for (size_t i = 0; i < l->n && !found; i++) {
        void *h = dlopen(l->names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h == NULL)
            continue;
        void *p = dlsym(h, name);
        dlclose(h);
        /* A handle's lookup also searches the object's dependencies, and
         * never this library unless it is one of them: check anyway. */
        if (p != NULL && base_of(p) != self)
            found = p;
    }
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l);
    return found;
}

void *tsc_real_sym(const char *name)
{
    int saved = errno;
    uintptr_t self = base_of((const void *)tsc_real_sym);
    void *p = dlsym(RTLD_NEXT, name);
    if (p != NULL && base_of(p) == self)
        p = NULL;
    if (p == NULL)
        p = search_loaded(name, self);
    errno = saved;
    return p;
}

void *__attribute__((noinline)) tsc_real_get_slow(tsc_real_fn *r)
{
    if (atomic_load_explicit(&r->gave_up, memory_order_relaxed))
        return NULL;
    void *f = tsc_real_sym(r->name);
    if (f)
        atomic_store_explicit(&r->fn, f, memory_order_release);
    else if (r->optional)
        atomic_store(&r->gave_up, 1); /* do not search on every call */
    return f;
}

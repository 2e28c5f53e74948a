#include "first_launch.h"

#include <stdlib.h>
#include <string.h>

#include "load/corr_index.h"

int tsa_first_launches(const tsa_rank *r, tsa_ivset *out)
{
    tsa_ivset_clear(out);
    if (!r->n_kernels || !r->n_apis || !r->n_strings)
        return 0;
    uint8_t *seen = calloc(r->n_strings, 1);
    /* by the kernel that stands for its correlation id in the index: a
     * call that launched any kernel for the first time */
    uint8_t *first = calloc(r->n_kernels, 1);
    tsa_corr_index ix;
    memset(&ix, 0, sizeof ix);
    int rc = !seen || !first || tsa_corr_index_build(&ix, r->kernels, r->n_kernels) ? -1 : 0;
    for (size_t i = 0; i < r->n_kernels && !rc; i++) {   /* sorted by start */
        const tsa_kernel *k = &r->kernels[i];
        if (k->name >= r->n_strings || seen[k->name])
            continue;
        seen[k->name] = 1;
        int64_t at = k->correlation ? tsa_corr_index_find(&ix, k->correlation) : -1;
        if (at >= 0)
            first[at] = 1;
    }
    for (size_t i = 0; i < r->n_apis && !rc; i++) {
        uint32_t c = r->apis[i].correlation;
        int64_t at = c ? tsa_corr_index_find(&ix, c) : -1;
        if (at >= 0 && first[at])
            rc = tsa_ivset_push(out, r->apis[i].start_ns, r->apis[i].end_ns);
    }
    tsa_ivset_normalize(out);
    tsa_corr_index_free(&ix);
    free(seen);
    free(first);
    return rc ? -1 : 0;
}

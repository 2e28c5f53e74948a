#include "rank_digest.h"

#include <stdlib.h>

void tsa_rank_digest_free(tsa_rank_digest *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_kernels; i++)
        free(d->kernels[i].name);
    free(d->kernels);
    d->kernels = NULL;
    d->n_kernels = 0;
}

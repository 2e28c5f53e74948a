/* "Stuck on GPU": the host call returned (NCCL only enqueues the work) but
 * the kernel's completion record never came.  See hang.h for the rule. */
#include "hang.h"

long tsa_gpu_first_unfinished(const tsa_nccl_op *const *calls, size_t n)
{
    size_t linked_before = 0;
    long first_unlinked = -1;
    for (size_t i = 0; i < n; i++) {
        if (calls[i]->kernel >= 0) {
            /* A later kernel completed: the earlier gaps were linking
             * misses (or kernels CUPTI did not see), not a stuck stream. */
            linked_before++;
            first_unlinked = -1;
        } else if (first_unlinked < 0) {
            first_unlinked = (long)i;
        }
    }
    return first_unlinked >= 0 && linked_before > 0 ? first_unlinked : -1;
}

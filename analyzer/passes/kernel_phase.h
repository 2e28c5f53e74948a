/* Phase of a compute kernel, from what the records say about it.  One
 * function for the rank pass and the pipeline what-if: the what-if runs
 * before the rank pass has stored the phase on the kernel. */
#ifndef TSA_KERNEL_PHASE_H
#define TSA_KERNEL_PHASE_H

#include "model/model.h"

tsa_phase tsa_kernel_phase(const tsa_rank *r, const tsa_kernel *k);

#endif

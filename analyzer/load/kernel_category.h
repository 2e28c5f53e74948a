/* Kernel categories (tsa_kcat) from kernel names, assigned while a job is
 * built (tsa_job_finish, the Kineto importer). */
#ifndef TSA_KERNEL_CATEGORY_H
#define TSA_KERNEL_CATEGORY_H

#include "model/model.h"

/* Kernel category from a (mangled or demangled) kernel name. */
tsa_kcat tsa_kernel_category(const char *name);
const char *tsa_kcat_name(tsa_kcat c);

#endif

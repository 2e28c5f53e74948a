/* Display names the trace export and the diff print. */
#ifndef TSA_VIEWS_NAMES_H
#define TSA_VIEWS_NAMES_H

#include <stdint.h>

const char *tsa_views_nccl_op_name(unsigned op);    /* "AllReduce", "op?" when unknown */
const char *tsa_views_phase_name(unsigned phase);   /* "forward", ... */
const char *tsa_views_kcat_name(unsigned kcat);     /* "gemm", ... */
const char *tsa_views_copy_name(unsigned dir);      /* "Memcpy HtoD", ... */
const char *tsa_views_sync_name(unsigned kind);     /* "StreamSynchronize", ... */

#endif

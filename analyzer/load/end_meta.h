/* How a rank's process ended (tsa_rank.end), from its END chunk and
 * metadata (docs/format.md); the hang analysis reads it (hang/hang.h). */
#ifndef TSA_END_META_H
#define TSA_END_META_H

#include "model/model.h"

/* Loader hook: keeps the END/META keys that say how the process ended. */
void tsa_load_end_meta(tsa_rank_end *end, const char *key, const char *value);

#endif

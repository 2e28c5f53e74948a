/* Interned names of a rank: tsa_rank.strings, indexed by the records'
 * name fields. */
#ifndef TSA_RANK_STRINGS_H
#define TSA_RANK_STRINGS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Interned string index (stable for the rank's lifetime), UINT32_MAX on OOM. */
uint32_t tsa_rank_intern(tsa_rank *r, const char *s);
uint32_t tsa_rank_intern_n(tsa_rank *r, const char *s, size_t len);
const char *tsa_rank_string(const tsa_rank *r, uint32_t idx); /* "" if out of range */

/* Frees the strings and their index (tsa_rank_free_contents calls it). */
void tsa_rank_strings_free(tsa_rank *r);

#endif

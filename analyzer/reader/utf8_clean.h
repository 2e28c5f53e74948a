/* Text from a dump is bytes: these make it valid UTF-8 for JSON. */
#ifndef TSR_UTF8_CLEAN_H
#define TSR_UTF8_CLEAN_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Add a string from a dump as valid UTF-8 (invalid bytes become '?');
 * NULL adds a JSON null. */
cJSON *tsr_json_add_text(cJSON *o, const char *key, const char *s);

/* 1 when s is valid UTF-8; a malloc'd copy with invalid bytes as '?'. */
int tsr_utf8_valid(const char *s);
char *tsr_utf8_clean_dup(const char *s);
/* Bytes of the valid UTF-8 sequence at s (1 for ASCII and the NUL), 0
 * when invalid. */
size_t tsr_utf8_seq_len(const char *s);

#endif

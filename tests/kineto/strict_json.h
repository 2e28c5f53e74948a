/* A strict JSON check (RFC 8259), stricter than cJSON's parser: valid
 * UTF-8, no raw control characters in strings, only the defined escapes,
 * the number grammar (no NaN, Infinity, leading zeros or a bare "-"), one
 * value and nothing after it but whitespace.  What Python's json.loads or
 * jq would accept is what passes. */
#ifndef VIEWS_STRICT_JSON_H
#define VIEWS_STRICT_JSON_H

#include <stddef.h>

/* 0 when text[0..len) is one strict JSON document; else -1 with the byte
 * offset of the first fault in *at.  text[len] must be readable (a NUL). */
int strict_json_check(const char *text, size_t len, size_t *at);

#endif

/* JSON string escaping for everything the renderers write by hand
 * (trace export, batch rows): names come from kernels, threads and hosts
 * and may hold quotes, backslashes, control bytes or broken UTF-8. */
#ifndef TSA_JSON_ESCAPE_H
#define TSA_JSON_ESCAPE_H

#include <stddef.h>

/* Escape s[0..len) as the inside of a JSON string (no surrounding quotes):
 * '"' and '\\' are backslash-escaped, bytes below 0x20 become \n, \t, ... or
 * \u00XX, and every byte that is not part of valid UTF-8 becomes \ufffd, so
 * the output is always valid JSON text in valid UTF-8.  Writes at most cap-1
 * bytes and a NUL (when cap > 0); returns the full escaped length, like
 * snprintf, so a caller can size a buffer with a first call of cap 0. */
size_t tsa_json_escape(const char *s, size_t len, char *dst, size_t cap);

#endif

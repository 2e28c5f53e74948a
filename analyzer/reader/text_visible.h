/* One escaping function for every text output (issue 13 item 4): names,
 * hosts, run ids and paths come from untrusted dumps, traces and job
 * directories, and an ESC sequence or newline in them must not reach the
 * terminal raw.  Invalid UTF-8 bytes become '?'; C0 controls, DEL and the
 * C1 range (U+0080..U+009F, which some terminals obey as CSI) become
 * "\xNN" (or "\u00NN" for C1); everything else is kept. */
#ifndef TSR_TEXT_VISIBLE_H
#define TSR_TEXT_VISIBLE_H

#include <stddef.h>

/* 1 when s is already valid UTF-8 without control characters. */
int tsr_text_is_visible(const char *s);

/* A malloc'd visible copy of s (NULL: out of memory). */
char *tsr_text_visible_dup(const char *s);

/* For format arguments: s itself when it is visible, else a visible copy
 * in one of a few per-thread buffers that live until the eighth later
 * call on the same thread.  NULL gives "(null)"-free "". */
const char *tsr_vis(const char *s);

/* For format arguments, in place of "%.Ns": s cut to at most max_bytes
 * on a character boundary (a byte-count cut can split a UTF-8 sequence and
 * make the output invalid).  Same buffers as tsr_vis. */
const char *tsr_fit(const char *s, size_t max_bytes);

/* Replace *s by its visible form when it is not already; 0 or -1 (out of
 * memory, *s kept). */
int tsr_text_make_visible(char **s);

#endif

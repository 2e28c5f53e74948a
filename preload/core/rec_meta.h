/* The process's metadata store: key/value text pairs set at set-up (and by
 * the CUPTI capture at any time) and written in every META chunk. */
#ifndef TSC_REC_META_H
#define TSC_REC_META_H

#include <stddef.h>
#include <stdint.h>

#include "identity.h"

/* Keys the store holds: ~60 of the process's own plus 6 per visible GPU
 * (device.N.*), so an 8- or 16-GPU node fits; a key beyond is counted
 * (meta_keys_dropped), never silently lost. */
#define TSC_META_MAX 192
#define TSC_META_KEY_MAX 64
#define TSC_META_VAL_MAX 4096
/* The largest META payload: every stored pair plus the extras a chunk adds. */
#define TSC_META_PAYLOAD_MAX (TSC_META_MAX * (TSC_META_KEY_MAX + TSC_META_VAL_MAX) + 8192)

/* Set a metadata key for this process; written with the next META chunk
 * (values are copied; later values override earlier ones). */
void tsc_rec_meta(const char *key, const char *value);

void tsc_meta_set_int(const char *key, long long v);

/* The stored value of key into out (cut to cap): 0, or -1 when unset. */
int tsc_meta_get(const char *key, char *out, size_t cap);

/* Host, pids, identity, command line, start anchors, library version. */
void tsc_meta_gather(const char *host, const tsc_identity *id, uint64_t realtime_ns,
                     uint64_t monotonic_ns);

/* Encodes every stored pair plus the n extra pairs (later ones override)
 * as a META payload into buf.  from_signal: give up (return 0) if the
 * store is locked for more than a few ms.  Returns the payload length, 0
 * if none. */
size_t tsc_meta_encode_all(char *buf, size_t cap, const char *const *keys,
                           const char *const *vals, size_t n, int from_signal);

/* In a forked child: the lock may have been held by a parent thread. */
void tsc_meta_after_fork(void);

#endif

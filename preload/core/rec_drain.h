/* Draining: every thread's ring, its call in flight and the parts' own
 * records into the dump (or the other sink).  Drain lock held. */
#ifndef TSC_REC_DRAIN_H
#define TSC_REC_DRAIN_H

#include <stdint.h>

#include "rec_slot.h"

/* Everything waiting now.  check_names: re-read thread names (periodic
 * drains only).  from_signal: only async-signal-safe work. */
void tsc_rec_drain_all(int from_signal, int check_names);

/* One slot for thread t (kind ENTER or HANG of its call in flight f) as a
 * chunk of its stream, after its ring was drained, so that the call's
 * descriptor is already in the file. */
void tsc_rec_write_call_slot(tsc_thread *t, const tsc_inflight *f, uint8_t kind,
                             uint64_t end_ns, int from_signal);

#endif

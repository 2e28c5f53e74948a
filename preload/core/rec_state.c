/* See rec_state.h: the recorder's shared state, and the few answers that
 * read nothing else. */
#include "rec_state.h"

#include <unistd.h>

#include "recorder_internal.h"

_Atomic int tsc_rec_state_g;
_Atomic uint32_t tsc_rec_epoch_g = 1;
TSC_TLS struct tsc_thread *tsc_rec_tls_thr;
TSC_TLS uint32_t tsc_rec_tls_epoch;

tsc_recorder tsc_rec_g = {.dump = {.fd = -1}, .rank_id = -1, .exit_code = -1};

void tsc_sink_register(const tsc_sink *sink) { tsc_rec_g.sink = sink; }

int tsc_rec_owned_here(void) { return getpid() == tsc_rec_g.pid; }

const char *tsc_rec_host(void) { return tsc_rec_g.host; }

void tsc_rec_set_exit_code(int code) { atomic_store(&tsc_rec_g.exit_code, code); }

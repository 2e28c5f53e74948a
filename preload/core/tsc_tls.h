/* Thread-local storage for code inside the preload library.
 *
 * initial-exec: the library is loaded at start-up (LD_PRELOAD), so its few
 * bytes of TLS fit in the static TLS block and each access is one load off
 * the thread pointer, not a __tls_get_addr call on every hot-path use. */
#ifndef TSC_TLS_H
#define TSC_TLS_H

#define TSC_TLS __thread __attribute__((tls_model("initial-exec")))

#endif

/* Where the recorder's drained records go.  By default into the dump file
 * (dump_file.h), chunk by chunk; a second sink, when one is registered
 * and its set-up succeeds, takes them instead (black-box mode keeps them
 * in bounded memory and writes step summaries and capture windows,
 * blackbox/).  The core knows that sink only through this table;
 * process/parts.c registers it.  Every member but on, signal_pending and
 * term_pending runs on the writer thread (or at exit) with the drain lock
 * held. */
#ifndef TSC_SINK_H
#define TSC_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "dump_file.h"
#include "identity.h"
#include "tsc_format.h"

typedef struct tsc_sink {
    const char *name;
    /* At the recorder's set-up, when the configuration asks for this
     * sink: 0 when it takes the records, -1 (said once) when the dump
     * file keeps them. */
    int (*setup)(const tsc_config *cfg, const tsc_identity *id, const char *host, uint32_t pid);
    /* 1 while it takes the records. */
    int (*on)(void);
    /* Bytes of memory it holds for records. */
    size_t (*memory_bytes)(void);
    /* Drained slots of one thread (or the GPU stream). */
    void (*take)(uint32_t tid, const tsc_event *slots, size_t n);
    /* Once per flush period, with the dump for what it writes there. */
    void (*period)(tsc_dump *dump, uint64_t dropped_total);
    /* The hang watchdog found a call in flight for TSCOPE_HANG_S. */
    void (*hang)(uint64_t comm, uint64_t seq, const char *what);
    /* At exit, before the dump's last metadata and end marker. */
    void (*exit)(tsc_dump *dump);
    /* A socket the writer thread polls (-1: none), and its answer when
     * readable. */
    int (*poll_fd)(void);
    void (*serve)(void);
    /* Set from signal handlers (a flush asked for, the SIGTERM window);
     * the writer flushes at once when either is. */
    int (*signal_pending)(void);
    int (*term_pending)(void);
    /* After a drain while term_pending: write what SIGTERM asked for. */
    void (*term)(tsc_dump *dump, uint64_t dropped_total);
} tsc_sink;

/* At start-up (process/parts.c): the one sink besides the dump file. */
void tsc_sink_register(const tsc_sink *sink);

#endif

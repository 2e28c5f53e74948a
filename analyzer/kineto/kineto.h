/* torch.profiler (Kineto) Chrome-trace input: the statistics and bounds of
 * parsing one trace file (kineto_internal.h has the parser; the load room
 * builds a job from its events: load/kineto_load.h).
 *
 * The files are parsed as a stream (yajl over zlib), never as a document
 * tree: memory grows with the events kept in the model, not with the file.
 * docs/views.md lists which trace events map to which model records. */
#ifndef TSA_KINETO_H
#define TSA_KINETO_H

#include <stddef.h>
#include <stdint.h>

/* Statistics of one parse, for the benchmark and tests. */
typedef struct tsa_kineto_stats {
    uint64_t bytes;          /* JSON bytes parsed (after decompression) */
    uint64_t events;         /* trace events seen (all phases and categories) */
    uint64_t events_whole;   /* of them, read in one pass (kineto_event_pass.c) by
                              * the parse that finished */
} tsa_kineto_stats;

/* Bounds on one trace file, so a hostile or broken trace cannot take the
 * machine (issue 13 item 6): a gzip bomb, millions of events, or one
 * string token of hundreds of MB (yajl re-scans an unfinished token at
 * every read, so its cost grows with the square of its length).  A file
 * that passes a bound is cut there: the events before it are kept and the
 * job gets a problem naming the bound and the variable that raises it.
 * Defaults fit a 24 GB machine with a few workers (docs/views.md); each
 * can be set by the environment (TSCOPE_KINETO_MAX_BYTES, _MAX_EVENTS,
 * _MAX_TOKEN, plain integers, 0 = no bound) or by tsa_kineto_set_limits. */
typedef struct tsa_kineto_limits {
    uint64_t max_bytes;      /* decompressed JSON bytes per file */
    uint64_t max_events;     /* trace events per file */
    uint64_t max_token;      /* bytes of one JSON string or number */
} tsa_kineto_limits;

#define TSA_KINETO_DEFAULT_MAX_BYTES (UINT64_C(4) << 30)
#define TSA_KINETO_DEFAULT_MAX_EVENTS UINT64_C(10000000)
#define TSA_KINETO_DEFAULT_MAX_TOKEN (UINT64_C(16) << 20)

/* The bounds in force: those set, else the environment's, else defaults. */
void tsa_kineto_get_limits(tsa_kineto_limits *out);
/* Set them for this process (NULL: back to environment and defaults). */
void tsa_kineto_set_limits(const tsa_kineto_limits *l);

#endif

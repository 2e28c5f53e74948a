/* The dump reader: streams one tscope dump file (format/tsc_format.h)
 * through callbacks, checking everything it reads.
 *
 * Guarantees, so the layers above never have to re-check the bytes:
 *  - The file header is validated (magic, major version, header size, byte
 *    order, slot size, header CRC); a bad one refuses the whole file with a
 *    problem that names it (status TSR_UNREADABLE).
 *  - Chunks are delivered only when their header CRC and payload CRC match.
 *    A bad or short chunk is reported as "offset N: what" and the reader
 *    resynchronises on the next valid chunk header, so a corrupt middle is
 *    skipped and a truncated tail yields everything up to the last complete
 *    chunk.
 *  - Memory is bounded: one chunk payload at a time (at most
 *    TSC_CHUNK_MAX_PAYLOAD) plus the descriptor table and metadata, whose
 *    size is bounded by the file size.
 *  - Descriptors are validated when defined: a known type whose payload is
 *    shorter than its struct is refused (problem), so a non-NULL
 *    tsr_event.desc always decodes with the tsr_decode_* helper of its type.
 *  - Every event is delivered, also when its descriptor is undefined or of
 *    the wrong type: tsr_event.desc is then NULL and a problem was
 *    reported.  Consumers must treat desc == NULL as "skip or count".
 *
 * Problems are passed to on_problem (path, file offset, message) and
 * counted in tsr_stats.problems.  After TSR_MAX_PROBLEMS_REPORTED problems
 * in one file, further ones are only counted (one last message says how many
 * were not shown).  Nothing in this API aborts or exits on bad input.
 *
 * Thread-safety: a tsr_file is used by one thread; different files can be
 * read in parallel (no global state).
 *
 * Build: depend on tsa_reader_dep (analyzer/reader/meson.build), which
 * carries the include paths.  Related headers in this folder:
 * nccl_join.h (which NCCL op a kernel belongs to, via EXTCORR records) and
 * record_json.h (one record as JSON, as `tscope-report dump --json` prints).
 */
#ifndef TSR_DUMP_READER_H
#define TSR_DUMP_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tsc_format.h"

/* Status of a read (also the exit-status convention of tscope-report). */
#define TSR_OK 0          /* read cleanly */
#define TSR_PROBLEMS 1    /* problems reported, the rest was read */
#define TSR_UNREADABLE 2  /* cannot open, or the file header was refused */

#define TSR_MAX_PROBLEMS_REPORTED 100

typedef struct tsr_file tsr_file; /* opaque: one open dump */

/* A descriptor definition.  payload points to len bytes followed by a NUL
 * (so a TSC_DESC_STRING payload is a C string, though it may contain an
 * earlier NUL); it is NOT aligned: use the tsr_decode_* helpers.  Valid
 * until tsr_close (or the end of tsr_read_file). */
typedef struct tsr_desc {
    uint32_t id;            /* > 0, unique in the file */
    uint8_t type;           /* enum tsc_desc_type; unknown types are kept */
    uint16_t len;           /* payload bytes, <= TSC_DESC_MAX_PAYLOAD */
    uint32_t tid;           /* tid of the chunk that defined it */
    uint64_t offset;        /* file offset of its head slot */
    const uint8_t *payload;
} tsr_desc;

/* One event slot, with its context. */
typedef struct tsr_event {
    uint8_t kind;           /* enum tsc_event_kind */
    uint8_t flags;
    uint16_t aux;
    uint32_t desc_id;       /* raw tsc_event.desc (EXTCORR: CUPTI correlation id) */
    uint64_t start_ns, end_ns, val;
    uint32_t tid;           /* tid of the enclosing EVENTS chunk (host thread) */
    uint32_t chunk_seq;     /* seq of the enclosing chunk */
    uint64_t offset;        /* file offset of the slot */
    /* The descriptor, resolved and type-checked against the kind
     * (tsr_desc_type_for_kind); NULL when the kind takes none (EXTCORR,
     * CLOCK) or when it is undefined / of the wrong type (problem reported). */
    const tsr_desc *desc;
} tsr_event;

/* All callbacks are optional (NULL = not interested).  `end_chunk` is 1
 * for pairs of the END chunk, 0 for META.  Strings passed to callbacks are
 * valid only during the call, except descriptors (see tsr_desc). */
typedef struct tsr_callbacks {
    void (*on_meta)(void *ctx, const tsr_file *f, const char *key,
                    const char *value, int end_chunk);
    void (*on_desc)(void *ctx, const tsr_file *f, const tsr_desc *d);
    void (*on_event)(void *ctx, const tsr_file *f, const tsr_event *e);
    void (*on_problem)(void *ctx, const char *path, uint64_t offset,
                       const char *message);
    /* A STEPS chunk (black-box mode): n step summaries, copied aligned,
     * and beside each its extra from the STEP_EXTRA chunk before it (1.4):
     * x[i] belongs to s[i]; x[i].flags == 0 when the file has none for it
     * (nothing measured, or a 1.3 file). */
    void (*on_steps)(void *ctx, const tsr_file *f, const tsc_step_summary *s,
                     const tsc_step_extra *x, size_t n);
} tsr_callbacks;

typedef struct tsr_stats {
    uint64_t file_size;
    uint16_t version_major, version_minor;   /* from the file header */
    uint32_t pid;                            /* from the file header */
    uint64_t created_realtime_ns;            /* from the file header */
    uint64_t chunks;            /* valid chunks read, all types */
    uint64_t meta_chunks, event_chunks, end_chunks;
    uint64_t step_chunks, steps;  /* STEPS chunks and the summaries in them */
    uint64_t step_extra_chunks, step_extras; /* STEP_EXTRA chunks, their records */
    uint64_t step_extras_orphaned; /* of those, records whose step the next STEPS chunk
                                      does not have (it was lost): ignored */
    uint64_t unknown_chunks;    /* valid chunks of an unknown type (skipped) */
    uint64_t bad_chunks;        /* corrupt or truncated regions skipped */
    uint64_t bytes_skipped;     /* bytes not delivered because of them */
    uint64_t events;            /* event slots delivered (all kinds) */
    uint64_t events_by_kind[256];
    uint64_t unknown_events;    /* slots of an unknown kind (skipped, not delivered) */
    uint64_t descs;             /* descriptors defined */
    uint64_t descs_by_type[256];
    uint64_t bad_descs;         /* refused descriptor definitions */
    uint64_t undefined_refs;    /* events whose desc is undefined or mistyped */
    uint64_t problems;          /* every problem, reported or not */
    int clean_end;              /* 1 when an END chunk was read */
    uint64_t missing_chunks;    /* chunk seq numbers skipped over (lost to damage) */
} tsr_stats;

/* ------------------------------------------------------------- reading */

/* Open, read every chunk through the callbacks, close.  stats may be NULL.
 * Returns TSR_OK, TSR_PROBLEMS or TSR_UNREADABLE. */
int tsr_read_file(const char *path, const tsr_callbacks *cb, void *ctx,
                  tsr_stats *stats);

/* The same over a memory image of a dump (tests, fuzzing); `name` is used
 * as the path in messages.  The data must stay valid during the call. */
int tsr_read_buffer(const void *data, size_t len, const char *name,
                    const tsr_callbacks *cb, void *ctx, tsr_stats *stats);

/* Two-step form, for callers that want the descriptor table and metadata
 * after reading: tsr_open validates the header (on failure returns NULL,
 * having reported the problem, and sets *status if non-NULL);
 * tsr_read_all reads all chunks and returns TSR_OK or TSR_PROBLEMS;
 * tsr_close frees everything (descriptors included).  cb is copied. */
tsr_file *tsr_open(const char *path, const tsr_callbacks *cb, void *ctx,
                   int *status);
tsr_file *tsr_open_buffer(const void *data, size_t len, const char *name,
                          const tsr_callbacks *cb, void *ctx, int *status);
int tsr_read_all(tsr_file *f);
void tsr_close(tsr_file *f);

/* A dump still being written (`tscope-report live`): tsr_follow_open as
 * tsr_open; each tsr_follow_read then reads the complete chunks appended
 * since the last one.  A chunk not all there yet (the writer is writing
 * it) is left for the next read, not reported; damage is reported as by
 * tsr_read_all.  Close with tsr_close. */
tsr_file *tsr_follow_open(const char *path, const tsr_callbacks *cb, void *ctx, int *status);
int tsr_follow_read(tsr_file *f);

/* ------------------------------------------------- while / after reading */

const tsr_stats *tsr_file_stats(const tsr_file *f);

/* Descriptor with this id defined so far, or NULL. */
const tsr_desc *tsr_desc_lookup(const tsr_file *f, uint32_t id);

/* The text of TSC_DESC_STRING `id` (NUL-terminated), or NULL if undefined
 * or not a string. */
const char *tsr_string(const tsr_file *f, uint32_t id);

/* Latest value of a metadata key read so far (META and END chunks; later
 * chunks override earlier ones), or NULL. */
const char *tsr_meta(const tsr_file *f, const char *key);

/* The distinct metadata keys read so far, in first-seen order, with their
 * latest values: i from 0 to tsr_meta_count(f) - 1.  Returns 0, or -1 when
 * i is out of range. */
size_t tsr_meta_count(const tsr_file *f);
int tsr_meta_at(const tsr_file *f, size_t i, const char **key, const char **value);

/* ------------------------------------------------------ typed decoding */

/* Each returns 0 and fills *out when d is non-NULL, of the right type and
 * long enough (longer payloads from newer minors are accepted; the extra
 * bytes are ignored), else -1.  Safe on any tsr_desc. */
int tsr_decode_nccl_call(const tsr_desc *d, tsc_desc_nccl_call *out);
/* Also the kernel part of a TSC_DESC_KERNEL_LAUNCH descriptor. */
int tsr_decode_kernel(const tsr_desc *d, tsc_desc_kernel *out);
int tsr_decode_kernel_launch(const tsr_desc *d, tsc_desc_kernel_launch *out); /* 1.2 */
int tsr_decode_graph_node(const tsr_desc *d, tsc_desc_graph_node *out);       /* 1.2 */

/* The kernel and the call one TSC_EV_KERNEL_LAUNCH slot stands for. */
typedef struct tsr_launch_split {
    uint64_t kernel_start, kernel_end;  /* GPU */
    uint64_t call_start, call_end;      /* host, the launching call */
    uint32_t correlation;
} tsr_launch_split;
void tsr_split_kernel_launch(const tsr_event *e, tsr_launch_split *out);
int tsr_decode_copy(const tsr_desc *d, tsc_desc_copy *out);
int tsr_decode_sync(const tsr_desc *d, tsc_desc_sync *out);
int tsr_decode_api(const tsr_desc *d, tsc_desc_api *out);
int tsr_decode_gemm(const tsr_desc *d, tsc_desc_gemm *out);
int tsr_decode_mem(const tsr_desc *d, tsc_desc_mem *out);      /* v1.1 */
/* TSC_DESC_THREAD: *name points into the payload, name_len bytes, not
 * necessarily NUL-terminated (name_len <= payload left after the head). */
int tsr_decode_thread(const tsr_desc *d, uint32_t *tid, const char **name,
                      size_t *name_len);
/* TSC_DESC_TASK: *name points into the payload, out->name_len bytes, not
 * NUL-terminated (checked to fit the payload). */
int tsr_decode_task(const tsr_desc *d, tsc_desc_task *out, const char **name);
/* TSC_DESC_STRING: *s is NUL-terminated, *len its payload length. */
int tsr_decode_string(const tsr_desc *d, const char **s, size_t *len);

/* Descriptor type an event kind must refer to, 0 when it takes none. */
uint8_t tsr_desc_type_for_kind(uint8_t kind);

/* --------------------------------------------------------- name tables */

/* All return a static string, or NULL for a value they do not know. */
const char *tsr_event_kind_name(uint8_t kind);    /* "nccl", "kernel", "memcpy", ... */
const char *tsr_desc_type_name(uint8_t type);     /* "string", "nccl_call", ... */
const char *tsr_chunk_type_name(uint16_t type);   /* "META", "EVENTS", "END" */
const char *tsr_nccl_op_name(uint8_t op);         /* NCCL function without "nccl": "AllReduce", "AlltoAll", "CommSplit" */
const char *tsr_nccl_dtype_name(uint8_t dtype);   /* "float32", "bfloat16", ..., "none" */
const char *tsr_nccl_redop_name(uint8_t redop);   /* "sum", "prod", "max", "min", "avg", "custom" (>= 5), "none" */
const char *tsr_nccl_result_name(uint8_t result); /* "ncclSuccess", ... */
const char *tsr_copy_dir_name(uint8_t dir);       /* "H2D", "D2H", "D2D", "P2P", "H2H", "memset", "other" */
const char *tsr_sync_type_name(uint8_t type);     /* "event", "stream_wait_event", "stream", ... */
const char *tsr_api_domain_name(uint8_t domain);  /* "runtime", "driver" */
const char *tsr_mem_source_name(uint8_t source); /* "malloc", "async", "vmm", "pool", "other" */
const char *tsr_mem_pool_op_name(uint8_t op);    /* "usage", "created", "destroyed", "trimmed" */
const char *tsr_gemm_api_name(uint8_t api);       /* "cublasLtMatmul", "cublasGemmEx", ... */
const char *tsr_gpu_metric_name(uint16_t metric); /* "sm_clock_mhz", "power_mw", ... */
const char *tsr_net_counter_name(uint16_t counter); /* "port_xmit_wait", "symbol_error", ... */
const char *tsr_task_role_name(uint8_t role);     /* "main", "autograd", "nccl", "worker", ... */

/* The NCCL operation named in an NCCL kernel name, plain or mangled
 * ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "_Z...ncclKernel_AllGather_...",
 * "ncclSymkDevKernel_..."): "AllReduce", "AllGather", "ReduceScatter",
 * "Broadcast", "Reduce", "AlltoAll", "SendRecv", ... or NULL when the name
 * is not an NCCL kernel or names no operation ("ncclDevKernel_Generic"). */
const char *tsr_nccl_op_from_kernel_name(const char *name);

/* ------------------------------------------------------------ utilities */

/* "2026-11-21T20:06:19.123456789Z" (UTC).  Returns buf. cap >= 32. */
char *tsr_format_iso8601(uint64_t realtime_ns, char *buf, size_t cap);

/* The dump files (*.tsd, regular files, not recursive) of `dir`, as
 * "dir/name" paths sorted by name with digit runs compared as numbers
 * (tscope_r2_... before tscope_r10_...).  Returns 0 or -errno; *paths is
 * NULL-terminated and freed with tsr_free_paths. */
int tsr_list_dumps(const char *dir, char ***paths, size_t *n);

/* Expand command-line inputs: a directory adds its dumps (tsr_list_dumps),
 * anything else is taken as a file path.  Errors (unreadable directory,
 * a directory without dumps) are written to err and counted in *n_errors.
 * Returns 0, or -ENOMEM. */
int tsr_expand_inputs(char *const *args, size_t n_args, char ***paths,
                      size_t *n, FILE *err, size_t *n_errors);

void tsr_free_paths(char **paths, size_t n);

#endif

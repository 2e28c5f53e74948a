/* Between the Kineto stream parser (kineto_parse.c), which turns JSON into
 * one flat event at a time, and the builder (kineto_build.c), which turns
 * events into model records.  Not for other parts. */
#ifndef TSA_KINETO_INTERNAL_H
#define TSA_KINETO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kineto.h"

/* A text value with a growable buffer reused from event to event, so the
 * parser's memory is bounded by the longest name, not the number of events. */
typedef struct kineto_text {
    char *s;
    size_t len, cap;
} kineto_text;

/* CUDA devices whose [memory] totals are deduplicated (others all kept). */
#define KINETO_MEM_DEVICES 16

/* One trace event with the fields tscope uses; has_* say which were there.
 * The numbers and flags come first and the texts last, so that starting an
 * event clears only the numbers (one short memset) and the first byte of
 * each text: a whole-struct memset was ~72 instructions per event. */
typedef struct kineto_event {
    char ph;                    /* 'X', 'M', 'i', ..., 0 when absent */
    int64_t pid, tid;
    int64_t ts_ns, dur_ns;      /* microseconds in the file, exact to 1 ns */
    bool has_pid, has_tid, has_ts, has_dur;
    /* args */
    int64_t correlation, stream, device;
    int64_t in_nelems, out_nelems, group_size, seq, bytes;
    bool has_correlation, has_stream, has_device;
    bool has_in_nelems, has_out_nelems, has_group_size, has_seq, has_bytes;
    int64_t p2p_peer;           /* args "Dst Rank" (send) / "Src Rank" (recv): global rank */
    bool has_p2p_peer;
    /* [memory] instant events (profile_memory=True): the caching
     * allocator's totals after the operation. */
    int64_t mem_device_type, mem_device_id, mem_total_reserved;
    bool has_mem_device_type, has_mem_total_reserved;
    uint32_t grid[3], block[3];
    /* The first input tensor of a CPU op: its element count (product of
     * args["Input Dims"][0]) and args["Input type"][0]; older PyTorch
     * gives a collective's size only there, on its nccl:* op. */
    int64_t in_dims_elems;
    bool has_in_dims;
    /* Texts from here on: only bytes up to each one's NUL are meaningful. */
    char cat[32];
    char coll_name[48];         /* args["Collective name"] */
    char dtype[24];             /* args.dtype */
    char pg_name[96];           /* args["Process Group Name"] or pg_id */
    char in_type[24];
    kineto_text name;
    kineto_text arg_name;       /* args.name (thread_name / process_name) */
    kineto_text pg_ranks;       /* args["Process Group Ranks"] */
} kineto_event;

/* Top-level facts of a trace file. */
typedef struct kineto_header {
    int64_t rank, world_size;
    bool has_rank, has_world_size;
    int64_t base_ns;            /* baseTimeNanoseconds */
    bool has_base;
    char device_name[128];      /* first deviceProperties[].name */
    uint64_t device_mem_bytes;  /* its totalGlobalMem, 0 unknown */
    int cc_major, cc_minor;     /* its computeMajor/Minor (CUDA compute capability), 0 unknown */
} kineto_header;

/* Called once per completed trace event; returns 0, or -1 to stop (out of
 * memory). */
typedef int (*kineto_event_fn)(void *ctx, const kineto_event *ev);

/* Stream-parse one trace file (.json, or gzip with any name).  Returns 0, or
 * -1 with a message in err that names the byte offset of the problem (in the
 * decompressed JSON). */
int kineto_parse_file(const char *path, kineto_event_fn fn, void *ctx,
                      kineto_header *hdr, tsa_kineto_stats *stats,
                      char *err, size_t errlen);

/* Same over a memory buffer (tests). */
int kineto_parse_buffer(const char *buf, size_t len, kineto_event_fn fn, void *ctx,
                        kineto_header *hdr, tsa_kineto_stats *stats,
                        char *err, size_t errlen);

/* The JSON events a parse hands to kineto_parse.c's handlers; each returns
 * 1 to go on, 0 to stop.  A scalar is a number as text (num) or a string
 * (str), or neither for null, true and false.  A key can hold a NUL only
 * when it was escaped (\u0000). */
typedef struct kineto_json_sink {
    int (*scalar)(void *ctx, const char *num, size_t num_len, const unsigned char *str,
                  size_t str_len);
    int (*key)(void *ctx, const unsigned char *key, size_t len, int escaped);
    int (*open)(void *ctx, int is_map);
    int (*close)(void *ctx);
    /* Optional: a whole object at b[0] ('{'), of which b[0..avail) is in
     * the buffer, offered before its tokens; 1 when taken whole (*used:
     * its bytes; nothing of it is then handed token by token), 0 when not
     * (nothing was handed over), -1 to stop. */
    int (*object)(void *ctx, const unsigned char *b, size_t avail, size_t *used);
} kineto_json_sink;

/* One trace event object at b[0] ('{') read whole into *ev
 * (kineto_event_pass.c): its bytes, or 0 when it is not all in b[0..len)
 * or not in the usual form (then nothing is meant by *ev, and the object
 * is for the token path). */
size_t kineto_event_pass(kineto_event *ev, const unsigned char *b, size_t len);
/* Tests switch the one-pass read off (on: 1) to compare the two ways. */
void kineto_event_pass_set_enabled(int on);

/* Reads up to cap bytes of input: how many, 0 at its end, -1 on error. */
typedef long (*kineto_read_fn)(void *src, unsigned char *buf, size_t cap);

/* The strict fast reader (kineto_fastjson.c): 0 when the whole input was a
 * well-formed document, all handed to sink; 1 when it gave up (malformed
 * or unusual JSON, a bound, a read error, a handler that stopped): the
 * caller must parse the input again from its start.  *bytes: input read. */
int kineto_fast_json(kineto_read_fn read, void *src, const kineto_json_sink *sink, void *ctx,
                     uint64_t max_bytes, uint64_t max_token, uint64_t *bytes);
/* The same over the whole input at once, text[0..len), read in place (no
 * copy); the caller keeps it within max_bytes. */
int kineto_fast_json_text(const unsigned char *text, size_t len, const kineto_json_sink *sink,
                          void *ctx, uint64_t max_token, uint64_t *bytes);

/* A gzip trace decompressed whole (kineto_inflate.c, with libdeflate):
 * 1 with the text in w (kineto_text_free it), when the build has
 * libdeflate, the file is gzip, its text is at most KINETO_WHOLE_MAX and
 * max_bytes (0: no bound), and libdeflate decodes it exactly as zlib's
 * gzread would; else 0, and the caller streams the file through zlib. */
#define KINETO_WHOLE_MAX (UINT64_C(256) << 20)
typedef struct kineto_whole {
    unsigned char *data;
    size_t len, cap;
} kineto_whole;
int kineto_inflate_whole(const char *path, uint64_t max_bytes, kineto_whole *w);
void kineto_text_free(kineto_whole *w);
/* 1 when kineto_inflate_whole can take files; tests switch it off (on: 1)
 * to run the zlib path on a libdeflate build. */
int kineto_inflate_available(void);
void kineto_inflate_set_zlib_only(int on);

/* Largest |ts| or |dur| accepted, in ns (about 73 years).  With the base
 * time kept below twice this, ts + dur + base stays below 2^63. */
#define TSA_KINETO_MAX_NS (INT64_C(1) << 61)

/* Microseconds as JSON number text -> integer nanoseconds, exact for
 * decimal fractions (a double would lose precision on absolute epoch
 * microseconds).  Returns 0, or -1 when the text is not a number or is
 * beyond TSA_KINETO_MAX_NS. */
int kineto_us_to_ns(const char *text, size_t len, int64_t *ns);


/* Name tables (kineto_names.c). */
int kineto_nccl_op_from_collective(const char *collective);   /* 0 unknown */
int kineto_nccl_op_from_kernel(const char *kernel_name);      /* 0 unknown */
int kineto_is_nccl_kernel(const char *kernel_name);
/* Communication beyond nccl* names (kineto_comm_ops.c): the collective a
 * name's words say (0 none), and whether a CPU op is a communication
 * layer's (c10d::, symm_mem::, record_param_comms). */
int kineto_comm_op_from_words(const char *name);
int kineto_is_comm_cpu_op(const char *name);
int kineto_dtype_from_torch(const char *dtype, unsigned *elem_size); /* TSC_DT_* */


#endif

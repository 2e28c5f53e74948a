/* The one-pass event read (kineto_event_pass.c) gives the events the token
 * path gives.  Each test parses the same input twice, with the one-pass
 * read switched off and on, writes every field of every event handed over
 * as text, and compares: the events, the parse's answer, its message, its
 * counts and the trace's header.  Inputs: event objects written here for
 * each form the one-pass read takes or leaves (and which it is said to
 * take, read by it alone), the same documents under byte mutations, and
 * every trace of the real-trace corpus (../shared/corpus), where present. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kineto/kineto_internal.h"

#ifndef CORPUS_ROOT
#define CORPUS_ROOT "../shared/corpus"
#endif
#ifndef REPO_DATA
#define REPO_DATA "tests/data"
#endif

/* Text of everything a parse handed over; or, for a whole trace, only its
 * digest (FNV-1a over the text) and length, where the text would take
 * hundreds of MB. */
typedef struct log {
    char *s;
    size_t len, cap;
    int digest_only;
    uint64_t digest;
} log;

static void log_bytes(log *l, const char *b, size_t n)
{
    if (l->digest_only) {
        for (size_t i = 0; i < n; i++)
            l->digest = (l->digest ^ (unsigned char)b[i]) * 0x100000001b3u;
        l->len += n;
        return;
    }
    if (l->len + n + 1 > l->cap) {
        l->cap = (l->len + n + 1) * 2;
        l->s = realloc(l->s, l->cap);
        assert_non_null(l->s);
    }
    memcpy(l->s + l->len, b, n);
    l->len += n;
    l->s[l->len] = '\0';
}

static void log_add(log *l, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof line);
    log_bytes(l, line, (size_t)n);
}

/* A text as hex: every byte, NULs and all. */
static void log_text(log *l, const char *what, const kineto_text *t)
{
    static const char hex[] = "0123456789abcdef";
    char buf[256];
    log_add(l, " %s[%zu]=", what, t->len);
    size_t k = 0;
    for (size_t i = 0; i < t->len; i++) {
        buf[k++] = hex[(unsigned char)t->s[i] >> 4];
        buf[k++] = hex[(unsigned char)t->s[i] & 15];
        if (k == sizeof buf) {
            log_bytes(l, buf, k);
            k = 0;
        }
    }
    log_bytes(l, buf, k);
}

/* Every field of ev, has_* flags included. */
static void log_event(log *l, const kineto_event *ev)
{
    log_add(l, "ph=%d pid=%" PRId64 "/%d tid=%" PRId64 "/%d ts=%" PRId64 "/%d dur=%" PRId64 "/%d",
            ev->ph, ev->pid, ev->has_pid, ev->tid, ev->has_tid, ev->ts_ns, ev->has_ts,
            ev->dur_ns, ev->has_dur);
    log_add(l, " corr=%" PRId64 "/%d stream=%" PRId64 "/%d device=%" PRId64 "/%d",
            ev->correlation, ev->has_correlation, ev->stream, ev->has_stream, ev->device,
            ev->has_device);
    log_add(l, " in=%" PRId64 "/%d out=%" PRId64 "/%d group=%" PRId64 "/%d seq=%" PRId64
            "/%d bytes=%" PRId64 "/%d peer=%" PRId64 "/%d",
            ev->in_nelems, ev->has_in_nelems, ev->out_nelems, ev->has_out_nelems,
            ev->group_size, ev->has_group_size, ev->seq, ev->has_seq, ev->bytes, ev->has_bytes,
            ev->p2p_peer, ev->has_p2p_peer);
    log_add(l, " mem=%" PRId64 "/%d,%" PRId64 ",%" PRId64 "/%d grid=%u,%u,%u block=%u,%u,%u"
            " dims=%" PRId64 "/%d",
            ev->mem_device_type, ev->has_mem_device_type, ev->mem_device_id,
            ev->mem_total_reserved, ev->has_mem_total_reserved, ev->grid[0], ev->grid[1],
            ev->grid[2], ev->block[0], ev->block[1], ev->block[2], ev->in_dims_elems,
            ev->has_in_dims);
    log_add(l, " cat=%s coll=%s dtype=%s pg=%s in_type=%s", ev->cat, ev->coll_name, ev->dtype,
            ev->pg_name, ev->in_type);
    log_text(l, "name", &ev->name);
    log_text(l, "arg_name", &ev->arg_name);
    log_text(l, "pg_ranks", &ev->pg_ranks);
    log_add(l, "\n");
}

/* The same fields as log_event, folded into the digest without their
 * text (printf was two thirds of this test's time on the corpus). */
static void digest_event(log *l, const kineto_event *ev)
{
    const int64_t nums[] = {
        ev->ph, ev->pid, ev->has_pid, ev->tid, ev->has_tid, ev->ts_ns, ev->has_ts, ev->dur_ns,
        ev->has_dur, ev->correlation, ev->has_correlation, ev->stream, ev->has_stream,
        ev->device, ev->has_device, ev->in_nelems, ev->has_in_nelems, ev->out_nelems,
        ev->has_out_nelems, ev->group_size, ev->has_group_size, ev->seq, ev->has_seq, ev->bytes,
        ev->has_bytes, ev->p2p_peer, ev->has_p2p_peer, ev->mem_device_type,
        ev->has_mem_device_type, ev->mem_device_id, ev->mem_total_reserved,
        ev->has_mem_total_reserved, ev->grid[0], ev->grid[1], ev->grid[2], ev->block[0],
        ev->block[1], ev->block[2], ev->in_dims_elems, ev->has_in_dims,
    };
    log_bytes(l, (const char *)nums, sizeof nums);
    const char *small[] = {ev->cat, ev->coll_name, ev->dtype, ev->pg_name, ev->in_type};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        log_bytes(l, small[i], strlen(small[i]) + 1);
    const kineto_text *texts[] = {&ev->name, &ev->arg_name, &ev->pg_ranks};
    for (size_t i = 0; i < 3; i++) {
        log_bytes(l, (const char *)&texts[i]->len, sizeof texts[i]->len);
        if (texts[i]->len)
            log_bytes(l, texts[i]->s, texts[i]->len);
    }
}

static int on_event(void *ctx, const kineto_event *ev)
{
    log *l = ctx;
    if (l->digest_only)
        digest_event(l, ev);
    else
        log_event(l, ev);
    return 0;
}

/* One parse of doc (or of the file path when doc is NULL) into l; the
 * events read in one pass in *whole, all events added to *events. */
static void parse_into(log *l, const char *doc, size_t len, const char *path, int one_pass,
                       uint64_t *whole, uint64_t *events)
{
    kineto_header hdr;
    tsa_kineto_stats st;
    char err[512] = "";
    kineto_event_pass_set_enabled(one_pass);
    int rc = doc ? kineto_parse_buffer(doc, len, on_event, l, &hdr, &st, err, sizeof err)
                 : kineto_parse_file(path, on_event, l, &hdr, &st, err, sizeof err);
    kineto_event_pass_set_enabled(1);
    log_add(l, "rc=%d err=%s bytes=%" PRIu64 " events=%" PRIu64 "\n", rc, err, st.bytes,
            st.events);
    log_add(l, "rank=%" PRId64 "/%d world=%" PRId64 "/%d base=%" PRId64 "/%d dev=%s mem=%" PRIu64
            " cc=%d.%d\n",
            hdr.rank, hdr.has_rank, hdr.world_size, hdr.has_world_size, hdr.base_ns,
            hdr.has_base, hdr.device_name, hdr.device_mem_bytes, hdr.cc_major, hdr.cc_minor);
    if (whole)
        *whole = st.events_whole;
    if (events)
        *events += st.events;
}

/* The input parsed both ways gives the same text; the events read in one
 * pass by the second. */
static uint64_t same_both_ways(const char *doc, size_t len, const char *path,
                               uint64_t *events)
{
    /* a file's text is kept as a digest only */
    log off = {.digest_only = path != NULL}, on = {.digest_only = path != NULL};
    uint64_t whole_off, whole_on;
    parse_into(&off, doc, len, path, 0, &whole_off, NULL);
    parse_into(&on, doc, len, path, 1, &whole_on, events);
    assert_int_equal(whole_off, 0);
    if (off.len != on.len || off.digest != on.digest ||
        (!path && memcmp(off.s, on.s, off.len))) {
        print_error("%s: the one-pass read changed what was handed over\n--- off\n%.2000s\n"
                    "--- on\n%.2000s\n", path ? path : doc, off.s ? off.s : "(digest)",
                    on.s ? on.s : "(digest)");
        fail();
    }
    free(off.s);
    free(on.s);
    return whole_on;
}

/* Event objects in the forms a trace may hold; taken: the one-pass read
 * takes it (0: it is left to the token path). */
static const struct {
    const char *event;
    int taken;
} cases[] = {
    /* Kineto's usual forms */
    {"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n\", "
     "\"pid\": 0, \"tid\": 7, \"ts\": 30.250, \"dur\": 200.000, \"args\": {\"device\": 0, "
     "\"stream\": 7, \"correlation\": 2, \"grid\": [132, 2, 1], \"block\": [256, 1, 1]}}", 1},
    {"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":4000,\"tid\":100,"
     "\"ts\":1.000,\"dur\":2.000,\"args\":{\"External id\":5,\"Record function id\":0,"
     "\"Input Dims\":[[2,3],[3,4],[]],\"Input type\":[\"float\",\"float\",\"\"],"
     "\"Input Strides\":[[3,1],[4,1]],\"Concrete Inputs\":[\"\",\"\",\"1\"],\"Ev Idx\":3}}", 1},
    {"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", "
     "\"pid\": 0, \"tid\": 7, \"ts\": 100.500, \"dur\": 50.125, \"args\": {\"device\": 0, "
     "\"stream\": 9, \"correlation\": 77, \"Collective name\": \"allreduce\", "
     "\"In msg nelems\": 1048576, \"Out msg nelems\": 1048576, \"Group size\": 8, "
     "\"dtype\": \"Float\", \"Process Group Name\": \"0\", \"pg_id\": 3, "
     "\"Process Group Ranks\": \"[0, 1, 2, 3, 4, 5, 6, 7]\", \"Seq\": 12}}", 1},
    {"{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 4000, \"tid\": 100, "
     "\"args\": {\"name\": \"python\"}}", 1},
    {"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 1, "
     "\"tid\": 1, \"ts\": 5.5, \"s\": \"t\", \"args\": {\"Device Type\": 1, \"Device Id\": 0, "
     "\"Total Reserved\": 123456789, \"Bytes\": -4096, \"Addr\": 1234}}", 1},
    {"{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"nccl:send\", \"pid\": 0, "
     "\"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"Dst Rank\": 3, \"seq\": 4, "
     "\"bytes\": 65536}}", 1},
    /* numbers in every form: each converted as the token path converts it */
    {"{\"ts\": 1.5, \"dur\": 1.2345, \"pid\": -3, \"tid\": 1e3, \"args\": {\"correlation\": "
     "1.5, \"stream\": 12345678901234567890, \"device\": -0, \"bytes\": 0.5e1, "
     "\"Seq\": 123456789012345678}}", 1},
    {"{\"ts\": 1234567890123456.789, \"dur\": 123456789012345.789, \"pid\": 1E+2, "
     "\"tid\": 2e-1, \"args\": {\"correlation\": -7, \"stream\": 0.000}}", 1},
    {"{\"ts\": -0.000, \"dur\": -12.500, \"pid\": 1234567890123456789}", 1},
    /* strings where numbers are usual, and numbers where strings are */
    {"{\"ts\": \"12.000\", \"dur\": \"3\", \"pid\": \"7\", \"tid\": \"stream 7\", "
     "\"args\": {\"correlation\": \"x-5y\", \"stream\": \"none\"}, \"name\": 5, \"cat\": 1, "
     "\"ph\": 2}", 1},
    {"{\"args\": {\"pg_id\": 4, \"Process Group Name\": \"main\", \"name\": 3, "
     "\"dtype\": 1, \"Collective name\": 2, \"Process Group Ranks\": 9}}", 1},
    {"{\"args\": {\"Process Group Name\": \"main\", \"pg_id\": \"x\"}}", 1},
    /* null, true, false everywhere; empty containers; nesting skipped */
    {"{\"ph\": null, \"name\": true, \"ts\": false, \"args\": {\"grid\": [null, true, 5], "
     "\"block\": [], \"Input Dims\": [], \"stream\": null}, \"x\": [], \"y\": {}}", 1},
    {"{}", 1},
    {"{\"args\": {}}", 1},
    {"{\"args\": [1, 2], \"id2\": {\"local\": \"0x1\", \"deep\": [[[{\"a\": [null]}]]]}, "
     "\"ph\": \"f\", \"bp\": \"e\"}", 1},
    {"{\"args\": {\"Input Dims\": [[], [7]], \"grid\": [[1], 2, 3, 4], "
     "\"block\": [{\"a\": 1}, 9, 4294967295, 4294967296], \"nested\": {\"grid\": [5]}}}", 1},
    {"{\"args\": {\"Input Dims\": [[2, \"x\", null, [9], {\"a\": 2}, 3.7, 5], [8]], "
     "\"Input type\": [7, \"int\"]}}", 1},
    {"{\"args\": {\"Input Dims\": [[1099511627776, 2]], \"Input type\": [[\"a\"], \"b\"]}}", 1},
    {"{\"args\": {\"Input Dims\": [[1048576, 1048576, 1048576, 1048576]]}}", 1},
    /* keys that are read, inside containers where they are not */
    {"{\"args\": {\"args\": {\"correlation\": 5, \"name\": \"inner\"}, \"x\": "
     "{\"stream\": 3}, \"y\": [{\"device\": 1}]}, \"z\": {\"ts\": 5, \"args\": "
     "{\"correlation\": 6}}, \"w\": [{\"name\": \"n\"}]}", 1},
    /* the same key twice: the later value wins, as token by token */
    {"{\"name\": \"first\", \"name\": \"second\", \"args\": {\"correlation\": 1}, "
     "\"args\": {\"stream\": 2}, \"ts\": 1.000, \"ts\": \"bad\"}", 1},
    /* keys tscope does not read, one of 48 bytes and longer */
    {"{\"namex\": \"a\", \"Name\": \"b\", "
     "\"name_of_forty_eight_bytes_xxxxxxxxxxxxxxxxxxxxxx\": 1, "
     "\"name_of_more_than_forty_eight_bytes_xxxxxxxxxxxxxxxxxxxx\": 2, \"\": 3, \"ts\": 9}", 1},
    /* whitespace of every kind between tokens */
    {"{ \n\t\"ph\"\r\n :\t\"X\" ,\n  \"args\" : { \"grid\" : [ 1 ,2\t, 3 ] } \n}", 1},
    /* left to the token path: escapes, bytes JSON does not allow */
    {"{\"name\": \"a\\\"quoted\\\" name\", \"ts\": 1}", 0},
    {"{\"na\\u006de\": \"escaped key\", \"ts\": 1}", 0},
    {"{\"args\": {\"name\": \"tab\\there\"}}", 0},
    {"{\"name\": \"raw\tcontrol\"}", 0},
    {"{\"ts\": 01}", 0},
    {"{\"ts\": 1.}", 0},
    {"{\"ts\": .5}", 0},
    {"{\"ts\": 1e}", 0},
    {"{\"ts\": +1}", 0},
    {"{\"ts\": tru}", 0},
    {"{\"ts\": 1,}", 0},
    {"{\"ts\" 1}", 0},
    {"{\"ts\": 1 \"dur\": 2}", 0},
    {"{\"args\": {\"grid\": [1 2]}}", 0},
    {"{\"args\": {\"grid\": [1,]}}", 0},
    {"{\"x\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", 0},
};

static void test_each_form_same_both_ways(void **state)
{
    (void)state;
    char doc[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *ev = cases[i].event;
        int n = snprintf(doc, sizeof doc, "{\"traceEvents\": [%s, %s]}", ev, ev);
        assert_true(n > 0 && (size_t)n < sizeof doc);
        uint64_t whole = same_both_ways(doc, (size_t)n, NULL, NULL);
        /* taken or left, as said; a form left is read token by token */
        if (whole != (cases[i].taken ? 2u : 0u))
            print_error("case %zu (%s): %" PRIu64 " of 2 read in one pass\n", i, ev, whole);
        assert_int_equal(whole, cases[i].taken ? 2 : 0);
    }
}

/* The one-pass read alone (no token path behind it) gives the event the
 * token path gives, and takes exactly the object's bytes. */
static void test_one_pass_alone(void **state)
{
    (void)state;
    char doc[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!cases[i].taken)
            continue;
        const char *ev = cases[i].event;
        /* what follows the object in the buffer must not be read into it */
        int n = snprintf(doc, sizeof doc, "%s, {\"ts\": 5}]}", ev);
        kineto_event e;
        memset(&e, 0, sizeof e);
        size_t used = kineto_event_pass(&e, (const unsigned char *)doc, (size_t)n);
        assert_int_equal(used, strlen(ev));
        log alone = {0}, token = {0};
        log_event(&alone, &e);
        free(e.name.s);
        free(e.arg_name.s);
        free(e.pg_ranks.s);
        n = snprintf(doc, sizeof doc, "[%s]", ev);
        parse_into(&token, doc, (size_t)n, NULL, 0, NULL, NULL);
        /* the token path's log: the event's line, then its answer */
        assert_true(token.len >= alone.len);
        if (memcmp(alone.s, token.s, alone.len)) {
            print_error("case %zu: one pass %s token path %s\n", i, alone.s, token.s);
            fail();
        }
        free(alone.s);
        free(token.s);
    }
}

/* A document cut anywhere: an object that runs past the buffer is never
 * taken. */
static void test_object_cut_short(void **state)
{
    (void)state;
    const char *ev = cases[0].event;
    size_t len = strlen(ev);
    for (size_t cut = 0; cut < len; cut++) {
        kineto_event e;
        memset(&e, 0, sizeof e);
        assert_int_equal(kineto_event_pass(&e, (const unsigned char *)ev, cut), 0);
        free(e.name.s);
        free(e.arg_name.s);
        free(e.pg_ranks.s);
    }
}

/* One document of every form the one-pass read takes. */
static void forms_document(log *doc)
{
    log_add(doc, "{\"distributedInfo\": {\"rank\": 3, \"world_size\": 8}, \"traceEvents\": [");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (cases[i].taken)
            log_add(doc, "%s%s", i ? ", " : "", cases[i].event);
    log_add(doc, "], \"baseTimeNanoseconds\": 1700000000000000000}");
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Every form above in one document, changed a byte or two at a time:
 * whatever the change, both ways hand over the same. */
static void test_mutations_same_both_ways(void **state)
{
    (void)state;
    log base = {0};
    forms_document(&base);
    static const char bytes[] = "{}[],:\" \\0123456789.eE-+tfnul\n\tx";
    uint64_t seed = 0x9e3779b97f4a7c15u, whole = 0;
    char *doc = malloc(base.len + 8);
    assert_non_null(doc);
    for (int round = 0; round < 3000; round++) {
        memcpy(doc, base.s, base.len);
        size_t len = base.len;
        int edits = 1 + (int)(next_random(&seed) % 2);
        for (int k = 0; k < edits; k++) {
            size_t at = (size_t)(next_random(&seed) % len);
            char c = bytes[next_random(&seed) % (sizeof bytes - 1)];
            switch (next_random(&seed) % 3) {
            case 0: /* replace */
                doc[at] = c;
                break;
            case 1: /* delete */
                memmove(doc + at, doc + at + 1, len - at - 1);
                len--;
                break;
            default: /* insert */
                memmove(doc + at + 1, doc + at, len - at);
                doc[at] = c;
                len++;
                break;
            }
        }
        whole += same_both_ways(doc, len, NULL, NULL);
    }
    /* the mutations left most events whole and of the usual form */
    assert_true(whole > 0);
    free(doc);
    free(base.s);
}

/* Under each bound, cut where the token path cuts: a token bound inside
 * an event's longest string or number and between them, an event bound,
 * a byte bound inside an event. */
static void test_bounds_same_both_ways(void **state)
{
    (void)state;
    log doc = {0};
    forms_document(&doc);
    static const tsa_kineto_limits bounds[] = {
        {0, 0, 8}, {0, 0, 16}, {0, 0, 17}, {0, 0, 30}, {0, 0, 41}, {0, 0, 64}, {0, 0, 200},
        {0, 0, 1000}, {0, 3, 0}, {0, 1, 0}, {0, 20, 0}, {300, 0, 0}, {1500, 0, 0},
        {4000, 10, 50},
    };
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        tsa_kineto_set_limits(&bounds[i]);
        (void)same_both_ways(doc.s, doc.len, NULL, NULL);
    }
    tsa_kineto_set_limits(NULL);
    free(doc.s);
}

/* Every trace under dir: the corpus, where it sits next to the source
 * tree, and the traces of tests/data. */
static void walk(const char *dir, uint64_t *files, uint64_t *events, uint64_t *whole)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st))
            continue;
        if (S_ISDIR(st.st_mode)) {
            walk(path, files, events, whole);
            continue;
        }
        size_t n = strlen(de->d_name);
        int json = (n > 5 && !strcmp(de->d_name + n - 5, ".json")) ||
                   (n > 8 && !strcmp(de->d_name + n - 8, ".json.gz"));
        if (!json || strstr(de->d_name, "reference") || strstr(de->d_name, "expected"))
            continue;
        *whole += same_both_ways(NULL, 0, path, events);
        ++*files;
    }
    closedir(d);
}

static void test_corpus_same_both_ways(void **state)
{
    (void)state;
    uint64_t files = 0, events = 0, whole = 0;
    walk(REPO_DATA, &files, &events, &whole);
    uint64_t repo_files = files;
    walk(CORPUS_ROOT, &files, &events, &whole);
    if (files == repo_files) {
        print_message("corpus %s absent: skipped (it sits next to the source tree as "
                      "../shared/corpus)\n", CORPUS_ROOT);
        skip();
    }
    print_message("%" PRIu64 " traces, %" PRIu64 " events, %" PRIu64 " read in one pass\n",
                  files, events, whole);
    assert_true(whole > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_form_same_both_ways),
        cmocka_unit_test(test_one_pass_alone),
        cmocka_unit_test(test_object_cut_short),
        cmocka_unit_test(test_mutations_same_both_ways),
        cmocka_unit_test(test_bounds_same_both_ways),
        cmocka_unit_test(test_corpus_same_both_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

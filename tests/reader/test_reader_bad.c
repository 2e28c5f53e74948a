/* The reader on damaged input: refused headers, corrupt and truncated
 * chunks, bad slots and descriptors.  Each case checks the problem's exact
 * offset and that everything intact was still read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"
#include "sample_dump.h"

static capture *read_buf(const tb_buf *b, int expect_status, tsr_stats *st)
{
    capture *c = calloc(1, sizeof *c);
    assert_int_equal(tsr_read_buffer(b->data, b->len, "dump.tsd", &capture_callbacks, c, st),
                     expect_status);
    return c;
}

/* ------------------------------------------------------------ headers */

typedef struct header_case {
    const char *what;
    size_t field_off;   /* byte to patch, or SIZE_MAX for none */
    uint32_t value;     /* 32-bit little-endian value to write */
    size_t value_len;   /* 1, 2 or 4 */
    int fix_crc;        /* recompute the header CRC after patching */
    size_t truncate_to; /* 0: keep length */
    const char *expect; /* substring of the problem */
} header_case;

static void test_header_refusals(void **state)
{
    (void)state;
    static const header_case cases[] = {
        {"magic", 1, 'X', 1, 1, 0, "not a tscope dump"},
        {"major", offsetof(tsc_file_header, version_major), 2, 2, 1, 0,
         "format version 2."},
        {"byte order", offsetof(tsc_file_header, byte_order), 0x04030201u, 4, 1, 0,
         "opposite byte order"},
        {"bom garbage", offsetof(tsc_file_header, byte_order), 7, 4, 1, 0,
         "bad byte-order mark"},
        {"slot size", offsetof(tsc_file_header, slot_size), 64, 4, 1, 0, "slot size 64"},
        {"header small", offsetof(tsc_file_header, header_size), 32, 4, 1, 0,
         "bad header size 32"},
        {"header huge", offsetof(tsc_file_header, header_size), 100000, 4, 1, 0,
         "bad header size 100000"},
        {"crc", offsetof(tsc_file_header, pid), 99, 4, 0, 0, "bad header CRC"},
        {"short", SIZE_MAX, 0, 0, 0, 40, "file too short"},
        {"tiny", SIZE_MAX, 0, 0, 0, 3, "not a tscope dump"},
        {"empty", SIZE_MAX, 0, 0, 0, SIZE_MAX, "empty file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const header_case *hc = &cases[i];
        tb_buf b = {0};
        sample_layout lay;
        sample_dump(&b, &lay);
        if (hc->field_off != SIZE_MAX) {
            uint8_t v[4] = {(uint8_t)hc->value, (uint8_t)(hc->value >> 8),
                            (uint8_t)(hc->value >> 16), (uint8_t)(hc->value >> 24)};
            memcpy(b.data + hc->field_off, v, hc->value_len);
            if (hc->fix_crc)
                tb_fix_header_crc(&b);
        }
        if (hc->truncate_to)
            b.len = hc->truncate_to == SIZE_MAX ? 0 : hc->truncate_to;
        char *path = tb_write_temp(&b, "hdr");
        capture *c = calloc(1, sizeof *c);
        tsr_stats st;
        int status = tsr_read_file(path, &capture_callbacks, c, &st);
        if (status != TSR_UNREADABLE || c->n_prob != 1 || !strstr(c->prob_msg[0], hc->expect))
            fail_msg("case %s: status %d, %zu problems, '%s'", hc->what, status, c->n_prob,
                     c->n_prob ? c->prob_msg[0] : "");
        assert_string_equal(c->prob_path, path); /* the message names the file */
        assert_int_equal(c->prob_off[0], 0);
        assert_int_equal(c->n_ev, 0);
        unlink(path);
        free(path);
        free(c);
        tb_free(&b);
    }
}

static void test_newer_minor_and_bigger_header(void **state)
{
    (void)state;
    /* A header of a newer minor, 128 bytes: accepted, chunks start after it. */
    tb_buf b = {0};
    tb_header(&b, 1, 2);
    tsc_file_header h;
    memcpy(&h, b.data, sizeof h);
    h.version_minor = TSC_FORMAT_MINOR + 1;
    h.header_size = 128;
    memcpy(b.data, &h, sizeof h);
    tb_fix_header_crc(&b);
    uint8_t pad[64] = {0};
    tb_append(&b, pad, sizeof pad);
    tb_slots s = {0};
    tb_event(&s, TSC_EV_CLOCK, 0, 0, 0, 1, 2, 3);
    tb_event(&s, 0x7d, 0, 0, 0, 1, 2, 3); /* a kind from the future */
    tb_chunk(&b, TSC_CHUNK_EVENTS, 1, 0, s.s, 64);
    tb_chunk(&b, 42, 0, 1, "x", 1);     /* a chunk type from the future */
    tsr_stats st;
    capture *c = read_buf(&b, TSR_OK, &st);
    assert_int_equal(c->n_ev, 1);
    assert_int_equal(st.unknown_events, 1);
    assert_int_equal(st.unknown_chunks, 1);
    assert_int_equal(st.version_minor, TSC_FORMAT_MINOR + 1);
    free(c);
    tb_slots_free(&s);
    tb_free(&b);
}

/* ------------------------------------------------------------- chunks */

static void test_bad_payload_crc_middle(void **state)
{
    (void)state;
    tb_buf b = {0};
    sample_layout lay;
    sample_dump(&b, &lay);
    b.data[lay.chunk_off[1] + 32 + 100] ^= 0x10;
    tsr_stats st;
    capture *c = read_buf(&b, TSR_PROBLEMS, &st);
    assert_int_equal(c->n_prob, 1);
    assert_int_equal(c->prob_off[0], lay.chunk_off[1]);
    char expect[160];
    snprintf(expect, sizeof expect, "skipped %zu bytes to the next chunk at offset %zu",
             lay.chunk_end[1] - lay.chunk_off[1], lay.chunk_off[2]);
    assert_non_null(strstr(c->prob_msg[0], "bad payload CRC in EVENTS chunk seq 1"));
    assert_non_null(strstr(c->prob_msg[0], expect));
    /* the later chunks were read in full */
    assert_int_equal(c->n_ev, lay.chunk_events[2]);
    assert_int_equal(st.bad_chunks, 1);
    assert_int_equal(st.bytes_skipped, lay.chunk_end[1] - lay.chunk_off[1]);
    assert_int_equal(st.clean_end, 1);
    assert_int_equal(st.chunks, 3);
    assert_int_equal(st.missing_chunks, 1);
    free(c);
    tb_free(&b);
}

static void test_bad_chunk_header_and_garbage(void **state)
{
    (void)state;
    /* chunk header CRC broken (tid byte changed) */
    tb_buf b = {0};
    sample_layout lay;
    sample_dump(&b, &lay);
    b.data[lay.chunk_off[2] + offsetof(tsc_chunk_header, tid)] ^= 1;
    tsr_stats st;
    capture *c = read_buf(&b, TSR_PROBLEMS, &st);
    assert_int_equal(c->n_prob, 1);
    assert_int_equal(c->prob_off[0], lay.chunk_off[2]);
    assert_non_null(strstr(c->prob_msg[0], "bad chunk header CRC"));
    assert_int_equal(c->n_ev, lay.chunk_events[1]);
    assert_int_equal(st.clean_end, 1);
    free(c);
    tb_free(&b);

    /* 200 bytes of garbage (with false chunk magics) between two chunks */
    tb_buf g = {0};
    sample_dump(&b, &lay);
    tb_append(&g, b.data, lay.chunk_end[1]);
    uint8_t junk[200];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 37);
    uint32_t m = TSC_CHUNK_MAGIC;
    memcpy(junk + 10, &m, 4);
    memcpy(junk + 150, &m, 4);
    tb_append(&g, junk, sizeof junk);
    tb_append(&g, b.data + lay.chunk_end[1], b.len - lay.chunk_end[1]);
    c = read_buf(&g, TSR_PROBLEMS, &st);
    assert_int_equal(c->n_prob, 1);
    assert_int_equal(c->prob_off[0], lay.chunk_end[1]);
    assert_non_null(strstr(c->prob_msg[0], "skipped 200 bytes"));
    assert_int_equal(c->n_ev, SAMPLE_EVENTS);
    assert_int_equal(st.bytes_skipped, 200);
    free(c);
    tb_free(&b);
    tb_free(&g);
}

static void test_truncated_at_every_offset(void **state)
{
    (void)state;
    tb_buf b = {0};
    sample_layout lay;
    sample_dump(&b, &lay);
    for (size_t cut = 0; cut <= b.len; cut++) {
        size_t expect_ev = 0, complete = 0;
        int boundary = cut == sizeof(tsc_file_header);
        for (size_t k = 0; k < SAMPLE_CHUNKS; k++) {
            if (lay.chunk_end[k] <= cut) {
                expect_ev += lay.chunk_events[k];
                complete++;
            }
            boundary |= lay.chunk_end[k] == cut;
        }
        capture *c = calloc(1, sizeof *c);
        tsr_stats st;
        int status = tsr_read_buffer(b.data, cut, "cut", &capture_callbacks, c, &st);
        if (cut < sizeof(tsc_file_header)) {
            assert_int_equal(status, TSR_UNREADABLE);
        } else {
            if (status != (boundary ? TSR_OK : TSR_PROBLEMS) || c->n_ev != expect_ev ||
                st.chunks != complete || c->n_prob != (boundary ? 0u : 1u))
                fail_msg("cut %zu: status %d, %zu events (want %zu), %zu problems", cut, status,
                         c->n_ev, expect_ev, c->n_prob);
            assert_int_equal(st.clean_end, cut == b.len);
        }
        free(c);
    }
    tb_free(&b);
}

static void test_payload_len_lies(void **state)
{
    (void)state;
    static const uint32_t lies[] = {0xfffffff0u, TSC_CHUNK_MAX_PAYLOAD + 1, 1u << 20};
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        tb_buf b = {0};
        sample_layout lay;
        sample_dump(&b, &lay);
        tsc_chunk_header h;
        memcpy(&h, b.data + lay.chunk_off[1], sizeof h);
        h.payload_len = lies[i];
        memcpy(b.data + lay.chunk_off[1], &h, sizeof h);
        tb_fix_chunk_crc(&b, lay.chunk_off[1]); /* the header itself looks valid */
        tsr_stats st;
        capture *c = read_buf(&b, TSR_PROBLEMS, &st);
        assert_int_equal(c->n_prob, 1);
        assert_int_equal(c->prob_off[0], lay.chunk_off[1]);
        assert_non_null(strstr(c->prob_msg[0], lies[i] > TSC_CHUNK_MAX_PAYLOAD
                                                   ? "exceeds the limit"
                                                   : "truncated EVENTS chunk seq 1"));
        assert_int_equal(c->n_ev, lay.chunk_events[2]);
        assert_int_equal(st.clean_end, 1);
        free(c);
        tb_free(&b);
    }
}

static void test_payload_not_multiple_of_slot(void **state)
{
    (void)state;
    tb_buf b = {0};
    tb_slots s = {0};
    tb_header(&b, 1, 1);
    tb_event(&s, TSC_EV_CLOCK, 0, 0, 0, 1, 2, 3);
    tb_event(&s, TSC_EV_CLOCK, 0, 0, 0, 4, 5, 6);
    tb_event(&s, TSC_EV_CLOCK, 0, 0, 0, 7, 8, 9);
    size_t off = tb_chunk(&b, TSC_CHUNK_EVENTS, 1, 0, s.s, 2 * 32 + 5);
    tsr_stats st;
    capture *c = read_buf(&b, TSR_PROBLEMS, &st);
    assert_int_equal(c->n_ev, 2);
    assert_int_equal(c->ev[1].val, 6);
    assert_int_equal(c->n_prob, 1);
    assert_int_equal(c->prob_off[0], off + 32);
    assert_non_null(strstr(c->prob_msg[0], "not a multiple of 32"));
    free(c);
    tb_slots_free(&s);
    tb_free(&b);
}

static void test_unknown_chunk_and_kind(void **state)
{
    (void)state;
    tb_buf b = {0};
    tb_slots s = {0};
    tb_header(&b, 1, 1);
    tb_event(&s, 0x7e, 0, 0, 0, 1, 2, 3);
    tb_event(&s, TSC_EV_CLOCK, 0, 0, 0, 1, 2, 3);
    tb_event(&s, 0x7e, 0, 0, 0, 1, 2, 3);
    tb_event(&s, 0x00, 0, 0, 0, 0, 0, 0);
    size_t off = tb_chunk(&b, TSC_CHUNK_EVENTS, 1, 0, s.s, (uint32_t)(s.n * 32));
    size_t off2 = tb_chunk(&b, 77, 0, 1, "abc", 3);
    tb_chunk(&b, 77, 0, 2, "abc", 3);
    tsr_stats st;
    capture *c = read_buf(&b, TSR_PROBLEMS, &st);
    assert_int_equal(c->n_ev, 1);
    assert_int_equal(st.unknown_events, 3);
    assert_int_equal(st.unknown_chunks, 2);
    assert_int_equal(c->n_prob, 3); /* first of each kind, first unknown chunk */
    assert_int_equal(c->prob_off[0], off + 32);
    assert_non_null(strstr(c->prob_msg[0], "unknown event kind 0x7e"));
    assert_int_equal(c->prob_off[1], off + 32 + 3 * 32);
    assert_int_equal(c->prob_off[2], off2);
    assert_non_null(strstr(c->prob_msg[2], "unknown chunk type 77"));
    free(c);
    tb_slots_free(&s);
    tb_free(&b);
}

/* -------------------------------------------------- descriptors, refs */

static void test_undefined_and_mistyped_desc(void **state)
{
    (void)state;
    tb_buf b = {0};
    tb_slots s = {0};
    tb_header(&b, 1, 1);
    tb_event(&s, TSC_EV_KERNEL, 0, 0, 99, 1, 2, 3);   /* undefined */
    tb_string(&s, 5, "not a kernel");
    tb_event(&s, TSC_EV_KERNEL, 0, 0, 5, 1, 2, 3);    /* wrong type */
    tb_event(&s, TSC_EV_NCCL, 0, 0, 0, 1, 2, 3);      /* desc 0 */
    tb_event(&s, TSC_EV_EXTCORR, 0, 0, 12345, 0, 0, 1); /* desc field is no id */
    size_t off = tb_chunk(&b, TSC_CHUNK_EVENTS, 1, 0, s.s, (uint32_t)(s.n * 32));
    tsr_stats st;
    capture *c = read_buf(&b, TSR_PROBLEMS, &st);
    assert_int_equal(c->n_ev, 4);
    for (size_t i = 0; i < 4; i++)
        assert_null(c->ev[i].desc);
    assert_int_equal(st.undefined_refs, 3);
    assert_int_equal(c->n_prob, 3);
    assert_int_equal(c->prob_off[0], off + 32);
    assert_string_equal(c->prob_msg[0], "kernel event refers to undefined descriptor id 99");
    assert_int_equal(c->prob_off[1], off + 32 + 2 * 32);
    assert_string_equal(c->prob_msg[1],
                        "kernel event refers to descriptor id 5 of type string, not kernel");
    assert_int_equal(c->prob_off[2], off + 32 + 3 * 32);
    free(c);
    tb_slots_free(&s);
    tb_free(&b);
}

static void test_bad_descriptors(void **state)
{
    (void)state;
    tb_buf b = {0};
    tb_slots s = {0};
    tb_header(&b, 1, 1);
    tsc_desc_kernel k = {.name = 0};
    tb_desc(&s, TSC_DESC_KERNEL, 3, &k, 20);              /* too short */
    tb_event(&s, TSC_EV_KERNEL, 0, 0, 3, 1, 2, 3);        /* -> undefined */
    tb_desc(&s, TSC_DESC_STRING, 0, "zero", 4);           /* id 0 */
    tb_string(&s, 8, "first");
    tb_string(&s, 8, "first");                            /* identical: fine */
    tb_string(&s, 8, "other");                            /* different: refused */
    uint8_t th[12] = {0};
    tsc_desc_thread t = {.tid = 5, .name_len = 9};        /* 9 > 4 bytes present */
    memcpy(th, &t, sizeof t);
    tb_desc(&s, TSC_DESC_THREAD, 9, th, sizeof th);
    size_t big_at = s.n;
    static uint8_t zeros[TSC_DESC_MAX_PAYLOAD + 200];
    tb_desc(&s, TSC_DESC_STRING, 10, zeros, TSC_DESC_MAX_PAYLOAD + 100); /* over the limit */
    tb_event(&s, TSC_EV_CLOCK, 0, 0, 0, 1, 2, 77);        /* still found after it */
    size_t runs_at = s.n;
    tb_desc(&s, TSC_DESC_STRING, 11, zeros, 200);         /* will be cut short */
    size_t off = tb_chunk(&b, TSC_CHUNK_EVENTS, 1, 0, s.s, (uint32_t)((runs_at + 2) * 32));
    tsr_stats st;
    capture *c = read_buf(&b, TSR_PROBLEMS, &st);
    assert_int_equal(st.descs, 1);     /* only string 8 */
    assert_int_equal(st.bad_descs, 6);
    assert_int_equal(c->n_ev, 2);
    assert_null(c->ev[0].desc);
    assert_int_equal(c->ev[1].val, 77);
    static const char *const expect[] = {
        "descriptor id 3 (kernel): payload 20 bytes, expected at least 48",
        "kernel event refers to undefined descriptor id 3",
        "descriptor with id 0 ignored",
        "descriptor id 8 redefined differently",
        "descriptor id 9 (thread): name length 9 exceeds payload",
        "descriptor id 10: payload length 4196 exceeds the limit of 4096",
        "descriptor id 11: payload of 200 bytes runs past the end of the chunk",
    };
    assert_int_equal(c->n_prob, 7);
    for (size_t i = 0; i < 7; i++)
        if (!strstr(c->prob_msg[i], expect[i]))
            fail_msg("problem %zu: '%s', want '%s'", i, c->prob_msg[i], expect[i]);
    assert_int_equal(c->prob_off[5], off + 32 + big_at * 32);
    assert_int_equal(c->prob_off[6], off + 32 + runs_at * 32);
    free(c);
    tb_slots_free(&s);
    tb_free(&b);
}

static void test_meta_parsing(void **state)
{
    (void)state;
    static const struct {
        const char *payload;
        size_t len;
        size_t pairs, problems;
        const char *expect;
    } cases[] = {
        {"a\0" "1\0" "b\0" "2\0", 8, 2, 0, NULL},
        {"a\0" "1\0" "b", 5, 1, 1, "without a terminating NUL"},
        {"a\0" "1\0" "b\0" "2", 7, 1, 1, "'b' without a terminated value"},
        {"\0" "x\0" "c\0" "3\0", 7, 1, 1, "empty metadata key"},
        {"", 0, 0, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_buf b = {0};
        tb_header(&b, 1, 1);
        size_t off = tb_chunk(&b, TSC_CHUNK_META, 0, 0, cases[i].payload, (uint32_t)cases[i].len);
        capture *c = read_buf(&b, cases[i].problems ? TSR_PROBLEMS : TSR_OK, NULL);
        assert_int_equal(c->n_meta, cases[i].pairs);
        assert_int_equal(c->n_prob, cases[i].problems);
        if (cases[i].expect) {
            assert_non_null(strstr(c->prob_msg[0], cases[i].expect));
            assert_true(c->prob_off[0] >= off + 32);
        }
        free(c);
        tb_free(&b);
    }
}

/* Issue 13 item 9: gaps in the chunk sequence are problems, and a seq of
 * 0xffffffff neither wraps the count nor hides later gaps. */
static void test_chunk_seq_gaps(void **state)
{
    (void)state;
    char meta[64];
    const char *kv[] = {"k", "v", NULL};
    uint32_t len = (uint32_t)tb_meta(meta, sizeof meta, kv);
    tb_buf b = {0};
    tb_header(&b, 1, 1);
    tb_chunk(&b, TSC_CHUNK_META, 0, 0, meta, len);
    size_t jump = tb_chunk(&b, TSC_CHUNK_META, 0, 5, meta, len);
    size_t top = tb_chunk(&b, TSC_CHUNK_META, 0, 0xffffffffu, meta, len);
    size_t back = tb_chunk(&b, TSC_CHUNK_END, 0, 1, meta, len);
    tsr_stats st;
    capture *c = read_buf(&b, TSR_PROBLEMS, &st);
    assert_int_equal(st.missing_chunks, 4 + (0xffffffffull - 6));
    assert_int_equal(c->n_prob, 3);
    assert_int_equal(c->prob_off[0], jump);
    assert_string_equal(c->prob_msg[0], "chunk seq 5 where 1 was expected: 4 chunks missing");
    assert_int_equal(c->prob_off[1], top);
    assert_string_equal(c->prob_msg[1],
                        "chunk seq 4294967295 where 6 was expected: 4294967289 chunks missing");
    assert_int_equal(c->prob_off[2], back);
    assert_string_equal(c->prob_msg[2], "chunk seq 1 after seq 4294967295: repeated or out of order");
    free(c);
    tb_free(&b);
}

static void test_problem_cap(void **state)
{
    (void)state;
    tb_buf b = {0};
    tb_slots s = {0};
    tb_header(&b, 1, 1);
    for (int i = 0; i < 300; i++)
        tb_event(&s, TSC_EV_NVTX, 0, 0, 1000 + (uint32_t)i, 1, 2, 0);
    tb_chunk(&b, TSC_CHUNK_EVENTS, 1, 0, s.s, (uint32_t)(s.n * 32));
    tsr_stats st;
    capture *c = read_buf(&b, TSR_PROBLEMS, &st);
    assert_int_equal(st.problems, 300);
    assert_int_equal(c->n_ev, 300);
    assert_int_equal(c->n_prob, TSR_MAX_PROBLEMS_REPORTED + 1);
    assert_string_equal(c->prob_msg[TSR_MAX_PROBLEMS_REPORTED], "200 further problems not shown");
    free(c);
    tb_slots_free(&s);
    tb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_refusals),
        cmocka_unit_test(test_newer_minor_and_bigger_header),
        cmocka_unit_test(test_bad_payload_crc_middle),
        cmocka_unit_test(test_bad_chunk_header_and_garbage),
        cmocka_unit_test(test_truncated_at_every_offset),
        cmocka_unit_test(test_payload_len_lies),
        cmocka_unit_test(test_payload_not_multiple_of_slot),
        cmocka_unit_test(test_unknown_chunk_and_kind),
        cmocka_unit_test(test_undefined_and_mistyped_desc),
        cmocka_unit_test(test_bad_descriptors),
        cmocka_unit_test(test_meta_parsing),
        cmocka_unit_test(test_chunk_seq_gaps),
        cmocka_unit_test(test_problem_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The reader on valid input: every kind decoded with exact values,
 * multi-slot descriptors, metadata overrides, file and memory sources. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"
#include "dump_builder.h"
#include "reader/record_json.h"
#include "sample_dump.h"

static void test_round_trip(void **state)
{
    (void)state;
    tb_buf b = {0};
    sample_layout lay;
    sample_dump(&b, &lay);
    capture *c = calloc(1, sizeof *c);
    int st;
    tsr_file *f = tsr_open_buffer(b.data, b.len, "sample", &capture_callbacks, c, &st);
    assert_non_null(f);
    assert_int_equal(st, TSR_OK);
    assert_int_equal(tsr_read_all(f), TSR_OK);
    const tsr_stats *s = tsr_file_stats(f);
    assert_int_equal(s->problems, 0);
    assert_int_equal(c->n_prob, 0);
    assert_int_equal(s->version_major, 1);
    assert_int_equal(s->version_minor, TSC_FORMAT_MINOR);
    assert_int_equal(s->pid, 4242);
    assert_int_equal(s->created_realtime_ns, SAMPLE_T0 - 5);
    assert_int_equal(s->file_size, b.len);
    assert_int_equal(s->chunks, 4);
    assert_int_equal(s->meta_chunks, 1);
    assert_int_equal(s->event_chunks, 2);
    assert_int_equal(s->end_chunks, 1);
    assert_int_equal(s->clean_end, 1);
    assert_int_equal(s->missing_chunks, 0);
    assert_int_equal(s->events, SAMPLE_EVENTS);
    assert_int_equal(s->descs, SAMPLE_DESCS);
    assert_int_equal(s->events_by_kind[TSC_EV_KERNEL], 3);
    assert_int_equal(s->descs_by_type[TSC_DESC_STRING], 4);
    assert_int_equal(c->n_ev, SAMPLE_EVENTS);
    assert_int_equal(c->n_desc, SAMPLE_DESCS);
    assert_int_equal(c->n_meta, 18);
    assert_int_equal(c->n_end_meta, 2);

    static const uint8_t kinds[SAMPLE_EVENTS] = {
        TSC_EV_NCCL,   TSC_EV_GEMM,   TSC_EV_NVTX, TSC_EV_CLOCK, TSC_EV_KERNEL, TSC_EV_EXTCORR,
        TSC_EV_MEMCPY, TSC_EV_MEMSET, TSC_EV_SYNC, TSC_EV_API,   TSC_EV_KERNEL, TSC_EV_KERNEL};
    for (size_t i = 0; i < SAMPLE_EVENTS; i++) {
        assert_int_equal(c->ev[i].kind, kinds[i]);
        assert_int_equal(c->ev[i].tid, i < 4 ? 1001 : 2002);
        assert_int_equal(c->ev[i].chunk_seq, i < 4 ? 1 : 2);
        /* every kind that takes a descriptor got it resolved */
        if (tsr_desc_type_for_kind(kinds[i]))
            assert_non_null(c->ev[i].desc);
        else
            assert_null(c->ev[i].desc);
    }

    /* NCCL: the slot after thread (1) and nccl (3 slots) descriptors */
    const tsr_event *e = &c->ev[0];
    assert_int_equal(e->offset, lay.chunk_off[1] + 32 + 4 * 32);
    assert_int_equal(e->start_ns, SAMPLE_T0 + 100);
    assert_int_equal(e->end_ns, SAMPLE_T0 + 200);
    assert_int_equal(e->val, SAMPLE_NCCL_SEQ);
    assert_int_equal(e->flags, TSC_NCCL_F_IN_GROUP);
    assert_int_equal(e->aux, 1);
    tsc_desc_nccl_call nc;
    assert_int_equal(tsr_decode_nccl_call(e->desc, &nc), 0);
    assert_int_equal(nc.op, TSC_NCCL_ALLREDUCE);
    assert_int_equal(nc.dtype, TSC_DT_BFLOAT16);
    assert_int_equal(nc.count, 1048576);
    assert_int_equal(nc.bytes, 2097152);
    assert_int_equal(nc.comm_id, SAMPLE_COMM);
    assert_int_equal(nc.comm_rank, 3);
    assert_int_equal(nc.comm_size, 8);
    assert_int_equal(nc.peer, TSC_NO_PEER);
    assert_int_equal(nc.stream, 0x7f00);
    /* wrong decoders refuse */
    tsc_desc_kernel kd;
    assert_int_equal(tsr_decode_kernel(e->desc, &kd), -1);
    assert_int_equal(tsr_decode_nccl_call(NULL, &nc), -1);

    tsc_desc_gemm g;
    assert_int_equal(tsr_decode_gemm(c->ev[1].desc, &g), 0);
    assert_int_equal(g.m, 4096);
    assert_int_equal(g.k, 1024);
    assert_int_equal(g.batch, 2);
    assert_int_equal(g.flops, 2ull * 4096 * 4096 * 1024 * 2);
    assert_int_equal(g.api, TSC_GEMM_LT_MATMUL);
    assert_int_equal(c->ev[1].val, 5);

    const char *str;
    size_t len;
    assert_int_equal(tsr_decode_string(c->ev[2].desc, &str, &len), 0);
    assert_string_equal(str, "ProfilerStep#1");
    assert_int_equal(len, 14);
    assert_int_equal(c->ev[3].val, 123456789);

    assert_int_equal(tsr_decode_kernel(c->ev[4].desc, &kd), 0);
    assert_string_equal(tsr_string(f, kd.name), SAMPLE_NCCL_KERNEL);
    assert_int_equal(kd.stream, 13);
    assert_int_equal(kd.grid[0], 8);
    assert_int_equal(kd.block[0], 512);
    assert_int_equal(kd.shared_mem, 1024);
    assert_int_equal(c->ev[4].val, SAMPLE_CORR_NCCL);

    assert_int_equal(c->ev[5].desc_id, SAMPLE_CORR_NCCL);
    assert_int_equal(c->ev[5].val, TSC_EXTCORR_ID(SAMPLE_NCCL_DESC, SAMPLE_NCCL_SEQ));
    assert_int_equal(c->ev[5].flags, 2);

    tsc_desc_copy cp;
    assert_int_equal(tsr_decode_copy(c->ev[6].desc, &cp), 0);
    assert_int_equal(cp.dir, TSC_COPY_H2D);
    assert_int_equal(cp.pinned, 1);
    assert_int_equal(cp.bytes, 65536);
    assert_int_equal(tsr_decode_copy(c->ev[7].desc, &cp), 0);
    assert_int_equal(cp.dir, TSC_COPY_MEMSET);
    assert_int_equal(cp.bytes, 4096);

    tsc_desc_sync sy;
    assert_int_equal(tsr_decode_sync(c->ev[8].desc, &sy), 0);
    assert_int_equal(sy.type, TSC_SYNC_STREAM);
    assert_int_equal(sy.tid, 1001);

    tsc_desc_api api;
    assert_int_equal(tsr_decode_api(c->ev[9].desc, &api), 0);
    assert_int_equal(api.domain, TSC_API_DRIVER);
    assert_int_equal(api.cbid, 652);
    assert_string_equal(tsr_string(f, api.name), "cuLaunchKernelEx");
    assert_null(tsr_string(f, 11)); /* a kernel descriptor is not a string */
    assert_null(tsr_string(f, 999));

    uint32_t tid;
    const char *name;
    assert_int_equal(tsr_decode_thread(tsr_desc_lookup(f, 1), &tid, &name, &len), 0);
    assert_int_equal(tid, 1001);
    assert_int_equal(len, 6);
    assert_memory_equal(name, "python", 6);

    /* metadata: END overrides META */
    assert_string_equal(tsr_meta(f, TSC_META_RANK), "3");
    assert_string_equal(tsr_meta(f, TSC_META_DROPPED), "6");
    assert_string_equal(tsr_meta(f, TSC_META_END_REASON), "exit");
    assert_null(tsr_meta(f, "nope"));
    assert_int_equal(tsr_meta_count(f), 17);
    const char *k, *v;
    assert_int_equal(tsr_meta_at(f, 0, &k, &v), 0);
    assert_string_equal(k, TSC_META_HOST);
    assert_string_equal(v, "node1");
    assert_int_equal(tsr_meta_at(f, 17, &k, &v), -1);

    tsr_close(f);
    free(c);
    tb_free(&b);
}

/* A 1.0 dump (written before ENTER/HANG records existed) reads cleanly:
 * the same file with the header's minor set to 0. */
static void test_minor_0_dump_reads_cleanly(void **state)
{
    (void)state;
    tb_buf b = {0};
    sample_layout lay;
    sample_dump(&b, &lay);
    uint16_t zero = 0;
    memcpy(b.data + offsetof(tsc_file_header, version_minor), &zero, sizeof zero);
    tb_fix_header_crc(&b);
    capture *c = calloc(1, sizeof *c);
    tsr_stats st;
    assert_int_equal(tsr_read_buffer(b.data, b.len, "v1.0", &capture_callbacks, c, &st), TSR_OK);
    assert_int_equal(st.version_minor, 0);
    assert_int_equal(st.problems, 0);
    assert_int_equal(st.events, SAMPLE_EVENTS);
    free(c);
    free(b.data);
}

static void test_file_source_matches_memory(void **state)
{
    (void)state;
    tb_buf b = {0};
    sample_layout lay;
    sample_dump(&b, &lay);
    char *path = tb_write_temp(&b, "good");
    capture *c = calloc(1, sizeof *c);
    tsr_stats fs, ms;
    assert_int_equal(tsr_read_file(path, &capture_callbacks, c, &fs), TSR_OK);
    assert_int_equal(c->n_ev, SAMPLE_EVENTS);
    assert_int_equal(tsr_read_buffer(b.data, b.len, path, NULL, NULL, &ms), TSR_OK);
    assert_memory_equal(&fs, &ms, sizeof fs);
    /* a missing file is unreadable, with a message */
    memset(c, 0, sizeof *c);
    assert_int_equal(tsr_read_file("/nonexistent/x.tsd", &capture_callbacks, c, &fs),
                     TSR_UNREADABLE);
    assert_int_equal(c->n_prob, 1);
    assert_string_equal(c->prob_path, "/nonexistent/x.tsd");
    assert_non_null(strstr(c->prob_msg[0], "cannot open"));
    unlink(path);
    free(path);
    free(c);
    tb_free(&b);
}

/* Descriptor payload lengths around the slot boundaries. */
static void test_desc_slot_spans(void **state)
{
    (void)state;
    static const uint16_t lens[] = {0, 1, 23, 24, 25, 55, 56, 57, 88, 89, 1000, 4096};
    for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
        uint16_t n = lens[t];
        char *text = malloc(n + 1u);
        for (uint16_t i = 0; i < n; i++)
            text[i] = (char)('a' + i % 26);
        text[n] = 0;
        tb_buf b = {0};
        tb_slots s = {0};
        tb_header(&b, 1, 1);
        tb_desc(&s, TSC_DESC_STRING, 7, text, n);
        size_t desc_slots = s.n;
        tb_event(&s, TSC_EV_NVTX, 0, 0, 7, 10, 20, 0);
        size_t off = tb_chunk(&b, TSC_CHUNK_EVENTS, 5, 0, s.s, (uint32_t)(s.n * 32));
        assert_int_equal(desc_slots, n <= 24 ? 1 : 1 + (n - 24 + 31) / 32);
        capture *c = calloc(1, sizeof *c);
        tsr_file *f = tsr_open_buffer(b.data, b.len, "spans", &capture_callbacks, c, NULL);
        assert_non_null(f);
        assert_int_equal(tsr_read_all(f), TSR_OK);
        assert_int_equal(c->n_ev, 1);
        assert_int_equal(c->ev[0].offset, off + 32 + desc_slots * 32);
        assert_non_null(c->ev[0].desc);
        assert_int_equal(c->ev[0].desc->len, n);
        assert_int_equal(c->ev[0].desc->offset, off + 32);
        assert_string_equal((const char *)c->ev[0].desc->payload, text);
        tsr_close(f);
        free(c);
        free(text);
        tb_slots_free(&s);
        tb_free(&b);
    }
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(tsr_nccl_op_name(TSC_NCCL_ALLREDUCE), "AllReduce");
    assert_string_equal(tsr_nccl_op_name(TSC_NCCL_REDUCESCATTER), "ReduceScatter");
    assert_string_equal(tsr_nccl_op_name(TSC_NCCL_ALLTOALL), "AlltoAll");
    assert_string_equal(tsr_nccl_op_name(TSC_NCCL_COMM_INIT_RANK_CONFIG), "CommInitRankConfig");
    assert_null(tsr_nccl_op_name(0));
    assert_null(tsr_nccl_op_name(12));
    assert_null(tsr_nccl_op_name(200));
    assert_string_equal(tsr_nccl_dtype_name(TSC_DT_BFLOAT16), "bfloat16");
    assert_string_equal(tsr_nccl_dtype_name(TSC_DT_NONE), "none");
    assert_null(tsr_nccl_dtype_name(12));
    assert_string_equal(tsr_nccl_redop_name(4), "avg");
    assert_string_equal(tsr_nccl_redop_name(9), "custom");
    assert_string_equal(tsr_nccl_redop_name(TSC_REDOP_NONE), "none");
    assert_string_equal(tsr_nccl_result_name(7), "ncclInProgress");
    assert_null(tsr_nccl_result_name(8));
    assert_string_equal(tsr_copy_dir_name(TSC_COPY_D2H), "D2H");
    assert_null(tsr_copy_dir_name(7));
    assert_string_equal(tsr_sync_type_name(TSC_SYNC_STREAM_WAIT_EVENT), "stream_wait_event");
    assert_string_equal(tsr_api_domain_name(TSC_API_RUNTIME), "runtime");
    assert_null(tsr_api_domain_name(0));
    assert_string_equal(tsr_gemm_api_name(TSC_GEMM_STRIDED_BATCHED_EX),
                        "cublasGemmStridedBatchedEx");
    assert_string_equal(tsr_event_kind_name(TSC_EV_MEMSET), "memset");
    assert_null(tsr_event_kind_name(0));
    assert_string_equal(tsr_desc_type_name(TSC_DESC_NCCL_CALL), "nccl_call");
    assert_string_equal(tsr_chunk_type_name(TSC_CHUNK_END), "END");
    assert_null(tsr_chunk_type_name(9));

    static const struct {
        const char *name, *op;
    } kernels[] = {
        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "AllReduce"},
        {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE", "ReduceScatter"},
        {"ncclDevKernel_Reduce_Sum_f32_RING_LL", "Reduce"},
        {"ncclDevKernel_SendRecv", "SendRecv"},
        {"_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE", "SendRecv"},
        {SAMPLE_NCCL_KERNEL, "AllReduce"},
        {"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long)", "AllGather"},
        {"ncclSymkDevKernel_AllGather_LL", "AllGather"},
        {"ncclDevKernel_Broadcast_RING_LL", "Broadcast"},
        {"ncclDevKernel_Generic", NULL},
        {"ncclDevKernel_Reducex", NULL},
        {"ncclDevKernel_", NULL},
        {"sm90_xmma_gemm", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        const char *got = tsr_nccl_op_from_kernel_name(kernels[i].name);
        if (kernels[i].op)
            assert_string_equal(got, kernels[i].op);
        else
            assert_null(got);
    }
    assert_null(tsr_nccl_op_from_kernel_name(NULL));

    char buf[40];
    assert_string_equal(tsr_format_iso8601(1700000000123456789ull, buf, sizeof buf),
                        "2023-11-14T22:13:20.123456789Z");
    assert_string_equal(tsr_format_iso8601(0, buf, sizeof buf), "1970-01-01T00:00:00.000000000Z");
}

static void test_list_dumps(void **state)
{
    (void)state;
    char dir[] = "/tmp/tsr_list_XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const char *const files[] = {"tscope_r10_h_1_1.tsd", "tscope_r2_h_1_1.tsd",
                                        "tscope_r1_h_1_1.tsd", "notes.txt", "tsd"};
    char p[256];
    for (size_t i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/sub.tsd", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    char **paths;
    size_t n;
    assert_int_equal(tsr_list_dumps(dir, &paths, &n), 0);
    assert_int_equal(n, 3);
    assert_non_null(strstr(paths[0], "/tscope_r1_h"));
    assert_non_null(strstr(paths[1], "/tscope_r2_h"));
    assert_non_null(strstr(paths[2], "/tscope_r10_h"));
    assert_null(paths[3]);
    tsr_free_paths(paths, n);

    /* expand: a directory, a file, a directory without dumps */
    char *args[3] = {dir, p, "/tmp"};
    snprintf(p, sizeof p, "%s/notes.txt", dir);
    size_t errors = 0;
    FILE *err = fopen("/dev/null", "w");
    assert_int_equal(tsr_expand_inputs(args, 2, &paths, &n, err, &errors), 0);
    assert_int_equal(n, 4);
    assert_int_equal(errors, 0);
    assert_string_equal(paths[3], p);
    tsr_free_paths(paths, n);
    assert_int_equal(tsr_list_dumps("/nonexistent_dir", &paths, &n), -ENOENT);

    static const char *const rm[] = {"tscope_r10_h_1_1.tsd", "tscope_r2_h_1_1.tsd",
                                     "tscope_r1_h_1_1.tsd", "notes.txt", "tsd"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, rm[i]);
        unlink(p);
    }
    /* now empty of dumps: an error for expand */
    snprintf(p, sizeof p, "%s/sub.tsd", dir);
    rmdir(p);
    args[0] = dir;
    assert_int_equal(tsr_expand_inputs(args, 1, &paths, &n, err, &errors), 0);
    assert_int_equal(n, 0);
    assert_int_equal(errors, 1);
    tsr_free_paths(paths, n);
    fclose(err);
    rmdir(dir);
}

typedef struct follow_seen {
    uint64_t steps, last_step, problems;
} follow_seen;

static void follow_steps(void *ctx, const tsr_file *f, const tsc_step_summary *s,
                         const tsc_step_extra *x, size_t n)
{
    (void)f;
    follow_seen *c = ctx;
    for (size_t i = 0; i < n; i++, c->steps++) {
        c->last_step = s[i].step;
        assert_true(x[i].step == s[i].step && x[i].flags == 0); /* no extras in the file */
    }
}

static void follow_problem(void *ctx, const char *path, uint64_t off, const char *msg)
{
    (void)path;
    (void)off;
    (void)msg;
    ((follow_seen *)ctx)->problems++;
}

static void append_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* A summary file as a black-box rank appends to it: each follow read takes
 * the complete chunks appended since the last, a chunk cut short (being
 * written) waits without a problem, real damage is still reported; the
 * whole-file reader reports the cut chunk as a problem. */
static void test_follow_growing_file(void **state)
{
    (void)state;
    tb_buf b = {0};
    tb_header(&b, 1, 2);
    char meta[256];
    size_t ml = tb_meta(meta, sizeof meta, (const char *const[]){"mode", "blackbox", NULL});
    tb_chunk(&b, TSC_CHUNK_META, 0, 0, meta, (uint32_t)ml);
    tsc_step_summary st[5];
    for (int i = 0; i < 5; i++)
        st[i] = (tsc_step_summary){.step = (uint64_t)i, .end_ns = 10 * (uint64_t)i};
    tb_chunk(&b, TSC_CHUNK_STEPS, 0, 1, st, 2 * sizeof st[0]);
    size_t whole = b.len;
    tb_chunk(&b, TSC_CHUNK_STEPS, 0, 2, st + 2, 3 * sizeof st[0]);
    /* the file so far: the second STEPS chunk's header and half its payload */
    size_t cut = whole + sizeof(tsc_chunk_header) + 100;
    tb_buf first = {.data = b.data, .len = cut};
    char *path = tb_write_temp(&first, "follow");
    follow_seen seen = {0}, whole_seen = {0};
    tsr_callbacks cb = {.on_steps = follow_steps, .on_problem = follow_problem};
    assert_int_equal(tsr_read_file(path, &cb, &whole_seen, NULL), TSR_PROBLEMS);
    int status;
    tsr_file *f = tsr_follow_open(path, &cb, &seen, &status);
    assert_non_null(f);
    assert_int_equal(tsr_follow_read(f), TSR_OK);
    assert_int_equal(seen.steps, 2);
    assert_int_equal(seen.problems, 0);
    assert_int_equal(tsr_follow_read(f), TSR_OK); /* nothing new */
    assert_int_equal(seen.steps, 2);
    append_file(path, b.data + cut, b.len - cut);
    assert_int_equal(tsr_follow_read(f), TSR_OK);
    assert_int_equal(seen.steps, 5);
    assert_int_equal(seen.last_step, 4);
    assert_int_equal(seen.problems, 0);
    /* damage, then one more whole chunk: reported, the chunk still read */
    char junk[64];
    memset(junk, 0x5a, sizeof junk);
    append_file(path, junk, sizeof junk);
    tb_buf more = {0};
    tb_chunk(&more, TSC_CHUNK_STEPS, 0, 3, st, sizeof st[0]);
    append_file(path, more.data, more.len);
    assert_int_equal(tsr_follow_read(f), TSR_PROBLEMS);
    assert_int_equal(seen.steps, 6);
    assert_true(seen.problems >= 1);
    tsr_close(f);
    unlink(path);
    free(path);
    tb_free(&b);
    tb_free(&more);
}

static void test_utf8_clean(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "plain"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"a\xff" "b", "a?b"},
        {"\xc3", "?"},                 /* cut short */
        {"\xc0\xaf", "??"},           /* overlong '/' */
        {"\xed\xa0\x80", "???"},     /* surrogate */
        {"\xf4\x90\x80\x80", "????"}, /* above U+10FFFF */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *c = tsr_utf8_clean_dup(cases[i].in);
        assert_string_equal(c, cases[i].out);
        assert_int_equal(tsr_utf8_valid(cases[i].in), strcmp(cases[i].in, cases[i].out) == 0);
        free(c);
    }
    cJSON *o = cJSON_CreateObject();
    tsr_json_add_text(o, "k", "x\x80y");
    tsr_json_add_text(o, "n", NULL);
    char *s = cJSON_PrintUnformatted(o);
    assert_string_equal(s, "{\"k\":\"x?y\",\"n\":null}");
    free(s);
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_minor_0_dump_reads_cleanly),
        cmocka_unit_test(test_file_source_matches_memory),
        cmocka_unit_test(test_desc_slot_spans),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_list_dumps),
        cmocka_unit_test(test_utf8_clean),
        cmocka_unit_test(test_follow_growing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

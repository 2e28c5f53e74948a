/* tscope-report info and dump, run in-process on hand-written dumps, with
 * their stdout/stderr captured and parsed back. */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cmds/commands.h"
#include "sample_dump.h"

typedef struct run_result {
    int rc;
    char *out, *err;
} run_result;

static char *slurp_fd(int fd)
{
    off_t n = lseek(fd, 0, SEEK_END);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(pread(fd, s, (size_t)n, 0), n);
    s[n] = 0;
    close(fd);
    return s;
}

static int temp_fd(void)
{
    char tmpl[] = "/tmp/tsr_cmd_XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    unlink(tmpl);
    return fd;
}

/* Run a command with NULL-terminated arguments, capturing its output. */
static run_result run(int (*cmd)(int, char **), ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;
    va_start(ap, cmd);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 15;)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    int out = temp_fd(), err = temp_fd();
    int saved_out = dup(1), saved_err = dup(2);
    dup2(out, 1);
    dup2(err, 2);
    run_result r = {.rc = cmd(argc, argv)};
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    r.out = slurp_fd(out);
    r.err = slurp_fd(err);
    return r;
}

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

static char *write_sample(const char *tag, void (*damage)(tb_buf *, const sample_layout *))
{
    tb_buf b = {0};
    sample_layout lay;
    sample_dump(&b, &lay);
    if (damage)
        damage(&b, &lay);
    char *p = tb_write_temp(&b, tag);
    tb_free(&b);
    return p;
}

static size_t b_host_chunk_off(void)
{
    tb_buf b = {0};
    sample_layout lay;
    sample_dump(&b, &lay);
    tb_free(&b);
    return lay.chunk_off[1];
}

static void flip_host_chunk(tb_buf *b, const sample_layout *lay)
{
    b->data[lay->chunk_off[1] + 40] ^= 1;
}

/* The JSON line of the n-th record of `kind`, parsed (caller deletes). */
static cJSON *nth_line(const char *out, const char *kind, int n)
{
    const char *p = out;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        cJSON *o = cJSON_ParseWithLength(p, len);
        assert_non_null(o);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kind");
        if (cJSON_IsString(k) && !strcmp(k->valuestring, kind) && n-- == 0)
            return o;
        cJSON_Delete(o);
        p += len + (nl ? 1 : 0);
    }
    return NULL;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static void test_dump_json(void **state)
{
    (void)state;
    char *path = write_sample("dumpjson", NULL);
    run_result r = run(tsa_cmd_dump, "dump", "--json", path, NULL);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    /* one line per meta pair (18) and event (12) */
    size_t lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 18 + SAMPLE_EVENTS);
    /* 64-bit times are exact in the text, not rounded through double */
    assert_non_null(strstr(r.out, "\"start_ns\":1700000000000000100,\"end_ns\":1700000000000000200"));

    cJSON *o = nth_line(r.out, "nccl", 0);
    assert_non_null(o);
    assert_int_equal((int)jnum(o, "rank"), 3);
    assert_string_equal(jstr(o, "op"), "AllReduce");
    assert_string_equal(jstr(o, "dtype"), "bfloat16");
    assert_string_equal(jstr(o, "comm"), "0x1234abcd5678ef00");
    assert_string_equal(jstr(o, "redop"), "sum");
    assert_int_equal((int)jnum(o, "count"), 1048576);
    assert_int_equal((int)jnum(o, "bytes"), 2097152);
    assert_int_equal((int)jnum(o, "comm_rank"), 3);
    assert_int_equal((int)jnum(o, "comm_size"), 8);
    assert_int_equal((int)jnum(o, "seq"), SAMPLE_NCCL_SEQ);
    assert_int_equal((int)jnum(o, "peer"), -1);
    assert_int_equal((int)jnum(o, "group_depth"), 1);
    assert_int_equal((int)jnum(o, "tid"), 1001);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "in_group")));
    cJSON_Delete(o);

    /* the NCCL kernel is joined through EXTCORR; the GEMM kernels are not NCCL */
    o = nth_line(r.out, "kernel", 0);
    assert_string_equal(jstr(o, "name"), SAMPLE_NCCL_KERNEL);
    assert_string_equal(jstr(o, "nccl_op"), "AllReduce");
    assert_int_equal((int)jnum(o, "correlation"), SAMPLE_CORR_NCCL);
    assert_int_equal((int)jnum(o, "stream"), 13);
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(o, "grid");
    assert_int_equal(cJSON_GetArraySize(grid), 3);
    assert_int_equal(cJSON_GetArrayItem(grid, 0)->valueint, 8);
    cJSON_Delete(o);
    o = nth_line(r.out, "kernel", 1);
    assert_null(cJSON_GetObjectItemCaseSensitive(o, "nccl_op"));
    assert_int_equal((int)jnum(o, "graph_id"), 9);
    cJSON_Delete(o);

    o = nth_line(r.out, "memcpy", 0);
    assert_string_equal(jstr(o, "dir"), "H2D");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "pinned")));
    assert_int_equal((int)jnum(o, "bytes"), 65536);
    cJSON_Delete(o);
    o = nth_line(r.out, "memset", 0);
    assert_string_equal(jstr(o, "dir"), "memset");
    cJSON_Delete(o);
    o = nth_line(r.out, "sync", 0);
    assert_string_equal(jstr(o, "type"), "stream");
    assert_int_equal((int)jnum(o, "tid"), 1001); /* the caller's, not the CUPTI thread's */
    cJSON_Delete(o);
    o = nth_line(r.out, "api", 0);
    assert_string_equal(jstr(o, "name"), "cuLaunchKernelEx");
    assert_string_equal(jstr(o, "domain"), "driver");
    assert_int_equal((int)jnum(o, "cbid"), 652);
    assert_int_equal((int)jnum(o, "tid"), 1001);
    cJSON_Delete(o);
    o = nth_line(r.out, "gemm", 0);
    assert_int_equal((int)jnum(o, "m"), 4096);
    assert_string_equal(jstr(o, "api"), "cublasLtMatmul");
    assert_int_equal((int)jnum(o, "transa"), 1);
    cJSON_Delete(o);
    o = nth_line(r.out, "nvtx", 0);
    assert_string_equal(jstr(o, "name"), "ProfilerStep#1");
    cJSON_Delete(o);
    o = nth_line(r.out, "extcorr", 0);
    assert_string_equal(jstr(o, "external_id"), "0x8000000200000007");
    cJSON_Delete(o);
    o = nth_line(r.out, "clock", 0);
    assert_int_equal((int)jnum(o, "monotonic_ns"), 123456789);
    cJSON_Delete(o);
    o = nth_line(r.out, "meta", 17);
    assert_string_equal(jstr(o, "chunk"), "END");
    assert_string_equal(jstr(o, "key"), "dropped_events");
    cJSON_Delete(o);
    run_free(&r);

    /* plain text: one line per record, the same count */
    r = run(tsa_cmd_dump, "dump", path, NULL);
    assert_int_equal(r.rc, 0);
    lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 18 + SAMPLE_EVENTS);
    assert_non_null(strstr(r.out, "r3     nccl   "));
    assert_non_null(strstr(r.out, "op=AllReduce"));
    run_free(&r);

    /* options may follow the inputs */
    r = run(tsa_cmd_dump, "dump", path, "--json", NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.out[0] == '{');
    run_free(&r);

    /* descriptors on request */
    r = run(tsa_cmd_dump, "dump", "--json", "--descs", path, NULL);
    o = nth_line(r.out, "desc", 0);
    assert_string_equal(jstr(o, "type"), "thread");
    assert_string_equal(jstr(o, "name"), "python");
    cJSON_Delete(o);
    run_free(&r);
    unlink(path);
    free(path);
}

static void test_dump_kernel_name_fallback_and_errors(void **state)
{
    (void)state;
    /* A kernel with no EXTCORR: its NCCL op comes from the name. */
    tb_buf b = {0};
    tb_slots s = {0};
    tb_header(&b, 1, 1);
    tb_string(&s, 1, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL");
    tsc_desc_kernel k = {.name = 1};
    tb_desc(&s, TSC_DESC_KERNEL, 2, &k, sizeof k);
    tb_event(&s, TSC_EV_KERNEL, 0, 0, 2, 10, 20, 77);
    tb_event(&s, TSC_EV_KERNEL, 0, 0, 3, 10, 20, 78); /* undefined descriptor */
    size_t off = tb_chunk(&b, TSC_CHUNK_EVENTS, 9, 0, s.s, (uint32_t)(s.n * 32));
    char *path = tb_write_temp(&b, "fallback");
    run_result r = run(tsa_cmd_dump, "dump", "--json", path, NULL);
    assert_int_equal(r.rc, 1);
    cJSON *o = nth_line(r.out, "kernel", 0);
    assert_string_equal(jstr(o, "nccl_op"), "ReduceScatter");
    assert_int_equal((int)jnum(o, "rank"), -1);
    cJSON_Delete(o);
    o = nth_line(r.out, "kernel", 1);
    assert_string_equal(jstr(o, "error"), "undefined descriptor");
    assert_int_equal((int)jnum(o, "desc"), 3);
    cJSON_Delete(o);
    char expect[512];
    snprintf(expect, sizeof expect,
             "%s: offset %zu: kernel event refers to undefined descriptor id 3\n", path,
             off + 32 + 5 * 32); /* string 2 slots, kernel desc 2, event 1 */
    assert_string_equal(r.err, expect);
    run_free(&r);
    unlink(path);
    free(path);
    tb_slots_free(&s);
    tb_free(&b);

    r = run(tsa_cmd_dump, "dump", NULL);
    assert_int_equal(r.rc, 2);
    run_free(&r);
    r = run(tsa_cmd_dump, "dump", "--bogus", "x", NULL);
    assert_int_equal(r.rc, 2);
    run_free(&r);
    r = run(tsa_cmd_dump, "dump", "/nonexistent.tsd", NULL);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err, "/nonexistent.tsd: offset 0: cannot open"));
    run_free(&r);
}

static void test_info(void **state)
{
    (void)state;
    char dir[] = "/tmp/tsr_info_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *good = write_sample("info_good", NULL);
    char target[256];
    snprintf(target, sizeof target, "%s/tscope_r3_node1_4242_1.tsd", dir);
    assert_int_equal(rename(good, target), 0);

    run_result r = run(tsa_cmd_info, "info", dir, NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, target));
    assert_non_null(strstr(r.out, "node1, pid 4242"));
    assert_non_null(strstr(r.out, "3 (local 3) of world 8"));
    assert_non_null(strstr(r.out, "run-abc (source torchrun)"));
    assert_non_null(strstr(r.out, "2023-11-14T22:13:20.000000000Z"));
    assert_non_null(strstr(r.out, "1001 (python)"));
    assert_non_null(strstr(r.out, "cleanly (end_reason exit)"));
    assert_non_null(strstr(r.out, "problems     none"));
    run_free(&r);

    r = run(tsa_cmd_info, "info", "--json", target, NULL);
    assert_int_equal(r.rc, 0);
    cJSON *root = cJSON_Parse(r.out);
    assert_non_null(root);
    const cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "files"), 0);
    assert_string_equal(jstr(f0, "status"), "ok");
    char fmt[16];
    snprintf(fmt, sizeof fmt, "%d.%d", TSC_FORMAT_MAJOR, TSC_FORMAT_MINOR);
    assert_string_equal(jstr(f0, "format"), fmt);
    assert_int_equal((int)jnum(f0, "dropped_events"), 6);
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(f0, "events");
    assert_int_equal((int)jnum(ev, "total"), SAMPLE_EVENTS);
    assert_int_equal((int)jnum(ev, "kernel"), 3);
    assert_int_equal((int)jnum(ev, "nccl"), 1);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(f0, "meta");
    assert_string_equal(jstr(meta, "device_name"), "NVIDIA H100 80GB HBM3");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f0, "clean_end")));
    assert_int_equal((int)jnum(f0, "undefined_desc_refs"), 0);
    assert_non_null(strstr(r.out, "1700000000000000010")); /* first_ns, exact */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(f0, "threads")), 2);
    cJSON_Delete(root);
    run_free(&r);

    /* a damaged dump next to the good one: exit 1, problem with offset */
    char *bad = write_sample("info_bad", flip_host_chunk);
    r = run(tsa_cmd_info, "info", target, bad, NULL);
    assert_int_equal(r.rc, 1);
    char expect[512];
    snprintf(expect, sizeof expect, "%s: offset %zu: bad payload CRC in EVENTS chunk seq 1", bad,
             b_host_chunk_off());
    assert_non_null(strstr(r.out, expect));
    run_free(&r);

    /* nothing readable: exit 2 */
    FILE *junk = fopen(bad, "w");
    fputs("hello", junk);
    fclose(junk);
    r = run(tsa_cmd_info, "info", bad, NULL);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.out, "not a tscope dump"));
    run_free(&r);
    r = run(tsa_cmd_info, "info", "/tmp/tsr_no_such_dir_x/", NULL);
    assert_int_equal(r.rc, 2);
    run_free(&r);
    r = run(tsa_cmd_info, "info", NULL);
    assert_int_equal(r.rc, 2);
    run_free(&r);
    unlink(bad);
    free(bad);
    unlink(target);
    rmdir(dir);
    /* an empty directory: no dumps, exit 2 with a message */
    assert_non_null(mkdtemp(strcpy(dir, "/tmp/tsr_info_XXXXXX")));
    r = run(tsa_cmd_info, "info", dir, NULL);
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err, "no dump files"));
    run_free(&r);
    rmdir(dir);
    free(good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_json),
        cmocka_unit_test(test_dump_kernel_name_fallback_and_errors),
        cmocka_unit_test(test_info),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

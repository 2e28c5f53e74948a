/* The dump writer: what it puts on disk must be exactly what tsc_format.h
 * promises, because the reader and the analyzer trust nothing else. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "crc32c.h"
#include "dump_file.h"

static char tmpdir[256];

static int make_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tsc_dumpfile_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static unsigned char buf[1 << 20];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void test_crc32c_known_value(void **state)
{
    (void)state;
    /* The standard CRC-32C check value of "123456789". */
    assert_int_equal(tsc_crc32c(0, "123456789", 9), 0xe3069283u);
    /* Chaining gives the same result as one pass. */
    uint32_t c = tsc_crc32c(0, "1234", 4);
    assert_int_equal(tsc_crc32c(c, "56789", 5), 0xe3069283u);
}

static void test_header_and_chunks(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/a.tsd", tmpdir);
    tsc_dump d;
    assert_int_equal(tsc_dump_open_path(&d, path, 4242, 1700000000123456789ull), 0);
    assert_true(d.fd >= 0);
    assert_int_equal(d.bytes_written, 64);

    const char payload[] = "k\0v\0";
    assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_META, 0, payload, 4), 0);
    tsc_event slots[2];
    assert_int_equal(tsc_encode_event(slots, 2, TSC_EV_NCCL, 1, 0x0102, 7, 10, 20, 3), 1);
    assert_int_equal(tsc_encode_event(slots + 1, 1, TSC_EV_CLOCK, 0, 0, 0, 1, 2, 3), 1);
    assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_EVENTS, 99, slots, 64), 0);
    assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_END, 0, NULL, 0), 0);
    assert_int_equal(d.next_seq, 3);
    assert_int_equal(d.bytes_written, 64 + 32 + 4 + 32 + 64 + 32);
    assert_int_equal(d.bytes_lost, 0);
    tsc_dump_close(&d);
    assert_int_equal(d.fd, -1);

    size_t len;
    unsigned char *b = slurp(path, &len);
    assert_int_equal(len, 64 + 32 + 4 + 32 + 64 + 32);
    tsc_file_header h;
    memcpy(&h, b, sizeof h);
    assert_memory_equal(h.magic, TSC_FILE_MAGIC, 8);
    assert_int_equal(h.version_major, TSC_FORMAT_MAJOR);
    assert_int_equal(h.version_minor, TSC_FORMAT_MINOR);
    assert_int_equal(h.header_size, 64);
    assert_int_equal(h.byte_order, TSC_BYTE_ORDER_MARK);
    assert_int_equal(h.slot_size, 32);
    assert_int_equal(h.pid, 4242);
    assert_true(h.created_realtime_ns == 1700000000123456789ull);
    /* tsc_format.h says "the 60 bytes before it" but the field sits at
     * offset 36: the CRC covers the 36 bytes before it (reserved bytes are
     * zero and not covered), the same rule as the chunk header. */
    assert_int_equal(offsetof(tsc_file_header, header_crc), 36);
    assert_int_equal(h.header_crc, tsc_crc32c(0, b, 36));

    size_t off = 64;
    const uint16_t types[3] = {TSC_CHUNK_META, TSC_CHUNK_EVENTS, TSC_CHUNK_END};
    const uint32_t lens[3] = {4, 64, 0};
    const uint32_t tids[3] = {0, 99, 0};
    for (int i = 0; i < 3; i++) {
        tsc_chunk_header ch;
        memcpy(&ch, b + off, sizeof ch);
        assert_int_equal(ch.magic, TSC_CHUNK_MAGIC);
        assert_int_equal(ch.type, types[i]);
        assert_int_equal(ch.payload_len, lens[i]);
        assert_int_equal(ch.tid, tids[i]);
        assert_int_equal(ch.seq, (uint32_t)i);
        assert_int_equal(ch.flags, 0);
        assert_int_equal(ch.reserved, 0);
        assert_int_equal(ch.header_crc, tsc_crc32c(0, b + off, 28));
        assert_int_equal(ch.payload_crc, tsc_crc32c(0, b + off + 32, lens[i]));
        off += 32 + lens[i];
    }
    tsc_event e;
    memcpy(&e, b + 64 + 32 + 4 + 32, sizeof e);
    assert_int_equal(e.kind, TSC_EV_NCCL);
    assert_int_equal(e.flags, 1);
    assert_int_equal(e.aux, 0x0102);
    assert_int_equal(e.desc, 7);
    assert_int_equal(e.start_ns, 10);
    assert_int_equal(e.end_ns, 20);
    assert_int_equal(e.val, 3);
}

static void test_bad_chunks_are_counted_not_written(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/bad.tsd", tmpdir);
    tsc_dump d;
    assert_int_equal(tsc_dump_open_path(&d, path, 1, 1), 0);
    char junk[40] = {0};
    /* EVENTS payloads must be whole slots. */
    assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_EVENTS, 1, junk, 40), -EINVAL);
    assert_int_equal(d.bytes_lost, 32 + 40);
    assert_int_equal(d.next_seq, 0);
    assert_int_equal(d.bytes_written, 64);
    tsc_dump_close(&d);
    /* A closed dump counts what it could not write. */
    assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_META, 0, junk, 8), -EBADF);
    assert_int_equal(d.bytes_lost, 32 + 40 + 32 + 8);
}

static void test_full_disk_counts_lost_bytes(void **state)
{
    (void)state;
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0)
        skip();
    tsc_dump d;
    memset(&d, 0, sizeof d);
    d.fd = fd;
    char payload[64] = {0};
    assert_int_equal(tsc_dump_write_chunk(&d, TSC_CHUNK_EVENTS, 5, payload, 64), -ENOSPC);
    assert_int_equal(d.last_errno, ENOSPC);
    assert_int_equal(d.bytes_lost, 96);
    assert_int_equal(d.next_seq, 0);
    tsc_dump_close(&d);
}

static void test_open_path_never_replaces(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/exists.tsd", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("precious", f);
    fclose(f);
    tsc_dump d;
    assert_int_equal(tsc_dump_open_path(&d, path, 1, 1), -EEXIST);
    assert_int_equal(d.fd, -1);
    size_t len;
    unsigned char *b = slurp(path, &len);
    assert_int_equal(len, 8);
    assert_memory_equal(b, "precious", 8);
}

static void test_naming_and_suffix_on_collision(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/out", tmpdir); /* created by open */
    uint64_t t = 1700000001999999999ull;         /* 1700000001 s */
    tsc_dump a, b, c;
    assert_int_equal(tsc_dump_open(&a, dir, 3, "node/7 x", 77, t), 0);
    assert_int_equal(tsc_dump_open(&b, dir, 3, "node/7 x", 77, t), 0);
    assert_int_equal(tsc_dump_open(&c, dir, -1, "", 78, t), 0);
    char want[600];
    snprintf(want, sizeof want, "%s/tscope_r3_node-7-x_77_1700000001.tsd", dir);
    assert_string_equal(a.path, want);
    snprintf(want, sizeof want, "%s/tscope_r3_node-7-x_77_1700000001_1.tsd", dir);
    assert_string_equal(b.path, want);
    snprintf(want, sizeof want, "%s/tscope_rx_unknown_78_1700000001.tsd", dir);
    assert_string_equal(c.path, want);
    struct stat st;
    assert_int_equal(stat(a.path, &st), 0);
    assert_int_equal(st.st_size, 64);
    tsc_dump_close(&a);
    tsc_dump_close(&b);
    tsc_dump_close(&c);
}

static void test_open_in_unwritable_dir_fails_cleanly(void **state)
{
    (void)state;
    tsc_dump d;
    int rc = tsc_dump_open(&d, "/proc/tscope_cannot_be_here", 0, "h", 1, 1);
    assert_true(rc < 0);
    assert_int_equal(d.fd, -1);
}

static void test_meta_encoding(void **state)
{
    (void)state;
    const char *keys[] = {"host", "rank", "", "empty"};
    const char *vals[] = {"n1", "7", "ignored", NULL};
    char buf[64];
    size_t n = tsc_meta_encode(buf, sizeof buf, keys, vals, 4);
    const char want[] = "host\0n1\0rank\0" "7\0empty\0";
    assert_int_equal(n, sizeof want); /* the implicit NUL ends "empty"'s value */
    assert_memory_equal(buf, want, n);
    /* Exactly fitting works, one byte short does not. */
    assert_int_equal(tsc_meta_encode(buf, n, keys, vals, 4), n);
    assert_int_equal(tsc_meta_encode(buf, n - 1, keys, vals, 4), 0);
}

static void test_desc_slot_encoding(void **state)
{
    (void)state;
    static tsc_event slots[200];
    static unsigned char payload[TSC_DESC_MAX_PAYLOAD + 1];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (unsigned char)(i * 7 + 1);
    const uint16_t lens[] = {0, 1, 24, 25, 56, 57, 64, 1000, TSC_DESC_MAX_PAYLOAD};
    const size_t want_slots[] = {1, 1, 1, 2, 2, 3, 3, 32, 129};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        memset(slots, 0xee, sizeof slots);
        assert_int_equal(tsc_desc_slots(lens[i]), want_slots[i]);
        size_t n = tsc_encode_desc(slots, 200, TSC_DESC_STRING, 42, payload, lens[i]);
        assert_int_equal(n, want_slots[i]);
        tsc_desc_head *h = (tsc_desc_head *)slots;
        assert_int_equal(h->kind, TSC_EV_DESC);
        assert_int_equal(h->type, TSC_DESC_STRING);
        assert_int_equal(h->payload_len, lens[i]);
        assert_int_equal(h->id, 42);
        /* Payload continues straight into the next slots; padding is 0. */
        unsigned char *bytes = h->payload;
        if (lens[i])
            assert_memory_equal(bytes, payload, lens[i]);
        size_t region = 24 + (n - 1) * 32;
        for (size_t j = lens[i]; j < region; j++)
            assert_int_equal(bytes[j], 0);
        /* Nothing written past the descriptor. */
        assert_int_equal(((unsigned char *)slots)[n * 32], 0xee);
        /* One slot short of room: nothing. */
        assert_int_equal(tsc_encode_desc(slots, n - 1, TSC_DESC_STRING, 42, payload, lens[i]), 0);
    }
    assert_int_equal(tsc_encode_desc(slots, 200, TSC_DESC_STRING, 42, payload,
                                     TSC_DESC_MAX_PAYLOAD + 1), 0);
    assert_int_equal(tsc_encode_desc(slots, 200, TSC_DESC_STRING, 0, payload, 4), 0);
    assert_int_equal(tsc_encode_event(slots, 0, TSC_EV_NCCL, 0, 0, 1, 0, 0, 0), 0);
    assert_int_equal(tsc_encode_event(slots, 1, 0, 0, 0, 1, 0, 0, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_known_value),
        cmocka_unit_test(test_header_and_chunks),
        cmocka_unit_test(test_bad_chunks_are_counted_not_written),
        cmocka_unit_test(test_full_disk_counts_lost_bytes),
        cmocka_unit_test(test_open_path_never_replaces),
        cmocka_unit_test(test_naming_and_suffix_on_collision),
        cmocka_unit_test(test_open_in_unwritable_dir_fails_cleanly),
        cmocka_unit_test(test_meta_encoding),
        cmocka_unit_test(test_desc_slot_encoding),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}

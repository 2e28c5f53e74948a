/* Deterministic mutation fuzzing of the reader, run in every test suite
 * (and under ASan/UBSan in CI): bit flips, overwrites, truncations,
 * splices, and mutations inside chunks whose CRCs are then recomputed so
 * the slot and descriptor parsers see the garbage, not only the CRC check.
 * The assertion is "no crash, no leak, stats consistent"; a failing seed is
 * printed so it can be replayed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "crc32c.h"
#include "reader/dump_reader.h"
#include "fuzz_exercise.h"
#include "sample_dump.h"

#define ROUNDS 20000

static uint64_t rng_state;

static uint64_t rnd(void) { return fuzz_rand(&rng_state); }

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* Recompute both CRCs of every chunk that still parses as one, walking the
 * original layout. */
static void refresh_crcs(uint8_t *d, size_t len, const sample_layout *lay)
{
    for (size_t k = 0; k < SAMPLE_CHUNKS; k++) {
        size_t off = lay->chunk_off[k];
        if (off + sizeof(tsc_chunk_header) > len)
            return;
        tsc_chunk_header h;
        memcpy(&h, d + off, sizeof h);
        if (h.payload_len <= len - off - sizeof h)
            h.payload_crc = tsc_crc32c(0, d + off + sizeof h, h.payload_len);
        h.header_crc = tsc_crc32c(0, &h, offsetof(tsc_chunk_header, header_crc));
        memcpy(d + off, &h, sizeof h);
    }
}

static void mutate(uint8_t *d, size_t *len, const tb_buf *orig, const sample_layout *lay,
                   int how)
{
    size_t n = *len;
    switch (how) {
    case 0: /* a few bit flips anywhere */
        for (size_t i = 1 + below(4); i; i--)
            d[below(n)] ^= (uint8_t)(1u << below(8));
        break;
    case 1: /* random bytes over a random run */
    {
        size_t at = below(n), run = 1 + below(16);
        for (size_t i = 0; i < run && at + i < n; i++)
            d[at + i] = (uint8_t)rnd();
        break;
    }
    case 2: /* truncate, maybe after a flip */
        *len = below(n + 1);
        if (rnd() & 1)
            d[below(n)] ^= 0xff;
        break;
    case 3: /* splice: prefix of the file, then a suffix from anywhere */
    {
        size_t cut = below(n), from = below(orig->len);
        size_t tail = orig->len - from;
        if (cut + tail > n + 256)
            tail = n + 256 - cut;
        memcpy(d + cut, orig->data + from, tail);
        *len = cut + tail;
        break;
    }
    default: /* garbage inside chunks, CRCs fixed: reaches the slot parser */
    {
        size_t start = lay->chunk_off[1] + sizeof(tsc_chunk_header);
        size_t span = lay->chunk_end[2] - start;
        for (size_t i = 1 + below(3); i; i--) {
            size_t at = start + below(span);
            switch (below(4)) {
            case 0: d[at] ^= (uint8_t)(1u << below(8)); break;
            case 1: d[at] = (uint8_t)rnd(); break;
            case 2: /* a plausible kind or descriptor type at a slot start */
                d[start + below(span / 32) * 32] = (uint8_t)(rnd() & 1 ? 0x01 : 0x20 + below(8));
                break;
            default: /* a length field gone wild */
                d[at] = 0xff;
                if (at + 1 < n)
                    d[at + 1] = (uint8_t)rnd();
                break;
            }
        }
        if (rnd() % 4 == 0) /* sometimes mangle chunk header fields too */
            d[lay->chunk_off[1 + below(3)] + 4 + below(24)] ^= (uint8_t)rnd();
        refresh_crcs(d, n, lay);
        break;
    }
    }
}

/* The file source (pread, resync windows) must see exactly what the
 * memory source sees. */
static void same_through_file(const uint8_t *data, size_t len, uint64_t round)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/tsr_fuzz_%d.tsd", (int)getpid());
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    tsr_stats a, b;
    int sa = tsr_read_file(path, NULL, NULL, &a);
    int sb = tsr_read_buffer(data, len, path, NULL, NULL, &b);
    unlink(path);
    if (sa != sb || memcmp(&a, &b, sizeof a) != 0)
        fail_msg("round %llu: file and memory sources disagree", (unsigned long long)round);
}

static void test_mutations(void **state)
{
    (void)state;
    tb_buf orig = {0};
    sample_layout lay;
    sample_dump(&orig, &lay);
    uint64_t ev;
    assert_int_equal(fuzz_exercise(orig.data, orig.len, &ev), TSR_OK);
    assert_int_equal(ev, SAMPLE_EVENTS);

    size_t cap = orig.len + 512;
    uint8_t *work = malloc(cap);
    size_t status_count[3] = {0};
    for (uint64_t round = 0; round < ROUNDS; round++) {
        rng_state = 0x9e3779b97f4a7c15ull ^ (round * 0x100000001b3ull) ^ 1;
        memcpy(work, orig.data, orig.len);
        size_t len = orig.len;
        int how = (int)(round % 5);
        mutate(work, &len, &orig, &lay, how);
        /* Exact-size copy so ASan catches any read past the end. */
        uint8_t *input = malloc(len ? len : 1);
        memcpy(input, work, len);
        int st = fuzz_exercise(input, len, &ev);
        if (round % 500 == 0)
            same_through_file(input, len, round);
        free(input);
        if (st < 0 || st > 2)
            fail_msg("round %llu (mutation %d): status %d", (unsigned long long)round, how, st);
        status_count[st]++;
    }
    /* The mutations must actually reach every outcome. */
    assert_true(status_count[TSR_OK] > 0);
    assert_true(status_count[TSR_PROBLEMS] > ROUNDS / 4);
    assert_true(status_count[TSR_UNREADABLE] > 0);
    printf("fuzz: %d inputs, ok %zu, problems %zu, unreadable %zu\n", ROUNDS,
           status_count[0], status_count[1], status_count[2]);
    free(work);
    tb_free(&orig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_mutations)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

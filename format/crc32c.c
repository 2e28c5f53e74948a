#include "crc32c.h"

#include <string.h>

/* Chunk checksums are computed by the background writer for every byte of
 * the dump, so on x86-64 the SSE4.2 crc32 instruction is used (about 8
 * bytes per cycle); elsewhere a byte-wise table, built at compile time so
 * the function stays async-signal-safe. */
#define P 0x82f63b78u
#define B1(c) (((c) & 1) ? (((c) >> 1) ^ P) : ((c) >> 1))
#define B8(c) B1(B1(B1(B1(B1(B1(B1(B1(c))))))))
#define R4(i) B8(i), B8(i + 1), B8(i + 2), B8(i + 3)
#define R16(i) R4(i), R4(i + 4), R4(i + 8), R4(i + 12)
#define R64(i) R16(i), R16(i + 16), R16(i + 32), R16(i + 48)

static const uint32_t table[256] = {R64(0u), R64(64u), R64(128u), R64(192u)};

static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const uint8_t *p,
                                                             size_t len)
{
    uint64_t c = crc;
    while (len >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        len -= 8;
    }
    crc = (uint32_t)c;
    while (len--)
        crc = __builtin_ia32_crc32qi(crc, *p++);
    return crc;
}

static int have_sse42(void)
{
    static int cached = -1; /* benign race: every thread computes the same value */
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    }
    return cached;
}
#endif

uint32_t tsc_crc32c(uint32_t crc, const void *data, size_t len)
{
    crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
    if (have_sse42())
        return ~crc_sse42(crc, data, len);
#endif
    return ~crc_bytes(crc, data, len);
}

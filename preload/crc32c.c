#include "crc32c.h"

/* Table-driven, one byte at a time: chunk checksums are computed by the
 * background writer, off the hot path, so simplicity beats speed here.  The
 * table is built at compile time so the function stays async-signal-safe. */
#define P 0x82f63b78u
#define B1(c) (((c) & 1) ? (((c) >> 1) ^ P) : ((c) >> 1))
#define B8(c) B1(B1(B1(B1(B1(B1(B1(B1(c))))))))
#define R4(i) B8(i), B8(i + 1), B8(i + 2), B8(i + 3)
#define R16(i) R4(i), R4(i + 4), R4(i + 8), R4(i + 12)
#define R64(i) R16(i), R16(i + 16), R16(i + 32), R16(i + 48)

static const uint32_t table[256] = {R64(0u), R64(64u), R64(128u), R64(192u)};

uint32_t tsc_crc32c(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = data;
    crc = ~crc;
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* CRC-32C (Castagnoli), the checksum of dump headers and chunks. */
#ifndef TSC_CRC32C_H
#define TSC_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* crc32c of len bytes; start with crc = 0, chain by passing the result. */
uint32_t tsc_crc32c(uint32_t crc, const void *data, size_t len);

#endif

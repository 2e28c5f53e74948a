/* Reads one input the way tscope-report would, touching every decoded field
 * (typed decoders, names, JSON encoding, the kernel -> NCCL join), so the
 * fuzzers reach the code behind the reader too.  Shared by the in-suite
 * mutation test and the libFuzzer harness. */
#ifndef TEST_FUZZ_EXERCISE_H
#define TEST_FUZZ_EXERCISE_H

#include <stddef.h>
#include <stdint.h>

/* Returns the reader's status; *events gets the events delivered. */
int fuzz_exercise(const uint8_t *data, size_t len, uint64_t *events);

/* Make a mutated image's CRCs valid again (file header, then each chunk in
 * sequence while chunk headers are found), so a fuzzer's mutations reach
 * the payload parsers instead of stopping at the checksums. */
void fuzz_fix_crcs(uint8_t *data, size_t len);

/* xorshift64*: the fuzzers' deterministic generator, the same on every
 * platform (*state must not be 0). */
uint64_t fuzz_rand(uint64_t *state);

#endif

/* libFuzzer harness for the dump reader (built by scripts/fuzz-reader.sh
 * with clang -fsanitize=fuzzer,address,undefined; not part of the meson
 * build).  The first input byte picks the mode: odd = repair the CRCs
 * first so mutations reach the slot and descriptor parsers, even = read the
 * bytes as they are (exercises header checks and resynchronisation). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    if (!(mode & 1)) {
        fuzz_exercise(data, size, NULL);
        return 0;
    }
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fuzz_fix_crcs(copy, size);
    fuzz_exercise(copy, size, NULL);
    free(copy);
    return 0;
}

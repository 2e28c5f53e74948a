/* Writes the sample dump (prefixed by a fuzz mode byte when asked): seed
 * input for scripts/fuzz-reader.sh, and a quick file for trying
 * `tscope-report info` / `dump` by hand.
 * usage: write_sample OUT [MODE_BYTE] */
#include <stdio.h>
#include <stdlib.h>

#include "sample_dump.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT [MODE_BYTE]\n", argv[0]);
        return 2;
    }
    tb_buf b = {0};
    sample_layout lay;
    sample_dump(&b, &lay);
    FILE *f = fopen(argv[1], "wb");
    if (!f)
        return 1;
    if (argc > 2)
        fputc(atoi(argv[2]), f);
    int ok = fwrite(b.data, 1, b.len, f) == b.len;
    ok &= fclose(f) == 0;
    tb_free(&b);
    return ok ? 0 : 1;
}

/* The whole analyzer on one (possibly hostile) job directory, as the
 * commands run it: load, analyse, report as text and as JSON, export the
 * trace; then the rules every output must keep.  Shared by the in-suite
 * mutation test (test_pipeline_fuzz.c) and the libFuzzer harness
 * (fuzz_pipeline_main.c, scripts/fuzz-pipeline.sh).  Crashes, leaks and
 * undefined behaviour are the sanitizers' to find. */
#ifndef VIEWS_FUZZ_PIPELINE_H
#define VIEWS_FUZZ_PIPELINE_H

#include <stddef.h>

typedef struct fuzz_pipeline_stats {
    size_t runs, loaded, analysed, exported;
} fuzz_pipeline_stats;

/* Returns 0 when the job was refused cleanly or every output kept the
 * rules (text: valid UTF-8, no control character but newline and tab;
 * JSON report and trace: strict JSON, strict_json.h), else -1 with the
 * broken rule in why.  scratch: a directory for the trace file. */
int fuzz_pipeline_dir(const char *dir, const char *scratch, fuzz_pipeline_stats *st,
                      char *why, size_t cap);

#endif

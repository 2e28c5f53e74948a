/* Records what the reader's callbacks saw, for assertions. */
#ifndef TEST_CAPTURE_H
#define TEST_CAPTURE_H

#include "reader/dump_reader.h"

#define CAP_MAX 512

typedef struct capture {
    tsr_event ev[CAP_MAX];
    size_t n_ev;
    const tsr_desc *desc[CAP_MAX];
    size_t n_desc;
    uint64_t prob_off[CAP_MAX];
    char prob_msg[CAP_MAX][256];
    char prob_path[256];
    size_t n_prob;
    size_t n_meta, n_end_meta;
} capture;

extern const tsr_callbacks capture_callbacks;

/* Index of the first problem whose message contains `needle`, or -1. */
int capture_find_problem(const capture *c, const char *needle);

#endif

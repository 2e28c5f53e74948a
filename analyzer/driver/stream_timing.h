/* TSCOPE_STREAM_TIMING=1: the streaming report prints, to stderr when it
 * ends, the wall and CPU time (all threads) of its phases: loading, the
 * per-rank stages it runs again (stage 2 with gpu-span, stage 3, the cause
 * pass's reads) and the rest, which is the job-level passes on one thread
 * (scripts/bench-stream.sh prints them beside its figures). */
#ifndef TSA_STREAM_TIMING_H
#define TSA_STREAM_TIMING_H

enum { STREAM_LOAD, STREAM_WINDOW, STREAM_PASS, STREAM_HOLD, STREAM_PHASES };

typedef struct stream_timing {
    int on;
    double wall0, cpu0;                 /* when the report began */
    double at_wall, at_cpu;             /* when the current phase began */
    double wall[STREAM_PHASES], cpu[STREAM_PHASES];
} stream_timing;

void stream_timing_start(stream_timing *t);
void stream_phase_begin(stream_timing *t);
void stream_phase_end(stream_timing *t, int phase);
void stream_timing_print(const stream_timing *t);

#endif

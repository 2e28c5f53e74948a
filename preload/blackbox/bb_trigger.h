/* Trigger files of black-box mode: how the ranks of a job (and
 * `tscope-ctl capture`) tell each other to write a capture window.  One
 * small text file per trigger in <TSCOPE_OUT>/triggers/, created whole
 * (written under a temporary name, then linked into place, which fails if
 * the name exists: two ranks that see the same anomaly or hang create one
 * trigger).  Lines "key=value":
 *   steps=A-B   the steps to write (or next=K: the next K steps)
 *   seq=S       opener sequence number of step A on the rank that wrote it
 *   reason=anomaly|hang|signal|ctl|term   rank=R   now=1 (write without waiting
 *   for step B to end)   note=free text
 * Files come from other processes and people: parsed defensively. */
#ifndef TSC_BB_TRIGGER_H
#define TSC_BB_TRIGGER_H

#include <stddef.h>
#include <stdint.h>

#define BB_TRIGGER_DIR "triggers"
#define BB_NAME_MAX 96

typedef struct bb_trigger {
    char name[BB_NAME_MAX];
    char reason[16];
    int rank;             /* who wrote it, -1 unknown */
    int has_steps;
    uint64_t first, last; /* steps, inclusive */
    int has_seq;
    uint64_t seq;
    uint32_t next;        /* next K steps, when !has_steps */
    int now;
    char note[160];
} bb_trigger;

/* Parse a trigger's text.  0, or -1 with the reason in why. */
int bb_trigger_parse(const char *text, size_t len, bb_trigger *t, char *why, size_t cap);

/* Text of a trigger (what bb_trigger_parse reads back).  Returns its length. */
size_t bb_trigger_format(const bb_trigger *t, char *buf, size_t cap);

/* Create <dir>/<name> with text as a whole.  0 created, 1 it existed
 * already, or -errno. */
int bb_trigger_publish(const char *dir, const char *name, const char *text);

/* A name a trigger file may have: [A-Za-z0-9._-], not starting with '.',
 * no ".tmp" or ".steps" ending (those are our own helpers). */
int bb_trigger_name_ok(const char *name);

#endif

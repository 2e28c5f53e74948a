/* Trigger files: see bb_trigger.h. */
#include "bb_trigger.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

int bb_trigger_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (!n || n >= BB_NAME_MAX || name[0] == '.' || ends_with(name, ".tmp") ||
        ends_with(name, ".steps"))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* A decimal number filling [s, end). */
static int num(const char *s, const char *end, uint64_t *out)
{
    if (s == end || end - s > 19)
        return -1;
    uint64_t v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int set_value(bb_trigger *t, const char *k, size_t klen, const char *v, const char *vend,
                     char *why, size_t cap)
{
#define IS(key) (klen == sizeof key - 1 && !memcmp(k, key, klen))
    uint64_t x;
    if (IS("steps")) {
        const char *dash = memchr(v, '-', (size_t)(vend - v));
        if (!dash || num(v, dash, &t->first) || num(dash + 1, vend, &t->last) ||
            t->last < t->first || t->last - t->first > 1000000) {
            snprintf(why, cap, "steps must be A-B with A <= B (at most 1000000 steps)");
            return -1;
        }
        t->has_steps = 1;
    } else if (IS("next")) {
        if (num(v, vend, &x) || x == 0 || x > 1000000) {
            snprintf(why, cap, "next must be a step count from 1 to 1000000");
            return -1;
        }
        t->next = (uint32_t)x;
    } else if (IS("seq")) {
        if (num(v, vend, &t->seq)) {
            snprintf(why, cap, "seq must be a number");
            return -1;
        }
        t->has_seq = 1;
    } else if (IS("rank")) {
        if (num(v, vend, &x) || x > 10000000) {
            snprintf(why, cap, "rank must be a number");
            return -1;
        }
        t->rank = (int)x;
    } else if (IS("now")) {
        t->now = vend - v == 1 && *v == '1';
    } else if (IS("reason")) {
        size_t n = (size_t)(vend - v);
        if (!n || n >= sizeof t->reason) {
            snprintf(why, cap, "reason must be a short word");
            return -1;
        }
        memcpy(t->reason, v, n);
        t->reason[n] = 0;
    } else if (IS("note")) {
        size_t n = (size_t)(vend - v) < sizeof t->note - 1 ? (size_t)(vend - v)
                                                            : sizeof t->note - 1;
        memcpy(t->note, v, n);
        t->note[n] = 0;
    } /* other keys: a newer writer's, ignored */
    return 0;
#undef IS
}

int bb_trigger_parse(const char *text, size_t len, bb_trigger *t, char *why, size_t cap)
{
    char name[BB_NAME_MAX];
    memcpy(name, t->name, sizeof name);
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, sizeof name);
    t->rank = -1;
    snprintf(t->reason, sizeof t->reason, "ctl");
    if (len > 4096) {
        snprintf(why, cap, "larger than 4096 bytes");
        return -1;
    }
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p && le[-1] == '\r')
            le--;
        if (le > p && *p != '#') {
            const char *eq = memchr(p, '=', (size_t)(le - p));
            if (!eq) {
                snprintf(why, cap, "line %.*s has no '='", (int)(le - p > 40 ? 40 : le - p), p);
                return -1;
            }
            for (const char *c = p; c < le; c++)
                if ((unsigned char)*c < 0x20 && *c != '\t') {
                    snprintf(why, cap, "control character in a line");
                    return -1;
                }
            if (set_value(t, p, (size_t)(eq - p), eq + 1, le, why, cap) < 0)
                return -1;
        }
        p = nl ? nl + 1 : end;
    }
    if (!t->has_steps && !t->next) {
        snprintf(why, cap, "neither steps=A-B nor next=K");
        return -1;
    }
    return 0;
}

size_t bb_trigger_format(const bb_trigger *t, char *buf, size_t cap)
{
    int n;
    if (t->has_steps)
        n = snprintf(buf, cap, "steps=%" PRIu64 "-%" PRIu64 "\n", t->first, t->last);
    else
        n = snprintf(buf, cap, "next=%u\n", t->next);
    size_t len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
#define ADD(...)                                                                   \
    do {                                                                           \
        int w_ = snprintf(buf + len, cap - len, __VA_ARGS__);                      \
        len = w_ < 0 ? len : len + (size_t)w_ < cap ? len + (size_t)w_ : cap - 1;  \
    } while (0)
    if (t->has_seq)
        ADD("seq=%" PRIu64 "\n", t->seq);
    ADD("reason=%s\n", t->reason);
    if (t->rank >= 0)
        ADD("rank=%d\n", t->rank);
    if (t->now)
        ADD("now=1\n");
    if (t->note[0])
        ADD("note=%s\n", t->note);
#undef ADD
    return len;
}

int bb_trigger_publish(const char *dir, const char *name, const char *text)
{
    char path[4400], tmp[4400];
    if (mkdir(dir, 0777) < 0 && errno != EEXIST)
        return -errno;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.%d.tmp", dir, name, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    int rc = write(fd, text, len) == (ssize_t)len ? 0 : -EIO;
    close(fd);
    if (rc == 0 && link(tmp, path) < 0)
        rc = errno == EEXIST ? 1 : -errno;
    unlink(tmp);
    return rc;
}

/* Thread-name classification; see thread_phase.h for the rules and why. */
#include "thread_phase.h"

#include <string.h>

static int has_prefix(const char *s, size_t n, const char *prefix)
{
    size_t p = strlen(prefix);
    return n >= p && memcmp(s, prefix, p) == 0;
}

/* Digits only, at least one, value fits an int. */
static int parse_device(const char *s, size_t n, int *out)
{
    if (n == 0 || n > 6)
        return 0;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

tsc_thread_phase tsc_thread_phase_of(const char *name, size_t name_len, uint32_t tid,
                                     uint32_t pid, int *device)
{
    if (device)
        *device = -1;
    size_t n = 0;
    if (name != NULL)
        while (n < name_len && name[n] != '\0')
            n++;
    /* A trailing newline as read from /proc/.../comm is not part of it. */
    while (n > 0 && (name[n - 1] == '\n' || name[n - 1] == ' '))
        n--;

    static const char autograd[] = "pt_autograd_";
    if (has_prefix(name, n, autograd)) {
        int dev;
        size_t p = sizeof autograd - 1;
        if (parse_device(name + p, n - p, &dev)) {
            if (device)
                *device = dev;
            return TSC_PHASE_BACKWARD;
        }
        return TSC_PHASE_OTHER;
    }
    if (has_prefix(name, n, "pt_main_thread") || has_prefix(name, n, "python"))
        return TSC_PHASE_FORWARD_OPTIMIZER;
    if (has_prefix(name, n, "pt_nccl") ||
        has_prefix(name, n, "nccl") || has_prefix(name, n, "NCCL"))
        return TSC_PHASE_COMM;
    if (has_prefix(name, n, "pt_pin_memory") || has_prefix(name, n, "pt_data_pin"))
        return TSC_PHASE_DATA;
    if (tid != 0 && tid == pid)
        return TSC_PHASE_FORWARD_OPTIMIZER;
    return TSC_PHASE_OTHER;
}

const char *tsc_thread_phase_name(tsc_thread_phase p)
{
    switch (p) {
    case TSC_PHASE_BACKWARD: return "backward";
    case TSC_PHASE_FORWARD_OPTIMIZER: return "forward_optimizer";
    case TSC_PHASE_COMM: return "comm";
    case TSC_PHASE_DATA: return "data";
    case TSC_PHASE_OTHER: return "other";
    }
    return "other";
}

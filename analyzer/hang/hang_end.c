/* How a rank's process ended, from its END chunk (docs/format.md). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hang.h"

static int end_signal(const tsa_rank_end *end)
{
    if (strncmp(end->reason, "signal:", 7))
        return 0;
    int s = atoi(end->reason + 7);
    return s > 0 && s < 128 ? s : 0;
}

int tsa_end_by_itself(const tsa_rank_end *end)
{
    if (!strcmp(end->reason, "exit"))
        return 1;
    int s = end_signal(end);
    return s && s != SIGTERM && s != SIGINT && s != SIGHUP && s != SIGKILL;
}

static const char *signal_name(int s)
{
    switch (s) {
    case SIGABRT: return "SIGABRT";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
    }
}

char *tsa_end_describe(const tsa_rank_end *end, char *buf, size_t cap)
{
    int s = end_signal(end);
    if (!strcmp(end->reason, "exit") && end->has_exit_code)
        snprintf(buf, cap, "exit code %d", end->exit_code);
    else if (!strcmp(end->reason, "exit"))
        snprintf(buf, cap, "exit");
    else if (s)
        snprintf(buf, cap, "%s (%d)", signal_name(s), s);
    else if (end->reason[0])
        snprintf(buf, cap, "%s", end->reason);
    else
        snprintf(buf, cap, "no END record (killed?)");
    return buf;
}

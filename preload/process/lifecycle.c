/* Process lifecycle around the recorder: the constructor (reads the
 * environment only) and flushing on the signals that end a process
 * (exit and exec: exit_exec.c).
 *
 * Signals: schedulers stop jobs with SIGTERM (torchrun forwards it to its
 * workers) and people with Ctrl-C, and the last second of a run is often
 * the interesting one; NCCL's and PyTorch's watchdogs abort() a hung job
 * (SIGABRT), and a crash is SIGSEGV or SIGBUS.  Once the recorder is set up
 * we own the real dispositions of these five; what the application
 * installs through sigaction()/signal() is kept as its "virtual"
 * disposition, returned to it as the old handler, and run after our flush,
 * so the application behaves exactly as without us.
 *
 * Termination signals (TERM, INT) write the END chunk before the
 * application's handler runs, as before.  Fault signals (ABRT, SEGV, BUS)
 * write END only when the default action is about to kill the process;
 * when the application has a handler (Python's faulthandler, a JVM) the
 * buffers are flushed without END and the handler decides: if it restores
 * the default and re-raises, that second delivery writes END.
 *
 * In black-box mode SIGUSR2 is owned the same way: it asks the writer for
 * a capture window, then runs the application's handler (never its
 * default action, which would end the process); and SIGTERM first waits,
 * at most TSCOPE_BB_TERM_MS, for the writer to write the last steps as a
 * window (docs/blackbox.md). */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "blackbox.h"
#include "parts.h"
#include "process.h"
#include "recorder.h"
#include "real_sym.h"
#include "recorder_internal.h"
#include "spin.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

static tsc_real_fn real_sigaction_fn = TSC_REAL_FN(sigaction);
static tsc_real_fn real_signal_fn = TSC_REAL_FN(signal);

static sigaction_fn real_sigaction(void) { return (sigaction_fn)tsc_real_get(&real_sigaction_fn); }

/* The signals we own, by index. */
static const int owned_sigs[] = {SIGTERM, SIGINT, SIGABRT, SIGSEGV, SIGBUS, SIGUSR2};
#define SIGUSR2_INDEX 5 /* owned only in black-box mode: a capture request */
#define N_OWNED (int)(sizeof owned_sigs / sizeof owned_sigs[0])

/* Index of the signals we own, -1 for the rest. */
static int tracked(int sig)
{
    for (int i = 0; i < N_OWNED; i++)
        if (owned_sigs[i] == sig)
            return i;
    return -1;
}

static int is_fault(int sig) { return sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS; }

/* The application's disposition per tracked signal.  Two copies and an
 * index, so the handler always reads a complete one even if the
 * application is changing it at that moment. */
static struct sigaction app_act[N_OWNED][2];
static _Atomic int app_cur[N_OWNED];
static _Atomic int owned[N_OWNED];

static void app_get(int i, struct sigaction *out)
{
    *out = app_act[i][atomic_load_explicit(&app_cur[i], memory_order_acquire)];
}

static void app_set(int i, const struct sigaction *act)
{
    int next = 1 - atomic_load_explicit(&app_cur[i], memory_order_relaxed);
    app_act[i][next] = *act;
    atomic_store_explicit(&app_cur[i], next, memory_order_release);
}

static void on_signal(int sig, siginfo_t *si, void *uc);

static void install_ours(int sig)
{
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_signal;
    ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&ours.sa_mask);
    /* One flush at a time: the termination signals wait while a handler
     * runs.  Faults are not masked: one inside our own handler must kill
     * the process (a blocked synchronous fault does), not loop. */
    sigaddset(&ours.sa_mask, SIGTERM);
    sigaddset(&ours.sa_mask, SIGINT);
    real_sigaction()(sig, &ours, NULL);
}

/* Async-signal-safe: "signal:N" into reason (>= 32 bytes). */
static void signal_reason(int sig, char *reason)
{
    char nb[24];
    const char *num = tsc_u64_to_str((uint64_t)sig, nb);
    memcpy(reason, "signal:", 7);
    memcpy(reason + 7, num, strlen(num) + 1);
}

/* SIGUSR2 in black-box mode: ask the writer for a capture window, then
 * run the application's handler if it has one.  Its default action
 * (terminate) is not taken: the signal was meant for us. */
static void on_capture_signal(int i, int sig, siginfo_t *si, void *uc)
{
    if (tsc_rec_owned_here())
        tsc_bb_signal();
    struct sigaction app;
    app_get(i, &app);
    if (app.sa_flags & SA_SIGINFO)
        app.sa_sigaction(sig, si, uc);
    else if (app.sa_handler != SIG_DFL && app.sa_handler != SIG_IGN)
        app.sa_handler(sig);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    int i = tracked(sig);
    if (i < 0)
        return;
    if (i == SIGUSR2_INDEX) {
        on_capture_signal(i, sig, si, uc);
        errno = saved;
        return;
    }
    struct sigaction app;
    app_get(i, &app);
    int ignored = !(app.sa_flags & SA_SIGINFO) && app.sa_handler == SIG_IGN;
    int fault = is_fault(sig);
    /* A fault the kernel raised (si_code > 0) cannot be ignored: returning
     * would run the faulting instruction again.  The kernel kills in that
     * case, so we do as if the disposition were the default. */
    if (ignored && fault && sig != SIGABRT && si && si->si_code > 0) {
        memset(&app, 0, sizeof app);
        app.sa_handler = SIG_DFL;
        ignored = 0;
    }
    if (ignored) {
        if (fault && tsc_rec_owned_here())
            tsc_rec_flush(); /* abort() goes on to kill us whatever the disposition */
        goto out; /* the application ignores it: nothing ends */
    }
    int dies = !(app.sa_flags & SA_SIGINFO) && app.sa_handler == SIG_DFL;

    if (tsc_rec_owned_here()) {
        /* Black-box mode: the job is being ended (a scheduler's time limit,
         * a launcher stopping its workers), so its last steps are worth
         * keeping: the writer writes them as a window, bounded by
         * TSCOPE_BB_TERM_MS, before the application's handler or the
         * default action runs. */
        if (sig == SIGTERM)
            tsc_bb_term_window(tsc_rec_config()->bb_term_ms);
        tsc_parts_flush(1);
        if (fault && !dies) {
            tsc_rec_flush();
        } else {
            char reason[32];
            signal_reason(sig, reason);
            tsc_rec_finish(reason, 1);
        }
    }

    if (app.sa_flags & SA_RESETHAND) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        app_set(i, &dfl);
    }
    if (app.sa_flags & SA_SIGINFO) {
        app.sa_sigaction(sig, si, uc);
    } else if (dies) {
        /* Default action (terminate, core for faults): let the kernel do
         * it, so the parent sees "killed by signal N" exactly as without
         * us. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        real_sigaction()(sig, &dfl, NULL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        pthread_sigmask(SIG_UNBLOCK, &s, NULL);
        raise(sig);
        /* Still alive (blocked elsewhere): take the signal back. */
        install_ours(sig);
    } else {
        app.sa_handler(sig);
    }
out:
    errno = saved;
}

/* Called once by the recorder when it sets up (a process that records):
 * the process part's set-up (parts.c). */
void tsc_lifecycle_on_setup(void)
{
    sigaction_fn real = real_sigaction();
    if (!real)
        return;
    for (int i = 0; i < N_OWNED; i++) {
        int sig = owned_sigs[i];
        if (atomic_load(&owned[i]) || (i == SIGUSR2_INDEX && !tsc_bb_on()))
            continue;
        struct sigaction cur;
        if (real(sig, NULL, &cur) < 0)
            continue;
        app_set(i, &cur);
        atomic_store(&owned[i], 1);
        install_ours(sig);
    }
}

/* Whether this process keeps the application's disposition of tracked
 * signal i (index, -1 untracked) in app_act.  Only the recording process
 * does: a vfork child shares our memory, and Python's subprocess resets
 * every handler to SIG_DFL there before exec; stored, that would become
 * the parent's disposition and the job would lose its SIGTERM handler. */
static int kept_here(int i)
{
    return i >= 0 && atomic_load(&owned[i]) && tsc_rec_owned_here();
}

/* In a child of the recording process the kernel still holds our handler,
 * inherited: what the application asks about is its own. */
static void show_app_handler(int i, struct sigaction *old)
{
    if (i >= 0 && atomic_load(&owned[i]) && (old->sa_flags & SA_SIGINFO) &&
        old->sa_sigaction == on_signal)
        app_get(i, old);
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int i = tracked(sig);
    if (kept_here(i)) {
        if (old)
            app_get(i, old);
        if (act)
            app_set(i, act);
        return 0;
    }
    sigaction_fn real = real_sigaction();
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int rc = real(sig, act, old);
    if (rc == 0 && old)
        show_app_handler(i, old);
    return rc;
}

EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    int i = tracked(sig);
    if (kept_here(i)) {
        struct sigaction prev, act;
        app_get(i, &prev);
        memset(&act, 0, sizeof act);
        act.sa_handler = handler;
        act.sa_flags = SA_RESTART; /* glibc's signal() has BSD semantics */
        sigemptyset(&act.sa_mask);
        app_set(i, &act);
        /* sa_handler and sa_sigaction share storage in glibc's struct
         * sigaction, as the real signal() returns it. */
        return prev.sa_handler;
    }
    signal_fn real = (signal_fn)tsc_real_get(&real_signal_fn);
    if (!real) {
        errno = ENOSYS;
        return SIG_ERR;
    }
    sighandler_t prev = real(sig, handler);
    if (i >= 0 && atomic_load(&owned[i]) && prev == (sighandler_t)(void (*)(void))on_signal) {
        struct sigaction app;
        app_get(i, &app);
        prev = app.sa_handler;
    }
    return prev;
}

__attribute__((constructor)) static void tsc_constructor(void)
{
    int saved = errno;
    real_sigaction(); /* resolve now, not first inside a signal path */
    tsc_real_get(&real_signal_fn);
    tsc_rec_load_config();
    if (!tsc_rec_config()->disabled)
        tsc_parts_activate();
    errno = saved;
}

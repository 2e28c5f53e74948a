/* Flushing before the process image goes away without atexit handlers:
 * every exec variant (exec replaces the image; what is buffered would be
 * lost with it) and _exit/_Exit (used by forked workers, by signal
 * handlers, and by frameworks that skip atexit on purpose).
 *
 * Skipped in a vfork child, which shares our memory and must not write
 * our dump (tsc_rec_owned_here).  The real functions are resolved in the
 * constructor: a vfork child must not run the dynamic linker on memory it
 * shares with its parent.  The variadic execl* forms are turned into their
 * argv form here, on the stack, without malloc (exec is async-signal-safe
 * and may be called after vfork). */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "parts.h"
#include "recorder.h"
#include "real_sym.h"
#include "recorder_internal.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef void (*exit_fn)(int);

static tsc_real_fn real_execve = TSC_REAL_FN(execve), real_execvpe = TSC_REAL_FN(execvpe);
static tsc_real_fn real_execv = TSC_REAL_FN(execv), real_execvp = TSC_REAL_FN(execvp);
static tsc_real_fn real_fexecve = TSC_REAL_FN(fexecve);
static tsc_real_fn real__exit = TSC_REAL_FN(_exit), real__Exit = TSC_REAL_FN(_Exit);

/* exec: not from a signal handler as a rule, but it may be (it is
 * async-signal-safe), so the bounded, signal-safe finish is used. */
static void before_exec(void)
{
    int saved = errno;
    if (tsc_rec_owned_here())
        tsc_rec_finish("exec", 1);
    errno = saved;
}

static int no_real(void)
{
    errno = ENOSYS;
    return -1;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    before_exec();
    execve_fn f = (execve_fn)tsc_real_get(&real_execve);
    return f ? f(path, argv, envp) : no_real();
}

EXPORT int execv(const char *path, char *const argv[])
{
    before_exec();
    execv_fn f = (execv_fn)tsc_real_get(&real_execv);
    return f ? f(path, argv) : no_real();
}

EXPORT int execvp(const char *file, char *const argv[])
{
    before_exec();
    execv_fn f = (execv_fn)tsc_real_get(&real_execvp);
    return f ? f(file, argv) : no_real();
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    before_exec();
    execve_fn f = (execve_fn)tsc_real_get(&real_execvpe);
    return f ? f(file, argv, envp) : no_real();
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec();
    fexecve_fn f = (fexecve_fn)tsc_real_get(&real_fexecve);
    return f ? f(fd, argv, envp) : no_real();
}

/* Arguments of an execl* call up to its NULL (at most `cap`, the list is
 * then cut short and exec fails with E2BIG as the kernel would). */
#define EXECL_MAX_ARGS 4096

static size_t count_args(const char *arg0, va_list *ap)
{
    size_t n = 1;
    if (!arg0)
        return 0;
    while (va_arg(*ap, const char *))
        n++;
    return n;
}

/* Leaves *ap after the NULL that ends the arguments. */
static void fill_args(char **argv, size_t n, const char *arg0, va_list *ap)
{
    if (n) {
        argv[0] = (char *)arg0;
        for (size_t i = 1; i < n; i++)
            argv[i] = va_arg(*ap, char *);
        (void)va_arg(*ap, char *);
    }
    argv[n] = NULL;
}

/* The body of execl and execlp: argv on the stack, then the v form
 * (through our own wrapper, which flushes). */
#define EXECL_BODY(ARG0, VCALL, ENVP_OUT)                               \
    do {                                                                       \
        va_list ap;                                                            \
        va_start(ap, ARG0);                                                    \
        size_t n = count_args(ARG0, &ap);                                      \
        va_end(ap);                                                            \
        if (n > EXECL_MAX_ARGS) {                                              \
            errno = E2BIG;                                                     \
            return -1;                                                         \
        }                                                                      \
        char *argv[n + 1];                                                     \
        va_start(ap, ARG0);                                                    \
        fill_args(argv, n, ARG0, &ap);                                         \
        ENVP_OUT;                                                              \
        va_end(ap);                                                            \
        return VCALL;                                                          \
    } while (0)

EXPORT int execl(const char *path, const char *arg, ...)
{
    EXECL_BODY(arg, execv(path, argv), (void)0);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    EXECL_BODY(arg, execvp(file, argv), (void)0);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    char *const *envp = NULL;
    /* The environment follows the NULL that ends the arguments. */
    EXECL_BODY(arg, execve(path, argv, envp), envp = va_arg(ap, char *const *));
}

/* _exit/_Exit may run in a signal handler: signal-safe finish. */
static void before_exit(int status)
{
    if (!tsc_rec_owned_here())
        return;
    tsc_parts_flush(1);
    tsc_rec_set_exit_code(status);
    tsc_rec_finish("exit", 1);
}

static _Noreturn void exit_now(exit_fn f, int status)
{
    if (f)
        f(status);
    syscall(SYS_exit_group, status);
    for (;;)
        ;
}

EXPORT _Noreturn void _exit(int status)
{
    before_exit(status);
    exit_now((exit_fn)tsc_real_get(&real__exit), status);
}

EXPORT _Noreturn void _Exit(int status)
{
    before_exit(status);
    exit_now((exit_fn)tsc_real_get(&real__Exit), status);
}

__attribute__((constructor)) static void resolve_exit_exec(void)
{
    int saved = errno;
    tsc_real_fn *all[] = {&real_execve, &real_execv, &real_execvp, &real_execvpe,
                          &real_fexecve, &real__exit, &real__Exit};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        tsc_real_get(all[i]);
    errno = saved;
}

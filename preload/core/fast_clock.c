/* The counter-to-CLOCK_REALTIME fit and its publication (fast_clock.h). */
#include "fast_clock.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

tsc_clock_shared tsc_clock_g;

/* ------------------------------------------------------------ the fit */

/* ns per tick times 2^32, from dn ns over dt ticks. */
static uint64_t slope_of(uint64_t dn, uint64_t dt)
{
    return (uint64_t)(((unsigned __int128)dn << 32) / dt);
}

static void restart(tsc_clock_fit *fit, uint64_t counter, uint64_t ns)
{
    fit->start_tsc = counter;
    fit->start_ns = ns;
    fit->have_start = 1;
}

int tsc_clock_fit_feed(tsc_clock_fit *fit, uint64_t counter, uint64_t ns)
{
    if (!fit->have_start || counter <= fit->start_tsc || ns <= fit->start_ns) {
        /* First sample, or the counter or the clock went back: start
         * measuring the rate again; a line in use stays as it is until the
         * error check below can judge it. */
        restart(fit, counter, ns);
        return 0;
    }
    uint64_t rate = slope_of(ns - fit->start_ns, counter - fit->start_tsc);
    if (!fit->fitted) {
        if (ns - fit->start_ns < TSC_CLOCK_FIRST_FIT_NS || rate == 0)
            return 0;
        fit->line = (tsc_clock_line){counter, ns, rate};
        fit->fitted = 1;
        return 1;
    }
    uint64_t on_line = tsc_clock_convert(&fit->line, counter);
    int64_t err = (int64_t)(ns - on_line);
    if (err > TSC_CLOCK_STEP_NS || err < -TSC_CLOCK_STEP_NS) {
        /* The system clock was set, or the counter changed under us: back
         * onto the clock at once, keeping the slope (the rate since the
         * last start includes the jump). */
        fit->line = (tsc_clock_line){counter, ns, fit->line.mult};
        restart(fit, counter, ns);
        fit->steps++;
        return 1;
    }
    /* Continue from where the line stands now, steered to close the error
     * over about TSC_CLOCK_SLEW_NS. */
    __int128 adjust = (__int128)rate * err / TSC_CLOCK_SLEW_NS;
    __int128 bound = (__int128)rate * TSC_CLOCK_SLEW_PPM / 1000000;
    if (adjust > bound)
        adjust = bound;
    if (adjust < -bound)
        adjust = -bound;
    fit->line = (tsc_clock_line){counter, on_line, (uint64_t)((__int128)rate + adjust)};
    return 1;
}

/* ------------------------------------------------------- the library */

static tsc_clock_fit g_fit;
static int g_usable;
static char g_describe[64] = "os";

/* Whether /proc/cpuinfo's first "flags" line names both flags. */
static int cpu_has_stable_counter(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return 0;
    char line[8192];
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5))
            continue;
        ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
        break;
    }
    fclose(f);
    return ok;
}

/* The kernel's own clock runs on the counter (so it trusts it across
 * CPUs); hpet or acpi_pm means it does not. */
static int kernel_clock_on_counter(void)
{
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char name[64] = {0};
    ssize_t n = read(fd, name, sizeof name - 1);
    close(fd);
    if (n <= 0)
        return 0;
    name[strcspn(name, "\n")] = '\0';
    return !strcmp(name, "tsc") || !strcmp(name, "kvm-clock") ||
           !strcmp(name, "hyperv_clocksource_tsc_page");
}

void tsc_clock_setup(int os_clock)
{
    memset(&g_fit, 0, sizeof g_fit);
    atomic_store(&tsc_clock_g.active, 0);
    const char *why = os_clock ? "TSCOPE_OS_CLOCK"
                      : !TSC_HAVE_TSC ? "no time-stamp counter"
                      : !cpu_has_stable_counter() ? "counter not constant"
                      : !kernel_clock_on_counter() ? "kernel clock not on the counter"
                                                   : NULL;
    g_usable = why == NULL;
    if (why)
        snprintf(g_describe, sizeof g_describe, "os (%s)", why);
    else
        snprintf(g_describe, sizeof g_describe, "os (fitting the counter)");
    tsc_clock_tick();
}

#if TSC_HAVE_TSC
/* A counter read between two clock reads, the narrowest of three tries;
 * 0 when every try was interrupted for over 50 us. */
static int sample(uint64_t *counter, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t a = tsc_os_realtime_ns();
        uint64_t c = __rdtsc();
        uint64_t b = tsc_os_realtime_ns();
        if (b >= a && b - a < best) {
            best = b - a;
            *counter = c;
            *ns = a + (b - a) / 2;
        }
    }
    return best < 50000;
}
#endif

static void publish(const tsc_clock_line *l)
{
    uint32_t s = atomic_load_explicit(&tsc_clock_g.seq, memory_order_relaxed);
    atomic_store_explicit(&tsc_clock_g.seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&tsc_clock_g.base_tsc, l->base_tsc, memory_order_relaxed);
    atomic_store_explicit(&tsc_clock_g.base_ns, l->base_ns, memory_order_relaxed);
    atomic_store_explicit(&tsc_clock_g.mult, l->mult, memory_order_relaxed);
    atomic_store_explicit(&tsc_clock_g.seq, s + 2, memory_order_release);
    atomic_store_explicit(&tsc_clock_g.active, 1, memory_order_release);
}

void tsc_clock_tick(void)
{
#if TSC_HAVE_TSC
    uint64_t counter, ns;
    if (!g_usable || !sample(&counter, &ns))
        return;
    int was_fitted = g_fit.fitted;
    if (!tsc_clock_fit_feed(&g_fit, counter, ns))
        return;
    publish(&g_fit.line);
    if (!was_fitted) {
        double ghz = 4294967296.0 / (double)g_fit.line.mult;
        snprintf(g_describe, sizeof g_describe, "tsc %.3f GHz", ghz);
    }
#endif
}

uint64_t tsc_clock_tick_period_ns(void)
{
    return !g_usable ? 0 : g_fit.fitted ? 1000000000ull : 250000000ull;
}

void tsc_clock_after_fork(void)
{
    /* The parent's writer may have been half-way through an update: the
     * child fits afresh (system clock meanwhile). */
    atomic_store(&tsc_clock_g.active, 0);
    atomic_store(&tsc_clock_g.seq, 0);
    memset(&g_fit, 0, sizeof g_fit);
    if (g_usable)
        snprintf(g_describe, sizeof g_describe, "os (fitting the counter)");
}

const char *tsc_clock_describe(void) { return g_describe; }

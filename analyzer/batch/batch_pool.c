/* The batch's process pool: one forked child per job, so a crash, an
 * out-of-memory kill or a hang in one job's analysis costs that job's row
 * and nothing else.  The child sends its row back as one JSON line. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "reader/text_visible.h"

#define MAX_ROW_BYTES (1u << 20)

typedef struct worker {
    pid_t pid;
    int fd;
    size_t job;
    char *buf;
    size_t len, cap;
    double started;
    int overflow;
} worker;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Test hook (docs/views.md): TSCOPE_BATCH_FAULT=crash:TEXT or hang:TEXT makes
 * the child of every job whose path contains TEXT crash or hang, so the
 * tests can prove one bad job does not stop the batch. */
static void fault_hook(const char *job)
{
    const char *f = getenv("TSCOPE_BATCH_FAULT");
    if (!f)
        return;
    if (!strncmp(f, "crash:", 6) && f[6] && strstr(job, f + 6))
        raise(SIGSEGV);
    if (!strncmp(f, "hang:", 5) && f[5] && strstr(job, f + 5))
        for (;;)
            pause();
}

static void child(const char *job, int fd)
{
    /* A fault in the child must end the child: handlers inherited from the
     * parent (a test harness, a crash reporter) would run parent code. */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGPIPE};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    fault_hook(job);
    tsa_batch_row row;
    tsa_batch_row_init(&row, job);
    tsa_batch_analyze_job(job, &row);
    char *s = tsa_batch_row_json_text(&row);
    int rc = s && !write_all(fd, s, strlen(s)) ? 0 : 3;
    _exit(rc);
}

static int start(worker *w, const char *job, size_t index)
{
    int p[2];
    if (pipe(p))
        return -1;
    fflush(NULL);   /* or the child would repeat buffered output */
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        child(job, p[1]);
    }
    close(p[1]);
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->fd = p[0];
    w->job = index;
    w->started = now_s();
    return 0;
}

static void describe_status(tsa_batch_row *row, int status)
{
    if (WIFSIGNALED(status))
        tsa_batch_row_fail(row, "crashed", "analysis died of signal %d (%s)", WTERMSIG(status),
                           strsignal(WTERMSIG(status)));
    else
        tsa_batch_row_fail(row, "crashed", "analysis exited with status %d and no result",
                           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* The child is done (EOF or timeout): reap it and make its row. */
static void finish(worker *w, char *const *jobs, tsa_batch_row *rows, int timed_out,
                   double timeout_s)
{
    int status = 0;
    if (timed_out)
        kill(w->pid, SIGKILL);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    close(w->fd);
    tsa_batch_row *row = &rows[w->job];
    tsa_batch_row_free(row);
    tsa_batch_row_init(row, jobs[w->job]);
    if (timed_out) {
        tsa_batch_row_fail(row, "timeout", "analysis took longer than %.0f s", timeout_s);
    } else {
        cJSON *j = NULL;
        if (!w->overflow && w->len && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            w->buf[w->len] = '\0';
            j = cJSON_Parse(w->buf);
        }
        tsa_batch_row parsed;
        if (j && !tsa_batch_row_from_json(j, jobs[w->job], &parsed)) {
            tsa_batch_row_free(row);
            *row = parsed;
        } else {
            if (j)
                tsa_batch_row_free(&parsed);
            describe_status(row, status);
        }
        cJSON_Delete(j);
    }
    free(w->buf);
    w->buf = NULL;
    w->pid = 0;
}

/* Read what the child sent; 1 at EOF. */
static int drain(worker *w)
{
    for (;;) {
        if (w->cap - w->len < 4097) {
            size_t cap = w->cap ? w->cap * 2 : 8192;
            if (cap > MAX_ROW_BYTES + 8192) {
                w->overflow = 1;
                w->len = 0;
                cap = w->cap;
            } else {
                char *p = realloc(w->buf, cap);
                if (!p) {
                    w->overflow = 1;
                    w->len = 0;
                } else {
                    w->buf = p;
                    w->cap = cap;
                }
            }
            if (!w->buf)
                return 1;
        }
        ssize_t n = read(w->fd, w->buf + w->len, w->cap - w->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n <= 0)
            return 1;
        w->len += (size_t)n;
        return 0;   /* poll again: one read per wake-up is enough */
    }
}

int tsa_batch_run(char *const *jobs, size_t n, const tsa_batch_options *opt, tsa_batch_row *rows)
{
    int parallel = opt->parallel > 0 ? opt->parallel : 1;
    if (parallel > 256)
        parallel = 256;
    char **fps = calloc(n ? n : 1, sizeof *fps);
    size_t *todo = malloc((n ? n : 1) * sizeof *todo);
    worker *ws = calloc((size_t)parallel, sizeof *ws);
    struct pollfd *pfd = calloc((size_t)parallel, sizeof *pfd);
    int rc = -1;
    if (!fps || !todo || !ws || !pfd)
        goto out;
    /* A dead reader must not kill the batch: broken pipes become errors. */
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    size_t n_todo = 0, done = 0;
    for (size_t i = 0; i < n; i++) {
        fps[i] = tsa_batch_fingerprint(jobs[i]);
        if (opt->use_cache && fps[i] && tsa_batch_cache_load(jobs[i], fps[i], &rows[i])) {
            done++;
            continue;
        }
        todo[n_todo++] = i;
    }
    if (opt->progress && done)
        fprintf(stderr, "batch: %zu of %zu jobs up to date (summary files), %zu to analyse\n",
                done, n, n_todo);
    size_t next = 0, running = 0, finished = 0;
    while (finished < n_todo) {
        while (running < (size_t)parallel && next < n_todo) {
            int slot = 0;
            while (ws[slot].pid)
                slot++;
            if (start(&ws[slot], jobs[todo[next]], todo[next])) {
                if (running == 0) {
                    fprintf(stderr, "tscope-report: batch: cannot start a worker: %s\n",
                            strerror(errno));
                    signal(SIGPIPE, old_pipe);
                    goto out;
                }
                break;   /* retry when a worker is free */
            }
            next++;
            running++;
        }
        nfds_t np = 0;
        int map[256];
        double wait_s = 1.0, t = now_s();
        for (int s = 0; s < parallel && np < 256; s++)
            if (ws[s].pid) {
                pfd[np].fd = ws[s].fd;
                pfd[np].events = POLLIN;
                pfd[np].revents = 0;
                map[np++] = s;
                if (opt->timeout_s > 0) {
                    double left = ws[s].started + opt->timeout_s - t;
                    if (left < wait_s)
                        wait_s = left > 0 ? left : 0;
                }
            }
        int pr = poll(pfd, np, (int)(wait_s * 1000) + 1);
        if (pr < 0 && errno != EINTR) {
            signal(SIGPIPE, old_pipe);
            goto out;
        }
        t = now_s();
        for (nfds_t k = 0; k < np; k++) {
            worker *w = &ws[map[k]];
            int eof = 0, timed_out = 0;
            if (pr > 0 && pfd[k].revents)
                eof = drain(w);
            if (!eof && opt->timeout_s > 0 && t - w->started >= opt->timeout_s)
                timed_out = 1;
            if (eof || timed_out) {
                size_t job = w->job;
                finish(w, jobs, rows, timed_out, opt->timeout_s);
                running--;
                finished++;
                /* crashes and timeouts may be passing trouble: not cached */
                if (opt->write_cache && fps[job] &&
                    (!strcmp(rows[job].status, "ok") || !strcmp(rows[job].status, "partial") ||
                     !strcmp(rows[job].status, "failed")))
                    tsa_batch_cache_store(jobs[job], fps[job], &rows[job]);
                if (opt->progress)
                    fprintf(stderr, "batch: [%zu/%zu] %s: %s\n", finished, n_todo, tsr_vis(jobs[job]),
                            rows[job].status);
            }
        }
    }
    signal(SIGPIPE, old_pipe);
    rc = 0;
out:
    if (ws)
        for (int s = 0; s < parallel; s++)
            if (ws[s].pid) {
                kill(ws[s].pid, SIGKILL);
                waitpid(ws[s].pid, NULL, 0);
                close(ws[s].fd);
                free(ws[s].buf);
            }
    /* rows is zeroed by the caller: any still empty were never run */
    for (size_t i = 0; i < n; i++)
        if (!rows[i].job) {
            tsa_batch_row_init(&rows[i], jobs[i]);
            tsa_batch_row_fail(&rows[i], "failed", "not analysed: the batch stopped early");
        }
    if (fps)
        for (size_t i = 0; i < n; i++)
            free(fps[i]);
    free(fps);
    free(todo);
    free(ws);
    free(pfd);
    return rc;
}

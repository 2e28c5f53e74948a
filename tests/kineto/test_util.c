#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "test_util.h"

char *tu_tempdir(const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    char *path;
    if (asprintf(&path, "%s/tscope-views-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag) < 0)
        return NULL;
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

static void rm_level(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p;
        if (asprintf(&p, "%s/%s", dir, e->d_name) < 0)
            continue;
        struct stat st;
        if (!lstat(p, &st) && S_ISDIR(st.st_mode)) {
            if (depth < 4)
                rm_level(p, depth + 1);
            rmdir(p);
        } else
            unlink(p);
        free(p);
    }
    closedir(d);
}

void tu_rmtree(const char *dir)
{
    if (!dir)
        return;
    rm_level(dir, 0);
    rmdir(dir);
}

char *tu_read_file(const char *path, size_t *len)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf)
            break;
        if (n == cap) {
            char *p = realloc(buf, cap * 2 + 1);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
        int r = gzread(gz, buf + n, (unsigned)(cap - n));
        if (r < 0) {
            free(buf);
            buf = NULL;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    gzclose(gz);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

int tu_write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

int tu_capture(int (*cmd)(int, char **), int argc, char **argv, char **out)
{
    char *dir = tu_tempdir("cap");
    char *path;
    if (!dir || asprintf(&path, "%s/out", dir) < 0)
        return -1;
    fflush(stdout);
    int saved = dup(1);
    FILE *f = fopen(path, "w");
    dup2(fileno(f), 1);
    int rc = cmd(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    fclose(f);
    *out = tu_read_file(path, NULL);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
    return rc;
}

int tu_status(int (*cmd)(int, char **), char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    char *out = NULL;
    int rc = tu_capture(cmd, argc, argv, &out);
    free(out);
    return rc;
}

/* The per-job summary file: the row plus a fingerprint of the inputs
 * (names, sizes, mtimes, change times, permissions and readability of the
 * dumps or traces) and a schema version, so a re-run skips jobs that have
 * not changed and never trusts a file written by a different layout or
 * tscope version.  A job directory is untrusted: the summary is read
 * without following links or blocking on FIFOs, and written through a
 * fresh temporary (O_EXCL) in the same directory. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "util/vec.h"
#include "util/cmp.h"

#define MAX_SUMMARY_BYTES (1u << 20)

static int is_input(const char *name)
{
    return name[0] != '.' &&
           (tsa_ends_with(name, ".tsd") || tsa_ends_with(name, ".json") || tsa_ends_with(name, ".json.gz"));
}

char *tsa_batch_fingerprint(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **lines = NULL;
    size_t n = 0, cap = 0, total = 1;
    int failed = 0;
    struct dirent *e;
    while (!failed && (e = readdir(d))) {
        if (!is_input(e->d_name))
            continue;
        char *path, *line;
        struct stat st;
        if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
            failed = 1;
            break;
        }
        int ok = !stat(path, &st) && S_ISREG(st.st_mode);
        /* permissions and readability too: a file made readable again
         * (chmod changes neither size nor mtime) is analysed anew */
        int readable = ok && !access(path, R_OK);
        free(path);
        if (!ok)
            continue;
        int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        int64_t ctime = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
        if (asprintf(&line, "%s %lld %" PRId64 " %" PRId64 " %o %d", e->d_name,
                     (long long)st.st_size, mtime, ctime, (unsigned)(st.st_mode & 07777),
                     readable) < 0 ||
            TSA_VEC_PUSH(lines, n, cap, line)) {
            failed = 1;
            break;
        }
        total += strlen(line) + 1;
    }
    closedir(d);
    char *fp = failed ? NULL : malloc(total);
    if (fp) {
        if (n > 1)
            qsort(lines, n, sizeof *lines, tsa_cmp_str);
        fp[0] = '\0';
        size_t pos = 0;
        for (size_t i = 0; i < n; i++)
            pos += (size_t)sprintf(fp + pos, "%s\n", lines[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    return fp;
}

static char *summary_path(const char *dir)
{
    char *p;
    return asprintf(&p, "%s/%s", dir, TSA_BATCH_SUMMARY_FILE) < 0 ? NULL : p;
}

/* The summary's text, or NULL.  Only a regular file, not through a
 * symlink, never blocking (a FIFO planted under the name would otherwise
 * hang the whole batch before any worker, past --timeout), bounded. */
static char *read_small(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size <= MAX_SUMMARY_BYTES)
        buf = malloc(MAX_SUMMARY_BYTES + 1);
    size_t n = 0;
    while (buf && n <= MAX_SUMMARY_BYTES) {
        ssize_t r = read(fd, buf + n, MAX_SUMMARY_BYTES + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (!buf || n > MAX_SUMMARY_BYTES) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* Write text to a fresh temporary beside path and rename it over path:
 * a reader never sees half a file, and nothing planted in the (untrusted)
 * directory is followed or overwritten (mkstemp opens with O_EXCL). */
static int write_atomically(const char *path, const char *text)
{
    char *tmp;
    if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
        return -1;
    int rc = -1, fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0) {
        size_t len = strlen(text), done = 0;
        while (done < len) {
            ssize_t w = write(fd, text + done, len - done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            done += (size_t)w;
        }
        int ok = done == len && !fchmod(fd, 0644);
        if (!close(fd) && ok && !rename(tmp, path))
            rc = 0;
        else
            unlink(tmp);
    }
    free(tmp);
    return rc;
}

int tsa_batch_cache_load(const char *dir, const char *fingerprint, tsa_batch_row *row)
{
    char *path = summary_path(dir);
    char *text = path ? read_small(path) : NULL;
    free(path);
    if (!text)
        return 0;
    cJSON *root = cJSON_Parse(text);
    free(text);
    int hit = 0;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "tscope_version");
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    if (cJSON_IsNumber(schema) && schema->valueint == TSA_BATCH_SUMMARY_SCHEMA &&
        cJSON_IsString(version) && !strcmp(version->valuestring, TSC_VERSION) &&
        cJSON_IsString(inputs) && !strcmp(inputs->valuestring, fingerprint)) {
        tsa_batch_row tmp;
        if (!tsa_batch_row_from_json(cJSON_GetObjectItemCaseSensitive(root, "row"), dir, &tmp)) {
            tmp.cached = 1;
            *row = tmp;
            hit = 1;
        } else
            tsa_batch_row_free(&tmp);
    }
    cJSON_Delete(root);
    return hit;
}

int tsa_batch_cache_store(const char *dir, const char *fingerprint, const tsa_batch_row *row)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return -1;
    cJSON_AddNumberToObject(root, "schema", TSA_BATCH_SUMMARY_SCHEMA);
    cJSON_AddStringToObject(root, "tscope_version", TSC_VERSION);
    cJSON_AddStringToObject(root, "inputs", fingerprint);
    cJSON *r = tsa_batch_row_to_json(row);
    if (r)
        cJSON_AddItemToObject(root, "row", r);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    char *path = summary_path(dir);
    int rc = text && path ? write_atomically(path, text) : -1;
    free(path);
    free(text);
    return rc;
}

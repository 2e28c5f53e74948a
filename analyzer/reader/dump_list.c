/* Finding the dumps of a job directory, in rank order for people. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dump_reader.h"

/* strcmp, except that runs of digits compare by value, so r2 < r10. */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            size_t la = 0, lb = 0;
            while (isdigit((unsigned char)a[la]))
                la++;
            while (isdigit((unsigned char)b[lb]))
                lb++;
            if (la != lb)
                return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c)
                return c;
            a += la;
            b += lb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

static int cmp_paths(const void *x, const void *y)
{
    const char *a = *(const char *const *)x, *b = *(const char *const *)y;
    int c = natural_cmp(a, b);
    return c ? c : strcmp(a, b);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

/* Append a copy of s to a NULL-terminated growing list. */
static int push(char ***list, size_t *n, size_t *cap, char *s)
{
    if (!s)
        return -ENOMEM;
    if (*n + 2 > *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        char **l = realloc(*list, c * sizeof *l);
        if (!l) {
            free(s);
            return -ENOMEM;
        }
        *list = l;
        *cap = c;
    }
    (*list)[(*n)++] = s;
    (*list)[*n] = NULL;
    return 0;
}

int tsr_list_dumps(const char *dir, char ***paths, size_t *n)
{
    *paths = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    char **list = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    size_t dlen = strlen(dir);
    int slash = dlen > 0 && dir[dlen - 1] == '/';
    while ((e = readdir(d)) != NULL) {
        if (!has_suffix(e->d_name, TSC_DUMP_SUFFIX))
            continue;
        char *p = NULL;
        if (asprintf(&p, "%s%s%s", dir, slash ? "" : "/", e->d_name) < 0) {
            rc = -ENOMEM;
            break;
        }
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(p);
            continue;
        }
        if ((rc = push(&list, &count, &cap, p)) != 0)
            break;
    }
    closedir(d);
    if (rc != 0) {
        tsr_free_paths(list, count);
        return rc;
    }
    if (count)
        qsort(list, count, sizeof *list, cmp_paths);
    *paths = list;
    *n = count;
    return 0;
}

int tsr_expand_inputs(char *const *args, size_t n_args, char ***paths, size_t *n, FILE *err,
                      size_t *n_errors)
{
    char **list = NULL;
    size_t count = 0, cap = 0;
    *paths = NULL;
    *n = 0;
    for (size_t i = 0; i < n_args; i++) {
        struct stat st;
        if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            char **found;
            size_t nf;
            int rc = tsr_list_dumps(args[i], &found, &nf);
            if (rc == -ENOMEM)
                goto oom;
            if (rc != 0 || nf == 0) {
                if (err)
                    fprintf(err, "%s: %s\n", args[i],
                            rc ? strerror(-rc) : "no dump files (*" TSC_DUMP_SUFFIX ") here");
                if (n_errors)
                    (*n_errors)++;
                tsr_free_paths(found, nf);
                continue;
            }
            for (size_t j = 0; j < nf; j++) {
                if (push(&list, &count, &cap, found[j]) != 0) {
                    for (size_t k = j + 1; k < nf; k++)
                        free(found[k]);
                    free(found);
                    goto oom;
                }
            }
            free(found);
        } else if (push(&list, &count, &cap, strdup(args[i])) != 0) {
            goto oom;
        }
    }
    *paths = list;
    *n = count;
    return 0;
oom:
    tsr_free_paths(list, count);
    return -ENOMEM;
}

void tsr_free_paths(char **paths, size_t n)
{
    if (!paths)
        return;
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

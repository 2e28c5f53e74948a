/* Sets of ranks and their compact text form ("ranks 0,2-5,9"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/job_build.h"
#include "hang.h"

int tsa_rank_list_add(tsa_rank_list *l, int32_t rank)
{
    if (tsa_grow((void **)&l->v, l->n, &l->cap, sizeof *l->v))
        return -1;
    l->v[l->n++] = rank;
    return 0;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

void tsa_rank_list_sort(tsa_rank_list *l)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, cmp_i32);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (k == 0 || l->v[i] != l->v[k - 1])
            l->v[k++] = l->v[i];
    l->n = k;
}

void tsa_rank_list_free(tsa_rank_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

char *tsa_rank_list_format(const tsa_rank_list *l, char *buf, size_t cap)
{
    if (!cap)
        return buf;
    if (!l->n) {
        snprintf(buf, cap, "-");
        return buf;
    }
    size_t len = (size_t)snprintf(buf, cap, "%s ", l->n == 1 ? "rank" : "ranks");
    for (size_t i = 0; i < l->n && len < cap;) {
        size_t j = i;
        while (j + 1 < l->n && l->v[j + 1] == l->v[j] + 1)
            j++;
        char part[32];
        if (j == i)
            snprintf(part, sizeof part, "%s%d", i ? "," : "", l->v[i]);
        else
            snprintf(part, sizeof part, "%s%d-%d", i ? "," : "", l->v[i], l->v[j]);
        size_t pl = strlen(part);
        if (len + pl + 4 >= cap) {
            snprintf(buf + len, cap - len, ",...");
            break;
        }
        memcpy(buf + len, part, pl + 1);
        len += pl;
        i = j + 1;
    }
    return buf;
}

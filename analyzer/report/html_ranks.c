/* The blamed rank and analysed steps of the HTML rank charts (html_ranks.h). */
#include "html_ranks.h"

long tsa_html_blamed_index(const tsa_analysis *a)
{
    int32_t rank = a->verdict_rank;
    if (rank < 0 && a->have_xrank && a->xrank.straggler)
        rank = a->xrank.straggler->rank;
    for (size_t i = 0; rank >= 0 && i < a->job->n_ranks; i++)
        if (a->job->ranks[i].rank == rank)
            return (long)i;
    return -1;
}

long tsa_html_analysed_step(const tsa_rank *r, size_t k)
{
    size_t i = 0;
    while (i < r->n_steps && r->steps[i].warmup)
        i++;
    return i + k < r->n_steps ? (long)(i + k) : -1;
}

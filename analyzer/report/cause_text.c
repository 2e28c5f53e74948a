/* The CAUSE section of the terminal report. */
#include "cause_render.h"

#include "reader/text_visible.h"

void tsa_cause_print(FILE *out, const tsa_cause_result *r)
{
    for (size_t i = 0; i < r->n_blocks; i++) {
        const tsa_cause_block *b = &r->blocks[i];
        if (b->rank >= 0)
            fprintf(out, "  rank %d (%s), %s:", b->rank, tsr_vis(b->host ? b->host : "?"),
                    b->blamed_as);
        else
            fprintf(out, "  host %s, %s:", tsr_vis(b->host ? b->host : "?"), b->blamed_as);
        fprintf(out, " work %.3f ms per step vs %.3f ms on %zu peers (%+.3f ms)\n",
                (double)b->step_ns / 1e6, (double)b->peer_step_ns / 1e6, b->peers,
                (double)b->extra_ns / 1e6);
        if (!b->n_causes)
            fprintf(out, "    cause unknown: no recorded figure explains it\n");
        for (size_t k = 0; k < b->n_causes; k++) {
            const tsa_cause *c = &b->causes[k];
            fprintf(out, "    %zu. %-10s explains %.3f ms per step (%.0f%%): %s\n", k + 1,
                    tsa_cause_kind_name(c->kind), (double)c->explained_ns / 1e6, 100 * c->share,
                    c->evidence);
            fprintf(out, "       fix: %s\n", c->fix);
        }
        fprintf(out, "    checked: %s\n", b->checked);
    }
}

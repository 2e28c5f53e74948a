/* Two runs on one page (diff --html): the budget lines of A and B as
 * paired bars in ms per rank-step, then every row of the diff in a table.
 * The numbers are the text diff's (diff.h); this only draws them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "html_charts.h"
#include "html_escape.h"
#include "svg_chart.h"

static void budget_pairs(FILE *out, const tsa_diff *d)
{
    size_t n = 0;
    double max = 0;
    for (size_t i = 0; i < d->n_rows; i++) {
        const tsa_diff_row *r = &d->rows[i];
        if (strcmp(r->section, "budget"))
            continue;
        n++;
        if (r->a > max)
            max = r->a;
        if (r->b > max)
            max = r->b;
    }
    char reading[320];
    snprintf(reading, sizeof reading, "%s",
             d->changed_most[0] ? d->changed_most : "Nothing changed enough to name.");
    int row = 34;
    tsa_svg s;
    tsa_svg_begin(&s, out, "diff-budget", "Budget lines, A against B (ms per rank-step)",
                  reading, 760, 24 + row * (int)(n ? n : 1) + 44, 180, 24, 150, 44);
    double top = tsa_svg_nice_max(max);
    size_t k = 0;
    for (size_t i = 0; i < d->n_rows; i++) {
        const tsa_diff_row *r = &d->rows[i];
        if (strcmp(r->section, "budget"))
            continue;
        int y = s.top + (int)k++ * row;
        fprintf(out, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", s.left - 6,
                y + 19);
        tsa_html_escape(out, r->name);
        fprintf(out, "</text>");
        const double v[2] = {r->a, r->b};
        for (int side = 0; side < 2; side++) {
            double x1 = tsa_svg_x(&s, isnan(v[side]) ? 0 : v[side], top);
            fprintf(out, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"12\"/>"
                         "<text x=\"%.1f\" y=\"%d\">%s %.4g</text>",
                    side ? "loss" : "neutral", s.left, y + 3 + side * 14, x1 - s.left, x1 + 4,
                    y + 13 + side * 14, side ? "B" : "A", isnan(v[side]) ? 0 : v[side]);
        }
        fputc('\n', out);
    }
    tsa_svg_x_axis(&s, top, 1, "ms per rank-step");
    tsa_svg_end(&s);
}

void tsa_diff_print_html(FILE *out, const tsa_diff_side *a, const tsa_diff_side *b,
                         const tsa_diff *d)
{
    tsa_html_page_begin(out, "tscope diff");
    fprintf(out, "<header><h1>tscope diff</h1>\n<p class=\"facts\">A: ");
    tsa_html_escape(out, a->label);
    char steps[48];
    tsa_html_escapef(out, " (%zu ranks, %s, device %s)", a->ranks,
                     tsa_diff_steps_text(steps, sizeof steps, a), a->device ? a->device : "unknown");
    fprintf(out, "<br>B: ");
    tsa_html_escape(out, b->label);
    tsa_html_escapef(out, " (%zu ranks, %s, device %s)", b->ranks,
                     tsa_diff_steps_text(steps, sizeof steps, b), b->device ? b->device : "unknown");
    fprintf(out, "</p>\n<p class=\"verdict\" id=\"verdict\">");
    if (isnan(d->speedup))
        fprintf(out, "speed-up unknown");
    else
        fprintf(out, "B runs at %.3gx the speed of A (median step A / B)", d->speedup);
    fprintf(out, "</p></header>\n<main>\n");
    budget_pairs(out, d);
    fprintf(out, "<table id=\"diff-rows\"><caption>Every row (A, B, B - A)</caption>"
                 "<tr><th>section</th><th>row</th><th>A</th><th>B</th><th>B - A</th></tr>\n");
    for (size_t i = 0; i < d->n_rows; i++) {
        const tsa_diff_row *r = &d->rows[i];
        fprintf(out, "<tr><td>%s</td><td class=\"name\">", r->section);
        tsa_html_escape(out, r->name);
        fprintf(out, "</td>");
        const double v[3] = {r->a, r->b, r->b - r->a};
        for (int c = 0; c < 3; c++) {
            if (isnan(v[c]))
                fprintf(out, "<td>-</td>");
            else if (r->unit == TSA_DIFF_SHARE)
                fprintf(out, "<td>%.2f%%</td>", 100 * v[c]);
            else
                fprintf(out, "<td>%.4g</td>", v[c]);
        }
        fprintf(out, "</tr>\n");
    }
    fprintf(out, "</table>\n<p class=\"facts\">Times in ms per rank-step (a line's time / ranks "
                 "/ analysed steps), so runs of different size compare; bandwidths in GB/s."
                 "</p></main></body></html>\n");
}

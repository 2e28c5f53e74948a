/* Horizontal bar chart (html_bar_chart.h). */
#include <stdlib.h>

#include "html_bar_chart.h"
#include "html_escape.h"
#include "svg_chart.h"

int tsa_html_bar_cmp(const void *x, const void *y)
{
    const tsa_html_bar *a = x, *b = y;
    return a->v < b->v ? 1 : a->v > b->v ? -1 : 0;
}

void tsa_html_bar_chart(FILE *out, const tsa_html_bar_spec *spec, tsa_html_bar *bars, size_t n)
{
    qsort(bars, n, sizeof *bars, tsa_html_bar_cmp);
    int row = 22;
    tsa_svg s;
    tsa_svg_begin(&s, out, spec->id, spec->title, spec->reading, 760,
                  24 + row * (int)(n ? n : 1) + 44, 180, 24, 200, 44);
    double max = tsa_svg_nice_max(n ? bars[0].v : 1);
    for (size_t i = 0; i < n; i++) {
        int y = s.top + (int)i * row;
        double x1 = tsa_svg_x(&s, bars[i].v, max);
        fprintf(out, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", s.left - 6,
                y + 15);
        tsa_html_escape(out, bars[i].label);
        fprintf(out, "</text><rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
                     "height=\"%d\"/><text x=\"%.1f\" y=\"%d\">",
                bars[i].cls ? bars[i].cls : "neutral", s.left, y + 3, x1 - s.left, row - 6,
                x1 + 4, y + 15);
        if (spec->integer)
            tsa_html_escapef(out, "%.0f %s %s", bars[i].v,
                             bars[i].v == 1 && spec->unit_one ? spec->unit_one : spec->unit,
                             bars[i].note);
        else
            tsa_html_escapef(out, "%.4g %s %s", bars[i].v, spec->unit, bars[i].note);
        fprintf(out, "</text>\n");
    }
    if (!n) {
        fprintf(out, "<text class=\"nm\" x=\"%d\" y=\"%d\">", s.left, s.top + 15);
        tsa_html_escape(out, spec->empty);
        fprintf(out, "</text>\n");
    }
    tsa_svg_x_axis(&s, max, 1, spec->axis);
    tsa_svg_end(&s);
}

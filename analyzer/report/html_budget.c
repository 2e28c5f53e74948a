/* The efficiency budget as a waterfall (html_charts.h): each line's bar
 * starts where the previous one ended, so the last one ends at wall, as
 * the lines sum to wall exactly.  data-ns holds each bar's exact job sum. */
#include <stdio.h>

#include "html_charts.h"
#include "html_escape.h"
#include "idle_report.h"
#include "svg_chart.h"

void tsa_html_budget(FILE *out, const tsa_analysis *a)
{
    const tsa_budget *b = &a->budget;
    double per = a->n_ranks ? (double)a->n_ranks : 1;
    double wall_s = (double)b->wall_ns / per / 1e9;
    int top = -1;
    for (int l = 0; l < TSA_BL_COUNT; l++)
        if (tsa_budget_line_recoverable((tsa_budget_line)l) &&
            tsa_line_measured(a, (tsa_budget_line)l) &&
            (top < 0 || b->line_ns[l] > b->line_ns[top]))
            top = l;
    char reading[256];
    if (top >= 0 && b->wall_ns > 0 && b->line_ns[top] > 0)
        snprintf(reading, sizeof reading,
                 "Per rank, the lines add up to wall (%.3f s). The largest recoverable line is "
                 "%s: %.1f%% of wall.", wall_s, tsa_budget_line_label((tsa_budget_line)top),
                 100.0 * (double)b->line_ns[top] / (double)b->wall_ns);
    else
        snprintf(reading, sizeof reading,
                 "Per rank, the lines add up to wall (%.3f s); no recoverable time measured.",
                 wall_s);
    int row = 24, n_rows = TSA_BL_COUNT + 1;
    tsa_svg s;
    tsa_svg_begin(&s, out, "budget-waterfall", "Efficiency budget (waterfall to wall)", reading,
                  760, 30 + row * n_rows + 44, 180, 20, 130, 44);
    double max = tsa_svg_nice_max(wall_s);
    double cum = 0;
    for (int l = 0; l <= TSA_BL_COUNT; l++) {
        int wall_row = l == TSA_BL_COUNT;
        double v = wall_row ? wall_s : (double)b->line_ns[l] / per / 1e9;
        double x0 = tsa_svg_x(&s, wall_row ? 0 : cum, max);
        double x1 = tsa_svg_x(&s, wall_row ? v : cum + v, max);
        int y = s.top + l * row;
        int measured = wall_row || tsa_line_measured(a, (tsa_budget_line)l);
        const char *cls = wall_row ? "wall"
                          : !measured ? "nm"
                          : l == TSA_BL_USEFUL ? "good"
                          : tsa_budget_line_recoverable((tsa_budget_line)l) ? "loss"
                                                                            : "neutral";
        const char *label = wall_row ? "wall" : tsa_budget_line_label((tsa_budget_line)l);
        long long ns = (long long)(wall_row ? b->wall_ns : b->line_ns[l]);
        fprintf(out, "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>",
                s.left - 6, y + 15, label);
        fprintf(out, "<rect class=\"%s\" data-line=\"%s\" data-ns=\"%lld\" x=\"%.1f\" y=\"%d\" "
                     "width=\"%.1f\" height=\"%d\"><title>%s: %.6g s per rank</title></rect>",
                cls, wall_row ? "wall" : tsa_budget_line_name((tsa_budget_line)l), ns, x0, y + 3,
                x1 - x0 < 0.5 && ns > 0 ? 0.5 : x1 - x0, row - 6, label, v);
        double share = b->wall_ns > 0 ? 100.0 * (double)ns / (double)b->wall_ns : 0;
        if (measured)
            fprintf(out, "<text x=\"%d\" y=\"%d\">%.3f s  %.1f%%</text>\n", s.right + 6, y + 15,
                    v, share);
        else
            fprintf(out, "<text class=\"nm\" x=\"%d\" y=\"%d\">not measured</text>\n",
                    s.right + 6, y + 15);
        if (!wall_row)
            cum += v;
    }
    tsa_svg_x_axis(&s, max, 1, "seconds per rank (analysis window)");
    tsa_svg_end(&s);
}

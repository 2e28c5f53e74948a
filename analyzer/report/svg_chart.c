/* Chart frame and axis (svg_chart.h). */
#include <math.h>
#include <stdio.h>

#include "html_escape.h"
#include "svg_chart.h"

void tsa_svg_begin(tsa_svg *s, FILE *out, const char *id, const char *title,
                   const char *reading, int width, int height, int left, int top, int right,
                   int bottom)
{
    *s = (tsa_svg){out, width, height, left, width - right, top, height - bottom};
    fprintf(out, "<figure class=\"chart\"><figcaption><h3>");
    tsa_html_escape(out, title);
    fprintf(out, "</h3><p class=\"reading\">");
    tsa_html_escape(out, reading);
    fprintf(out, "</p></figcaption>\n<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
                 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>",
            id, width, height, width, height);
    tsa_html_escape(out, title);
    fprintf(out, "</title>\n");
}

void tsa_svg_end(const tsa_svg *s)
{
    fprintf(s->out, "</svg></figure>\n");
}

double tsa_svg_x(const tsa_svg *s, double v, double max)
{
    if (!(max > 0) || !(v > 0))
        return s->left;
    if (v > max)
        v = max;
    return s->left + (s->right - s->left) * v / max;
}

double tsa_svg_y(const tsa_svg *s, double v, double max)
{
    if (!(max > 0) || !(v > 0))
        return s->bottom;
    if (v > max)
        v = max;
    return s->bottom - (s->bottom - s->top) * v / max;
}

/* The smallest of steps[] x 10^k that holds v. */
static double round_up(double v, const double *steps, size_t n)
{
    if (!(v > 0) || !isfinite(v))
        return 1;
    double p = pow(10, floor(log10(v)));
    for (size_t i = 0; i < n; i++)
        if (v <= steps[i] * p * (1 + 1e-9))
            return steps[i] * p;
    return 10 * p;
}

double tsa_svg_nice_max(double v)
{
    static const double steps[] = {1, 2, 2.5, 5, 10};
    return round_up(v, steps, sizeof steps / sizeof steps[0]);
}

double tsa_svg_nice_max_fine(double v)
{
    static const double steps[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
    return round_up(v, steps, sizeof steps / sizeof steps[0]);
}

/* One axis from 0 to max with six ticks; vertical: left of the plot, the
 * unit turned along it; else under the plot. */
static void axis(const tsa_svg *s, double max, double scale, const char *unit, int vertical)
{
    FILE *out = s->out;
    fprintf(out, "<g class=\"axis\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", s->left,
            vertical ? s->top : s->bottom, vertical ? s->left : s->right, s->bottom);
    for (int i = 0; i <= 5; i++) {
        double v = max * i / 5;
        /* The tick's end on the plot, its other end, and the label's anchor. */
        double x = vertical ? s->left : tsa_svg_x(s, v, max);
        double y = vertical ? tsa_svg_y(s, v, max) : s->bottom;
        double dx = vertical ? -4 : 0, dy = vertical ? 0 : 4;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%.4g</text>\n",
                x + dx, y + dy, x, y, vertical ? x - 6 : x, vertical ? y + 4 : y + 16,
                vertical ? "end" : "middle", v * scale);
    }
    if (vertical)
        fprintf(out, "<text class=\"unit\" transform=\"translate(%d %d) rotate(-90)\" "
                     "text-anchor=\"middle\">", s->left - 44, (s->top + s->bottom) / 2);
    else
        fprintf(out, "<text class=\"unit\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
                (s->left + s->right) / 2, s->bottom + 32);
    tsa_html_escape(out, unit);
    fprintf(out, "</text></g>\n");
}

void tsa_svg_x_axis(const tsa_svg *s, double max, double scale, const char *unit)
{
    axis(s, max, scale, unit, 0);
}

void tsa_svg_y_axis(const tsa_svg *s, double max, double scale, const char *unit)
{
    axis(s, max, scale, unit, 1);
}

void tsa_svg_ramp(char *buf, size_t cap, double t)
{
    /* Pale yellow to dark blue through teal: ordered in lightness, so it
     * reads in grey too. */
    static const double stops[3][3] = {{255, 247, 188}, {65, 182, 196}, {8, 29, 88}};
    if (!(t >= 0))
        t = 0;
    if (t > 1)
        t = 1;
    int i = t < 0.5 ? 0 : 1;
    double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = (int)lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * u);
    snprintf(buf, cap, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* The frame every chart of the HTML report shares: a figure with a title,
 * a one-line reading under it, an inline SVG with a fixed plot area, and a
 * numeric axis with round ticks.  Charts draw their marks between
 * tsa_svg_begin and tsa_svg_end. */
#ifndef TSA_SVG_CHART_H
#define TSA_SVG_CHART_H

#include <stdio.h>

typedef struct tsa_svg {
    FILE *out;
    int width, height;          /* of the SVG, px */
    int left, right, top, bottom; /* plot area edges, px */
} tsa_svg;

/* Opens <figure> with the title and reading (both escaped) and <svg id=id>
 * of width x height; the plot area is inset by left/top/right/bottom. */
void tsa_svg_begin(tsa_svg *s, FILE *out, const char *id, const char *title,
                   const char *reading, int width, int height, int left, int top, int right,
                   int bottom);
void tsa_svg_end(const tsa_svg *s);

/* x position of v on a linear axis 0..max over the plot area. */
double tsa_svg_x(const tsa_svg *s, double v, double max);

/* A horizontal axis under the plot area from 0 to max with about five
 * round ticks, labelled in `unit` (value shown = v * scale). */
void tsa_svg_x_axis(const tsa_svg *s, double max, double scale, const char *unit);

/* y position of v on a linear axis 0..max, 0 at the plot's bottom. */
double tsa_svg_y(const tsa_svg *s, double v, double max);

/* A vertical axis left of the plot area from 0 to max, five ticks,
 * labelled in `unit` (value shown = v * scale). */
void tsa_svg_y_axis(const tsa_svg *s, double max, double scale, const char *unit);

/* A round upper bound for an axis holding v (1, 2, 2.5, 5 x 10^k). */
double tsa_svg_nice_max(double v);

/* The same with finer steps (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k),
 * for a time axis that should not leave most of its length empty; the
 * five ticks stay round (0.24, 0.3, 0.4, ...). */
double tsa_svg_nice_max_fine(double v);

/* A fill colour for t in 0..1 on a light-to-dark sequential scale. */
void tsa_svg_ramp(char *buf, size_t cap, double t);

#endif

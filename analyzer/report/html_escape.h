/* Text into HTML and SVG: every name that comes from a dump or a trace
 * (kernels, hosts, run ids, finding titles that quote them) is untrusted
 * and goes out through these, so no input can open a tag or an attribute. */
#ifndef TSA_HTML_ESCAPE_H
#define TSA_HTML_ESCAPE_H

#include <stdio.h>

/* s with & < > " ' as character references (NULL writes nothing). */
void tsa_html_escape(FILE *out, const char *s);

/* printf, then escaped as above. */
void tsa_html_escapef(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

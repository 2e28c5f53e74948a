/* Numbers given to command-line options of the commands (trace, diff,
 * batch): the whole argument must be the number. */
#ifndef TSA_CLI_NUMBER_H
#define TSA_CLI_NUMBER_H

/* Base-10 integer in [lo, hi] into *out; -1 (out untouched) otherwise. */
int tsa_cli_long(const char *s, long lo, long hi, long *out);

/* A number strtod reads, whole, into *out; -1 (out untouched) otherwise.
 * The caller checks the range. */
int tsa_cli_double(const char *s, double *out);

#endif

/* Command-line handling shared by the reader's commands (info, dump):
 * DIR|FILE... inputs with boolean flags before or after them, "--" ending
 * the options, expanded into the dump paths to read. */
#ifndef TSR_READER_CLI_H
#define TSR_READER_CLI_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

typedef struct tsr_cli_flag {
    const char *name;   /* e.g. "--json" */
    int *set;           /* set to 1 when given */
} tsr_cli_flag;

typedef struct tsr_cli {
    const char *command;          /* for messages: "dump" */
    const tsr_cli_flag *flags;    /* terminated by {NULL, NULL} */
    void (*usage)(FILE *out);
} tsr_cli;

/* Parses argv[1..] and expands the inputs.  Returns -1 with *paths and *n set
 * (free with tsr_free_paths; *n_errors counts inputs that could not be
 * expanded) when the command should go on, else the exit status to return:
 * 0 after --help, 2 on a usage error or out of memory. */
int tsr_cli_parse(const tsr_cli *cli, int argc, char **argv, char ***paths, size_t *n,
                  size_t *n_errors);

/* Prints an info-style result: root as JSON with json, else print_one for
 * each member of root's "files" array, a blank line between them. */
void tsr_cli_print_files(const cJSON *root, int json, void (*print_one)(FILE *, const cJSON *));

#endif

#include "reader_cli.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reader/dump_reader.h"

/* 1 when arg named a flag (and set it), 0 otherwise. */
static int take_flag(const tsr_cli_flag *flags, const char *arg)
{
    for (const tsr_cli_flag *f = flags; f && f->name; f++)
        if (!strcmp(arg, f->name)) {
            *f->set = 1;
            return 1;
        }
    return 0;
}

int tsr_cli_parse(const tsr_cli *cli, int argc, char **argv, char ***paths, size_t *n,
                  size_t *n_errors)
{
    char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    if (!inputs)
        return 2;
    size_t n_in = 0;
    int only_inputs = 0, status = -1;
    for (int i = 1; i < argc && status < 0; i++) {
        const char *a = argv[i];
        if (only_inputs || a[0] != '-' || !a[1])
            inputs[n_in++] = argv[i];
        else if (take_flag(cli->flags, a))
            continue;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli->usage(stdout);
            status = 0;
        } else if (!strcmp(a, "--"))
            only_inputs = 1;
        else {
            fprintf(stderr, "tscope-report %s: unknown option %s\n", cli->command, a);
            cli->usage(stderr);
            status = 2;
        }
    }
    if (status < 0 && n_in == 0) {
        cli->usage(stderr);
        status = 2;
    }
    if (status < 0) {
        *n_errors = 0;
        if (tsr_expand_inputs(inputs, n_in, paths, n, stderr, n_errors) != 0) {
            fprintf(stderr, "tscope-report %s: out of memory\n", cli->command);
            status = 2;
        }
    }
    free(inputs);
    return status;
}

void tsr_cli_print_files(const cJSON *root, int json, void (*print_one)(FILE *, const cJSON *))
{
    if (json) {
        char *s = cJSON_Print(root);
        if (s)
            puts(s);
        free(s);
        return;
    }
    const cJSON *o;
    int first = 1;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(root, "files"))
    {
        if (!first)
            putchar('\n');
        first = 0;
        print_one(stdout, o);
    }
}

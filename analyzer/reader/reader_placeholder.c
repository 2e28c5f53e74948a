/* Placeholder until this part lands; replaced by the real commands. */
#include <stdio.h>
#include "commands.h"
int tsa_cmd_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tscope-report: not available yet\n");
    return 2;
}
int tsa_cmd_dump(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tscope-report: not available yet\n");
    return 2;
}

/* Sub-commands of tscope-report, one file each (the table is in
 * analyzer/main.c).  Each returns the process exit status:
 * 0 success, 1 the input had problems but a result was produced,
 * 2 usage error or nothing could be read. */
#ifndef TSA_COMMANDS_H
#define TSA_COMMANDS_H

int tsa_cmd_report(int argc, char **argv); /* cmd_report.c: default command */
int tsa_cmd_info(int argc, char **argv);   /* cmd_info.c */
/* `info` as the tool runs it: torch.profiler traces (cmd_info_kineto.c),
 * else tsa_cmd_info. */
int tsa_cmd_info_any(int argc, char **argv);
int tsa_cmd_dump(int argc, char **argv);   /* cmd_dump.c */
int tsa_cmd_trace(int argc, char **argv);  /* cmd_trace.c */
int tsa_cmd_diff(int argc, char **argv);   /* cmd_diff.c */
int tsa_cmd_batch(int argc, char **argv);  /* cmd_batch.c */
/* `tscope-report batch merge FILE... [--top N]` (cmd_batch passes it on). */
int tsa_cmd_batch_merge(int argc, char **argv);
int tsa_cmd_hang(int argc, char **argv);   /* cmd_hang.c */
int tsa_cmd_html(int argc, char **argv);   /* cmd_html.c */
int tsa_cmd_blackbox(int argc, char **argv); /* cmd_blackbox.c */
int tsa_cmd_live(int argc, char **argv);     /* cmd_live.c */

#endif

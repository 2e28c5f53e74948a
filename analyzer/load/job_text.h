/* The model's strings made safe once, where a loaded job enters the
 * analysis (issue 13 items 4 and 5). */
#ifndef TSA_JOB_TEXT_H
#define TSA_JOB_TEXT_H

#include "model/model.h"

/* Every string of the job (directory, run ids, problems, hosts, devices,
 * command lines, files, interned names) as visible, valid UTF-8: invalid
 * bytes become '?', control characters "\xNN" (text_visible.h).  Text and
 * JSON outputs built from the model can then neither carry escape
 * sequences to a terminal nor be refused by a strict JSON parser.
 * Returns 0, or -1 out of memory (the job stays usable). */
int tsa_job_make_text_visible(tsa_job *job);

#endif

/* The process room's own moments (lifecycle.c), for the parts table. */
#ifndef TSC_PROCESS_H
#define TSC_PROCESS_H

/* At the recorder's set-up: install the signal handlers. */
void tsc_lifecycle_on_setup(void);

#endif

/* The optional HTTP /metrics endpoint of black-box mode
 * (TSCOPE_METRICS_PORT): the writer thread serves the rank's metrics file
 * to scrapers.  Port = TSCOPE_METRICS_PORT + local rank (ranks of a host
 * cannot share one port), on 127.0.0.1 unless TSCOPE_METRICS_ADDR names
 * another address (an explicit choice: the figures say what the job does).
 * One request at a time, short timeouts: a slow client costs the writer at
 * most ~200 ms, never the job's threads. */
#ifndef TSC_BB_HTTP_H
#define TSC_BB_HTTP_H

/* Listen; the socket, or -1 (said once: port in use, bad address). */
int bb_http_listen(unsigned port, int local_rank);

/* A client is waiting on fd: answer it with the file at path. */
void bb_http_serve(int fd, const char *path);

#endif

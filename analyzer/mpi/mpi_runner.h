/* The per-rank stages over MPI (stage_pack.h says what travels).
 *
 * Process 0 analyses with tsa_mpi_root_runner: each stage is broadcast to
 * the other processes, run on process 0's own ranks, and the answers are
 * put into its analysis.  Every other process sits in tsa_mpi_host_serve
 * until process 0 calls tsa_mpi_root_done, which it must do on every path
 * once the hosts serve (also when the analysis failed). */
#ifndef TSA_MPI_RUNNER_H
#define TSA_MPI_RUNNER_H

#include "stage_pack.h"

typedef struct tsa_mpi_root {
    int procs;
    tsa_host_map *maps;        /* per process; maps[0] unused */
    tsa_rank_runner runner;    /* what tsa_mpi_root_runner returns */
} tsa_mpi_root;

const tsa_rank_runner *tsa_mpi_root_runner(tsa_mpi_root *root);
void tsa_mpi_root_done(void);

/* Serves stages on h until process 0 is done.  0, or -1 when the
 * messages themselves failed. */
int tsa_mpi_host_serve(tsa_stage_host *h);

/* Byte messages in pieces MPI's int counts can hold. */
int tsa_mpi_send(const void *data, size_t len, int to, int tag);
int tsa_mpi_recv(void *data, size_t len, int from, int tag);
/* A length, then the bytes; *data malloc'd by the receiver. */
int tsa_mpi_send_buf(const tsa_pack_buf *b, int to, int tag);
int tsa_mpi_recv_buf(unsigned char **data, size_t *len, int from, int tag);

#endif

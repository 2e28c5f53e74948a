/* The per-rank stages over MPI (mpi_runner.h). */
#include "mpi_runner.h"

#include <mpi.h>
#include <stdlib.h>

#define CHUNK ((size_t)1 << 30) /* MPI counts are ints: 1 GiB pieces */
#define TAG_PART 3
#define TAG_REPLY 4

int tsa_mpi_send(const void *data, size_t len, int to, int tag)
{
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t n = len - off < CHUNK ? len - off : CHUNK;
        if (MPI_Send((const unsigned char *)data + off, (int)n, MPI_BYTE, to, tag,
                     MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

int tsa_mpi_recv(void *data, size_t len, int from, int tag)
{
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t n = len - off < CHUNK ? len - off : CHUNK;
        if (MPI_Recv((unsigned char *)data + off, (int)n, MPI_BYTE, from, tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

int tsa_mpi_send_buf(const tsa_pack_buf *b, int to, int tag)
{
    uint64_t len = b->len;
    if (MPI_Send(&len, 1, MPI_UINT64_T, to, tag, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    return tsa_mpi_send(b->data, b->len, to, tag);
}

int tsa_mpi_recv_buf(unsigned char **data, size_t *len, int from, int tag)
{
    uint64_t n = 0;
    *data = NULL;
    *len = 0;
    if (MPI_Recv(&n, 1, MPI_UINT64_T, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS ||
        n != (size_t)n)
        return -1;
    unsigned char *d = malloc(n ? (size_t)n : 1);
    if (!d || tsa_mpi_recv(d, (size_t)n, from, tag)) {
        free(d);
        return -1;
    }
    *data = d;
    *len = (size_t)n;
    return 0;
}

/* The same bytes on every process, from process 0. */
static int bcast_buf(unsigned char **data, size_t *len)
{
    uint64_t n = *len;
    if (MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS || n != (size_t)n)
        return -1;
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me != 0 && !(*data = malloc(n ? (size_t)n : 1)))
        MPI_Abort(MPI_COMM_WORLD, 2); /* the broadcast cannot be left half done */
    *len = (size_t)n;
    for (size_t off = 0; off < n; off += CHUNK) {
        size_t k = n - off < CHUNK ? n - off : CHUNK;
        if (MPI_Bcast(*data + off, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

static int bcast_stage(int stage)
{
    return MPI_Bcast(&stage, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

/* ------------------------------------------------------------ process 0 */

/* One stage: announce, send every host its request, run the stage on
 * process 0's own ranks, take every host's answer.  Every answer is taken
 * even after a failure, so that no host is left blocked in a send. */
static int root_stage(tsa_mpi_root *root, tsa_analysis *a, tsa_stage s,
                      const tsa_window_plan *wp, const tsa_pass_plan *pp)
{
    tsa_pack_buf common = {0};
    int failed = tsa_stage_common_pack(s, wp, pp, &common);
    if (failed) /* nothing sent yet: the hosts must still hear of the stage */
        common.len = 0;
    if (bcast_stage(s) || bcast_buf(&common.data, &common.len))
        MPI_Abort(MPI_COMM_WORLD, 2);
    tsa_pack_buf_free(&common);
    for (int q = 1; q < root->procs; q++) {
        tsa_pack_buf part = {0};
        failed |= tsa_stage_host_pack(s, a, &root->maps[q], &part);
        if (tsa_mpi_send_buf(&part, q, TAG_PART))
            MPI_Abort(MPI_COMM_WORLD, 2);
        tsa_pack_buf_free(&part);
    }
    if (s == TSA_STAGE_STEPS)
        failed |= tsa_local_runner.steps(NULL, a);
    else if (s == TSA_STAGE_WINDOW)
        failed |= tsa_local_runner.window(NULL, a, wp);
    else
        failed |= tsa_local_runner.pass(NULL, a, pp);
    for (int q = 1; q < root->procs; q++) {
        unsigned char *reply = NULL;
        size_t len = 0;
        if (tsa_mpi_recv_buf(&reply, &len, q, TAG_REPLY))
            MPI_Abort(MPI_COMM_WORLD, 2);
        failed |= !failed && tsa_stage_reply_unpack(s, a, &root->maps[q], reply, len);
        free(reply);
    }
    return failed ? -1 : 0;
}

static int root_steps(void *ctx, tsa_analysis *a)
{
    return root_stage(ctx, a, TSA_STAGE_STEPS, NULL, NULL);
}

static int root_window(void *ctx, tsa_analysis *a, const tsa_window_plan *p)
{
    return root_stage(ctx, a, TSA_STAGE_WINDOW, p, NULL);
}

static int root_pass(void *ctx, tsa_analysis *a, const tsa_pass_plan *p)
{
    return root_stage(ctx, a, TSA_STAGE_PASS, NULL, p);
}

const tsa_rank_runner *tsa_mpi_root_runner(tsa_mpi_root *root)
{
    root->runner = (tsa_rank_runner){root_steps, root_window, root_pass, root, NULL, NULL, 0};
    return &root->runner;
}

void tsa_mpi_root_done(void)
{
    if (bcast_stage(TSA_STAGE_DONE))
        MPI_Abort(MPI_COMM_WORLD, 2);
}

/* -------------------------------------------------------------- a host */

int tsa_mpi_host_serve(tsa_stage_host *h)
{
    for (;;) {
        int s = 0;
        if (MPI_Bcast(&s, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
        if (s == TSA_STAGE_DONE)
            return 0;
        unsigned char *common = NULL, *part = NULL;
        size_t common_len = 0, part_len = 0;
        tsa_pack_buf reply = {0};
        int rc = bcast_buf(&common, &common_len) ||
                 tsa_mpi_recv_buf(&part, &part_len, 0, TAG_PART);
        if (!rc)
            rc = tsa_stage_host_run(h, (tsa_stage)s, common, common_len, part, part_len, &reply);
        free(common);
        free(part);
        /* A reply that could not even say "failed" leaves process 0 waiting. */
        if (rc || tsa_mpi_send_buf(&reply, 0, TAG_REPLY))
            MPI_Abort(MPI_COMM_WORLD, 2);
        tsa_pack_buf_free(&reply);
    }
}

/* The step dependency graph of the pipeline what-if, and its replay.
 *
 * A node is one operation of one worker: a piece of compute, or a
 * communication call (a collective, a send, a receive, or a batch of
 * them launched together).  Its start waits for the end of its
 * dependencies (the previous operation on its lane, and where the
 * recorded times show it, an operation on another lane of the same
 * worker), plus its own recorded gap (launch delay).  A communication
 * node's end waits for the hubs that gate it: a hub stands for one
 * collective instance or one send/receive pair, and opens when its last
 * contributing member has started.  Then
 *
 *   start(v) = max(end(d) for d in deps(v)) + gap(v)    (no deps: recorded start;
 *                                                         gap: recorded, or the one
 *                                                         peers of its role leave)
 *   end(v)   = start(v) + dur(v)                         (compute)
 *   end(v)   = max(start(v), open(h) for h gating v) + dur(v)   (communication;
 *                                                         dur is the transfer)
 *   open(h)  = max(start(m) for m contributing to h)
 *
 * Replaying the recorded durations gives back the recorded times; the
 * what-if replays with some nodes' durations set to their ideal.  Every
 * term is a max of sums, so shorter durations never make anything later:
 * no fix can come out slower than the record.  The typical replay (every
 * node at its peers' median, longer or shorter) is the exception: it is the
 * job as its peers run it, not a fix.
 *
 * Steps are independent graphs (a node's deps, hubs and members are all in
 * its step); nodes and hubs of step s are contiguous. */
#ifndef TSA_WI_GRAPH_H
#define TSA_WI_GRAPH_H

#include <stddef.h>
#include <stdint.h>

enum { WI_COMPUTE = 0, WI_COMM = 1 };

typedef struct wi_node {
    int64_t rec_start, rec_end;  /* recorded, on the common clock */
    int64_t dur;                 /* compute: duration; communication: transfer */
    int64_t ideal;               /* min(dur, typical): a fix only shortens */
    int64_t typical;             /* the duration peers of its role take (their median) */
    int64_t gap;                 /* after its dependencies' ends, as recorded */
    int64_t ideal_gap;           /* the gap peers of its role leave (<= gap) */
    int32_t rank;                /* worker (rank index) */
    uint32_t lane;               /* stream or thread, per worker */
    uint32_t step;
    uint8_t kind;                /* WI_COMPUTE, WI_COMM */
    uint8_t okind;               /* kind of operation (wi_okind) */
    uint16_t pad;
    uint32_t dep_first, n_dep;   /* g->deps[dep_first ..] */
    uint32_t gate_first, n_gate; /* g->gates[gate_first ..]: hubs gating its end */
    int32_t src;                 /* the record it came from (for names), -1 none */
    uint64_t sig;                /* role signature: peers share it */
    uint32_t k_first, n_k;       /* GPU compute: its kernels in the build's kerns */
} wi_node;

typedef struct wi_hub {
    uint32_t mem_first, n_mem;   /* g->members[mem_first ..]: contributing nodes */
    uint32_t step;
} wi_hub;

typedef struct wi_graph {
    wi_node *nodes; size_t n_nodes, cap_nodes;
    wi_hub *hubs; size_t n_hubs, cap_hubs;
    uint32_t *deps; size_t n_deps, cap_deps;
    uint32_t *gates; size_t n_gates, cap_gates;
    uint32_t *members; size_t n_members, cap_members;
    size_t n_steps;
    size_t *step_node;           /* n_steps + 1: first node of each step */
    size_t *step_hub;            /* n_steps + 1 */
    /* evaluation order (wi_graph_order): per step, items
     * (type << 30 | index), type 0 start, 1 end, 2 hub */
    uint32_t *order; size_t *step_order;
    size_t cut_links;            /* gates dropped to break cycles */
} wi_graph;

#define WI_ITEM(type, i) (((uint32_t)(type) << 30) | (uint32_t)(i))
#define WI_MAX_ITEMS (UINT32_C(1) << 30)

/* Which nodes a replay sets to their ideal. */
typedef enum wi_fix_by {
    WI_FIX_NONE = 0, WI_FIX_ALL, WI_FIX_WORKER, WI_FIX_STAGE, WI_FIX_DP, WI_FIX_KIND,
    WI_FIX_TYPICAL   /* every node at its typical duration, not its ideal */
} wi_fix_by;

typedef struct wi_fix {
    wi_fix_by by;
    int32_t value;
    int raw_gaps;                     /* 1: recorded gaps (the record itself); 0: every
                                       * gap at its peers' (a longer gap hides a wait
                                       * for something the records do not show) */
    const int32_t *stage_of, *dp_of;  /* per rank index (STAGE, DP) */
} wi_fix;

/* Scratch for replays: start/end per node, open time per hub. */
typedef struct wi_times {
    int64_t *start, *end, *open;
} wi_times;

/* Builders: 0, or -1 out of memory.  Nodes must be added step by step
 * (non-decreasing step); deps/gates reference nodes and hubs by index. */
int wi_graph_add_node(wi_graph *g, const wi_node *n);
int wi_graph_add_dep(wi_graph *g, uint32_t node, uint32_t dep);
int wi_graph_add_hub(wi_graph *g, uint32_t step, const uint32_t *members, size_t n);
int wi_graph_add_gate(wi_graph *g, uint32_t node, uint32_t hub);
/* After all nodes and hubs: step ranges, then the CSR arrays sorted by
 * owner.  deps/gates may be added in any order before this call. */
int wi_graph_finish(wi_graph *g);
/* Evaluation order per step; breaks a cycle (equal recorded times) by
 * dropping the gate that closes it (counted in cut_links). */
int wi_graph_order(wi_graph *g);
void wi_graph_free(wi_graph *g);

int wi_times_alloc(wi_times *t, const wi_graph *g);
void wi_times_free(wi_times *t);

int wi_fix_applies(const wi_fix *f, const wi_node *n);

/* Replays step s; returns its length: latest end - earliest recorded
 * start of the step (0 for an empty step). */
int64_t wi_replay_step(const wi_graph *g, size_t s, const wi_fix *f, wi_times *t);
/* The step's recorded length. */
int64_t wi_step_recorded(const wi_graph *g, size_t s);

/* Critical path of step s from a replay's times (t must hold them):
 * nodes from the first to the last, at most cap written to path; returns
 * the path length (may exceed cap).  via[i] (optional): 0 the node
 * waited for the previous one's end, 1 for its start (a hub). */
size_t wi_critical_path(const wi_graph *g, size_t s, const wi_times *t, uint32_t *path,
                        uint8_t *via, size_t cap);

#endif

/* Findings about what the capture lost or mixed up.  They win back no
 * time; they say how far the rest of the report can be trusted. */
#include <string.h>

#include "data.h"
#include "load/rank_nprof.h"

static int lost_writes(const tsa_analysis *a, tsa_findings *out)
{
    uint64_t lost = 0;
    size_t ranks = 0;
    int32_t worst = -1;
    uint64_t worst_bytes = 0;
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        const tsa_rank *r = &a->job->ranks[i];
        if (!r->dropped_write_bytes)
            continue;
        lost += r->dropped_write_bytes;
        ranks++;
        if (r->dropped_write_bytes > worst_bytes) {
            worst_bytes = r->dropped_write_bytes;
            worst = r->rank;
        }
    }
    if (!lost)
        return 0;
    uint64_t total = a->job->dump_bytes + lost;
    double share = total ? (double)lost / (double)total : 1;
    tsa_finding *f = tsa_findings_add(
        out, "LOAD.LOST_WRITES", TSA_SEV_WARNING, 0, ranks == 1 ? worst : -1,
        "Give TSCOPE_OUT a disk with room (df -h) and check the writer's errors on stderr; "
        "rerun before trusting totals",
        "%llu bytes of dump writes were lost (full disk or I/O error) on %zu rank%s "
        "(most on rank %d): %.1f%% of the data is missing, totals are low",
        (unsigned long long)lost, ranks, ranks == 1 ? "" : "s", worst, 100 * share);
    if (!f)
        return -1;
    f->confidence_cap = share >= TSA_TH_LOST_WRITES_LOW ? TSA_CONF_LOW : TSA_CONF_MEDIUM;
    tsa_finding_evidence(f, "dump bytes the writer counted as not written: %llu on %zu rank(s)",
                         (unsigned long long)lost, ranks);
    tsa_finding_evidence(f, "dump bytes read: %llu", (unsigned long long)a->job->dump_bytes);
    tsa_finding_number(f, "lost_bytes", (double)lost);
    tsa_finding_number(f, "lost_share", share);
    tsa_finding_number(f, "ranks", (double)ranks);
    return 0;
}

static int duplicate_ranks(const tsa_analysis *a, tsa_findings *out)
{
    const tsa_job *job = a->job;
    for (size_t i = 0; i < job->n_duplicates; i++) {
        /* One finding per claimed rank, counting its left-out dumps. */
        size_t k = 0;
        while (k < i && job->duplicates[k].rank != job->duplicates[i].rank)
            k++;
        if (k < i)
            continue;
        size_t n = 0;
        for (size_t j = i; j < job->n_duplicates; j++)
            n += job->duplicates[j].rank == job->duplicates[i].rank;
        tsa_finding *f = tsa_findings_add(
            out, "LOAD.DUPLICATE_RANK", TSA_SEV_WARNING, 0, job->duplicates[i].rank,
            "Give each run its own TSCOPE_OUT (or TSCOPE_RUN_ID) and check that the launcher "
            "sets RANK per process",
            "%zu dumps claim rank %d: analysed %s (most records), left out %s%s",
            n + 1, job->duplicates[i].rank, job->duplicates[i].kept_file,
            job->duplicates[i].dropped_file, n > 1 ? " and others (listed below)" : "");
        if (!f)
            return -1;
        f->confidence_cap = TSA_CONF_MEDIUM;
        tsa_finding_evidence(f, "rank id in the headers of %zu dumps: %d; the one with most "
                                "records is analysed", n + 1, job->duplicates[i].rank);
        tsa_finding_number(f, "dumps", (double)(n + 1));
    }
    return 0;
}

/* Events NCCL reported to tscope's profiler plugin that it could not
 * record: more open than its pools hold, or a handle NCCL used after its
 * slot was taken again (docs/nccl-plugin.md).  The plugin's tables and
 * NET.SLOW_LINK are computed without them. */
static int plugin_lost(const tsa_analysis *a, tsa_findings *out)
{
    uint64_t lost = 0, worst_n = 0;
    size_t ranks = 0;
    int32_t worst = -1;
    for (size_t i = 0; i < a->job->n_ranks; i++) {
        const struct tsa_nprof *np = a->job->ranks[i].nprof;
        if (!np || !np->lost)
            continue;
        lost += np->lost;
        ranks++;
        if (np->lost > worst_n) {
            worst_n = np->lost;
            worst = a->job->ranks[i].rank;
        }
    }
    if (!lost)
        return 0;
    tsa_finding *f = tsa_findings_add(
        out, "LOAD.PLUGIN_LOST", TSA_SEV_WARNING, 0, ranks == 1 ? worst : -1,
        "Give the plugin larger pools (TSCOPE_NP_POOLS=colls,ops,steps,spans; "
        "docs/nccl-plugin.md) or use TSCOPE_NCCL_PROFILER=light",
        "%llu events NCCL reported to tscope's profiler plugin were not recorded on %zu "
        "rank%s (most on rank %d): more were open than its pools hold, or a handle was used "
        "after its slot was taken again; the plugin's tables and links miss them",
        (unsigned long long)lost, ranks, ranks == 1 ? "" : "s", worst);
    if (!f)
        return -1;
    f->confidence_cap = TSA_CONF_MEDIUM;
    tsa_finding_evidence(f, "events the NCCL profiler plugin counted as not recorded: %llu on "
                            "%zu rank(s)", (unsigned long long)lost, ranks);
    tsa_finding_number(f, "events_lost", (double)lost);
    tsa_finding_number(f, "ranks", (double)ranks);
    return 0;
}

int tsa_data_findings(const tsa_analysis *a, tsa_findings *out)
{
    if (lost_writes(a, out) || duplicate_ranks(a, out) || plugin_lost(a, out))
        return -1;
    return 0;
}

#include "nccl_join.h"

void tsr_nccl_join_add(tsr_nccl_join *j, const tsr_event *e)
{
    tsc_desc_nccl_call c;
    if (e->kind == TSC_EV_NCCL && tsr_decode_nccl_call(e->desc, &c) == 0)
        tsr_u64_map_put(&j->ext_to_op, TSC_EXTCORR_ID(e->desc_id, e->val), c.op);
    else if (e->kind == TSC_EV_EXTCORR)
        tsr_u64_map_put(&j->corr_to_ext, e->desc_id, e->val);
}

const char *tsr_nccl_join_kernel_op(const tsr_nccl_join *j, const tsr_file *f,
                                    const tsr_event *e)
{
    uint64_t ext, op = 0;
    const char *joined = NULL;
    /* A folded kernel (1.2) has no external correlation record: its name
     * is all this join has. */
    if (e->kind == TSC_EV_KERNEL && tsr_u64_map_get(&j->corr_to_ext, e->val, &ext) &&
        tsr_u64_map_get(&j->ext_to_op, ext, &op))
        joined = tsr_nccl_op_name((uint8_t)op);
    /* Grouped calls launch from GroupEnd: the name says more than "GroupEnd". */
    if (joined && tsc_nccl_op_kind((unsigned)op) != TSC_NCCL_KIND_GROUP)
        return joined;
    tsc_desc_kernel k;
    const char *from_name = NULL;
    if (tsr_decode_kernel(e->desc, &k) == 0)
        from_name = tsr_nccl_op_from_kernel_name(tsr_string(f, k.name));
    return from_name ? from_name : joined;
}

void tsr_nccl_join_free(tsr_nccl_join *j)
{
    tsr_u64_map_free(&j->ext_to_op);
    tsr_u64_map_free(&j->corr_to_ext);
}

/* State the stand-in CUPTI's files share: the subscriber, what is
 * enabled, counters, and the per-thread external correlation stacks. */
#ifndef SIM_CUPTI_STATE_H
#define SIM_CUPTI_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cupti.h>

#define SIMC_MAX_CBID 1024
#define SIMC_EXT_KINDS 8
#define SIMC_EXT_DEPTH 64

typedef struct simc_subscriber {
    CUpti_CallbackFunc fn;
    void *userdata;
    uint8_t domain_on[CUPTI_CB_DOMAIN_SIZE];
    uint8_t cbid_on[CUPTI_CB_DOMAIN_SIZE][SIMC_MAX_CBID];
} simc_subscriber;

typedef struct sim_cupti_state {
    pthread_mutex_t lock;              /* guards sub */
    simc_subscriber *sub;
    atomic_uchar kind_on[CUPTI_ACTIVITY_KIND_COUNT];
    atomic_uchar runtime_cbid_on[SIMC_MAX_CBID], driver_cbid_on[SIMC_MAX_CBID];
    atomic_uint corr_counter;
    atomic_int thread_id_type;
    atomic_uint flush_period_ms;
    atomic_ullong callbacks_made;
    atomic_int subscribe_calls;        /* every cuptiSubscribe / _v2, refused or not */
} sim_cupti_state;

extern sim_cupti_state simc;
extern __thread uint64_t simc_ext_stack[SIMC_EXT_KINDS][SIMC_EXT_DEPTH];
extern __thread int simc_ext_top[SIMC_EXT_KINDS];

void simc_start_worker(void);

#endif

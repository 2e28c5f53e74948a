/* InfiniBand and RoCE port counters for the telemetry sampler: the ports
 * under <sysfs root>/class/infiniband, found once, then their error and
 * congestion counters, state and rate read at every sample and recorded
 * (TSC_EV_NET_COUNTER) when they changed.  Only the sampler thread calls
 * in.  docs/format.md describes the records. */
#ifndef TSC_NET_PORTS_H
#define TSC_NET_PORTS_H

#include <stdint.h>

/* Ports followed per process (a node has a few NICs with one or two ports). */
#define TSC_NET_MAX_PORTS 8

/* Finds the ports under sys_root ("/sys" on a real host) and writes how
 * many in the net_ports metadata. */
void tsc_net_open(const char *sys_root);

/* One sample of every port found. */
void tsc_net_sample(uint64_t now);

/* Forget the ports (after fork; the child opens again). */
void tsc_net_reset(void);

/* The port's state file ("4: ACTIVE") as its number.  0, or -1. */
int tsc_parse_ib_state(const char *text, uint64_t *state);

/* The port's rate file ("100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)") in
 * Mb/s.  0, or -1. */
int tsc_parse_ib_rate(const char *text, uint64_t *mbps);

#endif

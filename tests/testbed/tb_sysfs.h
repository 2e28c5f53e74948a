/* Fake sysfs trees for the telemetry sampler's TSCOPE_SYSFS_ROOT: files
 * written whole (a reader never sees half of one) and one InfiniBand port. */
#ifndef TB_SYSFS_H
#define TB_SYSFS_H

/* Writes text to root/rel, creating the folders on the way; replaces an
 * existing file by rename.  0, or -1. */
int tb_sysfs_put(const char *root, const char *rel, const char *text);

/* root/class/infiniband/mlx5_0/ports/1: its five error and wait counters
 * at `counter` (e.g. "0\n"), ACTIVE, 100 Gb/s.  0, or -1. */
int tb_sysfs_port(const char *root, const char *counter);

/* The counters' folder of that port, relative to the root. */
#define TB_SYSFS_PORT_COUNTERS "class/infiniband/mlx5_0/ports/1/counters"

#endif

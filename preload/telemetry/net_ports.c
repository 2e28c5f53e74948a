/* Network port counters from sysfs (net_ports.h). */
#include "net_ports.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_proc.h"
#include "rec_meta.h"
#include "recorder.h"
#include "tsc_format.h"

typedef struct net_port {
    char name[64];            /* "mlx5_0:1" */
    char dir[1100];           /* .../class/infiniband/mlx5_0/ports/1 */
    uint32_t desc;            /* its STRING descriptor, 0 until recorded */
    uint64_t last[TSC_NET_COUNTER_COUNT];
    uint32_t seen;            /* bit c: last[c] holds a recorded value */
} net_port;

static net_port g_ports[TSC_NET_MAX_PORTS];
static size_t g_n_ports;

/* The file of each counter, relative to the port's folder. */
static const char *const files[TSC_NET_COUNTER_COUNT] = {
    [TSC_NET_XMIT_WAIT] = "counters/port_xmit_wait",
    [TSC_NET_SYMBOL_ERROR] = "counters/symbol_error",
    [TSC_NET_LINK_DOWNED] = "counters/link_downed",
    [TSC_NET_LINK_RECOVERY] = "counters/link_error_recovery",
    [TSC_NET_RCV_ERRORS] = "counters/port_rcv_errors",
    [TSC_NET_STATE] = "state",
    [TSC_NET_RATE_MBPS] = "rate",
};

void tsc_net_reset(void)
{
    memset(g_ports, 0, sizeof g_ports);
    g_n_ports = 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const net_port *)a)->name, ((const net_port *)b)->name);
}

/* The ports of one device, in the order the folder lists them. */
static void add_ports(const char *class_dir, const char *dev)
{
    char path[1024];
    snprintf(path, sizeof path, "%.600s/%.255s/ports", class_dir, dev);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && g_n_ports < TSC_NET_MAX_PORTS) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        net_port *p = &g_ports[g_n_ports++];
        memset(p, 0, sizeof *p);
        snprintf(p->name, sizeof p->name, "%.40s:%.16s", dev, e->d_name);
        snprintf(p->dir, sizeof p->dir, "%s/%.64s", path, e->d_name);
    }
    closedir(d);
}

void tsc_net_open(const char *sys_root)
{
    char class_dir[600];
    tsc_net_reset();
    snprintf(class_dir, sizeof class_dir, "%s/class/infiniband", sys_root);
    DIR *d = opendir(class_dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) && g_n_ports < TSC_NET_MAX_PORTS)
            if (e->d_name[0] != '.')
                add_ports(class_dir, e->d_name);
        closedir(d);
    }
    if (g_n_ports > 1)
        qsort(g_ports, g_n_ports, sizeof *g_ports, by_name); /* the same order on every rank */
    tsc_meta_set_int(TSC_META_NET_PORTS, (int64_t)g_n_ports);
}

int tsc_parse_ib_state(const char *text, uint64_t *state)
{
    char *e;
    unsigned long long v = strtoull(text, &e, 10);
    if (e == text || *e != ':')
        return -1;
    *state = v;
    return 0;
}

int tsc_parse_ib_rate(const char *text, uint64_t *mbps)
{
    char *e;
    double gb = strtod(text, &e);
    if (e == text || gb < 0 || gb > 1e7 || strncmp(e, " Gb/sec", 7))
        return -1;
    *mbps = (uint64_t)(gb * 1000 + 0.5);
    return 0;
}

/* One file of a port as a number; 0, or -1 when missing or bad. */
static int read_value(const net_port *p, int c, uint64_t *v)
{
    char path[1200], buf[128];
    snprintf(path, sizeof path, "%s/%s", p->dir, files[c]);
    if (tsc_read_small(path, buf, sizeof buf) <= 0)
        return -1;
    if (c == TSC_NET_STATE)
        return tsc_parse_ib_state(buf, v);
    if (c == TSC_NET_RATE_MBPS)
        return tsc_parse_ib_rate(buf, v);
    char *e;
    if (buf[0] < '0' || buf[0] > '9')
        return -1;
    *v = strtoull(buf, &e, 10);
    return 0;
}

void tsc_net_sample(uint64_t now)
{
    for (size_t i = 0; i < g_n_ports; i++) {
        net_port *p = &g_ports[i];
        for (int c = 1; c < TSC_NET_COUNTER_COUNT; c++) {
            uint64_t v;
            if (read_value(p, c, &v) != 0 || ((p->seen >> c & 1) && p->last[c] == v))
                continue;
            if (!p->desc)
                p->desc = tsc_rec_string(p->name, strlen(p->name));
            if (!p->desc)
                return; /* no room for the name: try at the next sample */
            tsc_rec_event(TSC_EV_NET_COUNTER, 0, (uint16_t)c, p->desc, now, now, v);
            p->last[c] = v;
            p->seen |= 1u << c;
        }
    }
}

/* Configuration and job identity from the environment (table-driven: a
 * fake environment per case). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "identity.h"

static const char *const *fake_env;

static const char *fake_getenv(const char *name)
{
    for (const char *const *p = fake_env; p && *p; p += 2)
        if (!strcmp(p[0], name))
            return p[1];
    return NULL;
}

static int warnings;
static char last_warn_var[64];

static void count_warn(const char *var, const char *value, const char *used)
{
    (void)value;
    (void)used;
    warnings++;
    strncpy(last_warn_var, var, sizeof last_warn_var - 1);
}

static void test_parse_uint(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(tsc_parse_uint("42", 0, 100, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(tsc_parse_uint("  7 ", 0, 100, &v), 0);
    assert_int_equal(v, 7);
    const char *bad[] = {"", "-1", "abc", "12abc", "1e3", "101", "99999999999999999999999", " ",
                         "+5", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(tsc_parse_uint(bad[i], 0, 100, &v), -1);
    assert_int_equal(tsc_parse_uint(NULL, 0, 100, &v), -1);
    assert_int_equal(tsc_parse_uint("3", 4, 100, &v), -1);
}

static void test_parse_bool(void **state)
{
    (void)state;
    assert_int_equal(tsc_parse_bool("1"), 1);
    assert_int_equal(tsc_parse_bool("TRUE"), 1);
    assert_int_equal(tsc_parse_bool("on"), 1);
    assert_int_equal(tsc_parse_bool("0"), 0);
    assert_int_equal(tsc_parse_bool("No"), 0);
    assert_int_equal(tsc_parse_bool(""), 0);
    assert_int_equal(tsc_parse_bool("2"), -1);
    assert_int_equal(tsc_parse_bool("maybe"), -1);
    assert_int_equal(tsc_parse_bool(NULL), -1);
}

static void test_defaults(void **state)
{
    (void)state;
    static const char *const env[] = {NULL};
    fake_env = env;
    warnings = 0;
    tsc_config c;
    assert_int_equal(tsc_config_load(&c, fake_getenv, count_warn), 0);
    assert_int_equal(warnings, 0);
    assert_int_equal(c.disabled, 0);
    assert_int_equal(c.quiet, 0);
    assert_int_equal(c.buffer_kb, 1024);
    assert_int_equal(c.max_threads, 256);
    assert_int_equal(c.flush_ms, 1000);
    assert_int_equal(c.nvml_ms, 100);
    assert_int_equal(c.hang_s, 0); /* the hang watchdog is off by default */
    assert_string_equal(c.out_dir, "./tscope_out");
    assert_string_equal(c.sysfs_root, "/sys");
}

/* TSCOPE_NVML_MS: 0 is "off", 1-9 are raised to 10, garbage warns. */
static void test_nvml_period(void **state)
{
    (void)state;
    static const struct { const char *v; uint32_t want; int bad; } cases[] = {
        {"0", 0, 0}, {"5", 10, 0}, {"250", 250, 0}, {"3600000", 3600000, 0},
        {"3600001", 100, 1}, {"fast", 100, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *env[] = {"TSCOPE_NVML_MS", cases[i].v, NULL};
        fake_env = env;
        warnings = 0;
        tsc_config c;
        assert_int_equal(tsc_config_load(&c, fake_getenv, count_warn), cases[i].bad);
        assert_int_equal(warnings, cases[i].bad);
        assert_int_equal(c.nvml_ms, cases[i].want);
    }
}

/* TSCOPE_BUDGET_PCT: hundredths of a percent; the default depends on
 * the mode (1% full, 0.5% black-box); 0 = no budget. */
static void test_budget(void **state)
{
    (void)state;
    static const struct { const char *mode, *v; uint32_t want; int bad; } cases[] = {
        {NULL, NULL, 100, 0}, {"blackbox", NULL, 50, 0}, {NULL, "0.25", 25, 0},
        {NULL, "0", 0, 0}, {"blackbox", "2", 200, 0}, {NULL, "100", 10000, 0},
        {NULL, "101", 100, 1}, {"blackbox", "lots", 50, 1}, {NULL, "-1", 100, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *env[5] = {NULL};
        size_t n = 0;
        if (cases[i].mode)
            env[n++] = "TSCOPE_MODE", env[n++] = cases[i].mode;
        if (cases[i].v)
            env[n++] = "TSCOPE_BUDGET_PCT", env[n++] = cases[i].v;
        fake_env = env;
        warnings = 0;
        tsc_config c;
        assert_int_equal(tsc_config_load(&c, fake_getenv, count_warn), cases[i].bad);
        assert_int_equal(c.budget_cpct, cases[i].want);
    }
}

static void test_valid_values(void **state)
{
    (void)state;
    static const char *const env[] = {
        "TSCOPE_DISABLE", "yes", "TSCOPE_QUIET", "0", "TSCOPE_BUFFER_KB", "64",
        "TSCOPE_MAX_THREADS", "8", "TSCOPE_FLUSH_MS", "250", "TSCOPE_OUT", "/scratch/t",
        "TSCOPE_HANG_S", "600", "TSCOPE_SYSFS_ROOT", "/tmp/fake-sys", NULL};
    fake_env = env;
    warnings = 0;
    tsc_config c;
    assert_int_equal(tsc_config_load(&c, fake_getenv, count_warn), 0);
    assert_string_equal(c.sysfs_root, "/tmp/fake-sys");
    assert_int_equal(c.disabled, 1);
    assert_int_equal(c.buffer_kb, 64);
    assert_int_equal(c.max_threads, 8);
    assert_int_equal(c.flush_ms, 250);
    assert_int_equal(c.hang_s, 600);
    assert_string_equal(c.out_dir, "/scratch/t");
}

static void test_garbage_falls_back_with_one_warning_each(void **state)
{
    (void)state;
    static const char *const env[] = {
        "TSCOPE_DISABLE", "perhaps", "TSCOPE_BUFFER_KB", "lots", "TSCOPE_MAX_THREADS", "0",
        "TSCOPE_FLUSH_MS", "5", "TSCOPE_OUT", "", "TSCOPE_HANG_S", "-1",
        "TSCOPE_SYSFS_ROOT", "", NULL};
    fake_env = env;
    warnings = 0;
    tsc_config c;
    assert_int_equal(tsc_config_load(&c, fake_getenv, count_warn), 7);
    assert_int_equal(warnings, 7);
    assert_string_equal(c.sysfs_root, "/sys");
    assert_int_equal(c.hang_s, 0);
    assert_int_equal(c.disabled, 0);
    assert_int_equal(c.buffer_kb, 1024);
    assert_int_equal(c.max_threads, 256);
    assert_int_equal(c.flush_ms, 1000);
    assert_string_equal(c.out_dir, "./tscope_out");
    /* Bounds: a ring larger than one chunk could not be written. */
    static const char *const env2[] = {"TSCOPE_BUFFER_KB", "65537", NULL};
    fake_env = env2;
    warnings = 0;
    assert_int_equal(tsc_config_load(&c, fake_getenv, count_warn), 1);
    assert_string_equal(last_warn_var, "TSCOPE_BUFFER_KB");
    assert_int_equal(c.buffer_kb, 1024);
}

static void test_quiet_silences_warnings(void **state)
{
    (void)state;
    static const char *const env[] = {"TSCOPE_QUIET", "1", "TSCOPE_FLUSH_MS", "x", NULL};
    fake_env = env;
    warnings = 0;
    tsc_config c;
    assert_int_equal(tsc_config_load(&c, fake_getenv, count_warn), 1);
    assert_int_equal(warnings, 0);
    assert_int_equal(c.quiet, 1);
    assert_int_equal(c.flush_ms, 1000);
}

struct id_case {
    const char *env[24];
    int rank, local_rank, world_size, restart;
    const char *run_id, *run_id_source, *rank_source;
};

static void test_identity_table(void **state)
{
    (void)state;
    static const struct id_case cases[] = {
        {{NULL}, -1, -1, -1, -1, "none", "none", "none"},
        {{"RANK", "3", "LOCAL_RANK", "1", "WORLD_SIZE", "16", "TORCHELASTIC_RUN_ID", "job7",
          "TORCHELASTIC_RESTART_COUNT", "2", "SLURM_PROCID", "0", "SLURM_JOB_ID", "99", NULL},
         3, 1, 16, 2, "job7", "torchrun", "torchrun"},
        {{"SLURM_PROCID", "5", "SLURM_LOCALID", "1", "SLURM_NTASKS", "8", "SLURM_JOB_ID", "123",
          "SLURM_STEP_ID", "4", NULL},
         5, 1, 8, -1, "123.4", "slurm", "slurm"},
        {{"SLURM_JOB_ID", "123", NULL}, -1, -1, -1, -1, "123", "slurm", "none"},
        {{"OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_LOCAL_RANK", "0",
          "OMPI_COMM_WORLD_SIZE", "4", "OMPI_MCA_ess_base_jobid", "777", NULL},
         2, 0, 4, -1, "777", "openmpi", "openmpi"},
        {{"PMI_RANK", "9", "PMI_SIZE", "10", NULL}, 9, -1, 10, -1, "none", "none", "pmi"},
        {{"TSCOPE_RUN_ID", "mine", "TORCHELASTIC_RUN_ID", "theirs", NULL},
         -1, -1, -1, -1, "mine", "TSCOPE_RUN_ID", "none"},
        /* A garbage RANK does not stop the search. */
        {{"RANK", "x", "SLURM_PROCID", "6", NULL}, 6, -1, -1, -1, "none", "none", "slurm"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct id_case *c = &cases[i];
        fake_env = c->env;
        tsc_identity id;
        tsc_identity_from_env(&id, fake_getenv);
        assert_int_equal(id.rank, c->rank);
        assert_int_equal(id.local_rank, c->local_rank);
        assert_int_equal(id.world_size, c->world_size);
        assert_int_equal(id.restart, c->restart);
        assert_string_equal(id.run_id, c->run_id);
        assert_string_equal(id.run_id_source, c->run_id_source);
        assert_string_equal(id.rank_source, c->rank_source);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_uint),
        cmocka_unit_test(test_parse_bool),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_nvml_period),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_valid_values),
        cmocka_unit_test(test_garbage_falls_back_with_one_warning_each),
        cmocka_unit_test(test_quiet_silences_warnings),
        cmocka_unit_test(test_identity_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

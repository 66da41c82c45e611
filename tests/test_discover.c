/*
 * test_discover.c - what a new user types: `list`, `keys`, "did you
 * mean", custom hardware and systems from a `base`, relative NIC scaling
 * in system_grid, and cluster sizes that do not fit the scale-up domain.
 *
 * Specs and points are written to temporary files and loaded in-process
 * (spec_load, load_point, cmd_main); expected figures come from the
 * shipped catalogues (configs/hardware.cfg: h100-sxm-80g has a 50e9
 * bytes/s NIC, gb200-nvl72 a scale-up domain of 72; the nearest whole
 * numbers of 72-GPU racks around 1024 are 14 x 72 = 1008 and 15 x 72 =
 * 1080).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../driver/load/load.h"
#include "../driver/sweep/spec_load.h"
#include "unit.h"

#define CLI(r, ...)                                                            \
    do {                                                                       \
        const char *argv_[] = {"madsweep", __VA_ARGS__};                       \
        unit_cli_run((r), (int)(sizeof argv_ / sizeof argv_[0]), argv_);       \
    } while (0)

/* Loads a spec from text; returns spec_load's result, message in err. */
static int spec_text(const char *name, const char *text, spec *sp, load_err *err)
{
    char path[512];
    if (!unit_write_file(name, text, path, sizeof path))
        return -2;
    return spec_load(path, unit_configs(), sp, err);
}

static int point_text(const char *name, const char *text, point_t *p,
                      load_err *err)
{
    char path[512];
    if (!unit_write_file(name, text, path, sizeof path))
        return -2;
    return load_point(path, unit_configs(), p, err);
}

#define DSPEC(grid)                                                            \
    "fidelity = \"detailed\";\nmodels = [\"llama3-8b\"];\n"                    \
    "tasks = [\"pretrain\"];\nglobal_batch = [64];\nstrategies = \"auto\";\n"  \
    "system_grid = ( " grid " );\n"

static void test_list_and_keys(void)
{
    unit_cli r;
    CLI(&r, "list", "hardware");
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "gb200-nvl72"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "BF16 TF/s"));
    /* H100 SXM: 989 TFLOP/s BF16, 80 GB, 400 Gb/s NIC, 700 W board power,
     * $12.29 per GPU-hour (hardware.cfg) */
    const char *h = strstr(r.out, "h100-sxm-80g ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL(strstr(h, "989"));
    CU_ASSERT(strstr(h, " 400 ") && strstr(h, " 400 ") < strchr(h, '\n'));
    CU_ASSERT(strstr(h, " 700    12.29\n") &&
              strstr(h, " 700    12.29\n") < strchr(h, '\n'));
    CLI(&r, "list", "models");
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "mixtral-8x7b"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "8 (top-2)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "llama2_70b")); /* madmax */
    CLI(&r, "list", "systems");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "gb200-576"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "dc_A_2048"));
    CLI(&r, "list", "hardwar");
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "did you mean \"hardware\"?"));
    CLI(&r, "keys");
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "sweep spec:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "system_grid"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "nic_scale"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "decode_tokens"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "an entry to start from"));
    /* power and price overrides of a system_grid group are spec keys */
    const char *g = strstr(r.out, "sweep spec: a group of system_grid:");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_PTR_NOT_NULL(strstr(g, "board_power_w"));
    CU_ASSERT_PTR_NOT_NULL(strstr(g, "idle_power_w"));
    CU_ASSERT_PTR_NOT_NULL(strstr(g, "price_per_hour_usd"));
}

/* stacks: a catalogue directory without stacks.cfg, then one with it */
static void test_list_stacks(void)
{
    unit_cli r;
    char dir[600], path[700], cmd[2048], out[1024];
    const char *tmp = getenv("MADSWEEP_TEST_TMP");
    snprintf(dir, sizeof dir, "%s/stacks_configs", tmp && *tmp ? tmp : "/tmp");
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && cp %s/hardware.cfg %s",
             dir, dir, unit_configs(), dir);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 0);
    CLI(&r, "list", "stacks", "--configs", dir);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "no software stacks"));
    snprintf(path, sizeof path, "%s/stacks.cfg", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("stacks = ( { name = \"megatron-core\"; doc = \"Megatron-Core r0.8\";\n"
          "  gemm_scale = 1.0; },\n  { name = \"eager\"; description = \"PyTorch eager\"; } );\n",
          f);
    fclose(f);
    CLI(&r, "list", "stacks", "--configs", dir);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "megatron-core\n    doc: Megatron-Core r0.8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "eager\n    description: PyTorch eager"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "gemm_scale"));
}

static void test_did_you_mean(void)
{
    spec sp;
    load_err err;
    CU_ASSERT(spec_text("dym1.cfg",
                        "fidelity = \"detailed\";\nmodels = [\"llama3-8\"];\n"
                        "systems = [\"h100-8\"];\ntasks = [\"pretrain\"];\n"
                        "global_batch = [64];\nstrategies = \"auto\";\n",
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "did you mean \"llama3-8b\"?"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "madsweep list models"));
    CU_ASSERT(spec_text("dym2.cfg", DSPEC("{ hardware = \"h100-sxm\"; nodes = [1]; }"),
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "did you mean \"h100-sxm-80g\"?"));
    CU_ASSERT(spec_text("dym3.cfg",
                        "fidelity = \"detailed\";\nmodels = [\"llama3-8b\"];\n"
                        "systems = [\"h100-8\"];\ntasks = [\"pretrain\"];\n"
                        "global_batchs = [64];\nstrategies = \"auto\";\n",
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "unknown key 'global_batchs'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "did you mean \"global_batch\"?"));
    CU_ASSERT(spec_text("dym4.cfg",
                        "fidelity = \"detailed\";\nmodels = [\"llama3-8b\"];\n"
                        "systems = [\"h100-8\"];\n"
                        "tasks = ( { type = \"inference\"; decode_token = 8; } );\n"
                        "global_batch = [64];\nstrategies = \"auto\";\n",
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "did you mean \"decode_tokens\"?"));
    CU_ASSERT(spec_text("dym5.cfg", DSPEC("{ hardware = \"h100-sxm-80g\"; nodes = [1];"
                                          " nic_scal = [2.0]; }"),
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "did you mean \"nic_scale\"?"));
    /* a madmax spec with a detailed-only key */
    CU_ASSERT(spec_text("dym6.cfg",
                        "fidelity = \"madmax\";\nmodels = [\"dlrm_a\"];\n"
                        "systems = [\"zionex_8\"];\ntasks = [\"pretrain\"];\n"
                        "global_batch = [64];\nstrategies = \"auto\";\n"
                        "hardware = ();\n",
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "a key of the other fidelity"));
    /* points: catalogue names and keys of groups */
    point_t p;
    CU_ASSERT(point_text("dym7.cfg",
                         "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                         "system = \"h100-64s\";\ntask = { type = \"pretrain\"; "
                         "tp = 8; pp = 1; dp = 8; };\n",
                         &p, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "did you mean \"h100-64\"?"));
    CU_ASSERT(point_text("dym8.cfg",
                         "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                         "system = \"h100-8\";\ntask = { type = \"pretrain\"; "
                         "tp = 8; pp = 1; dp = 1; zero_stag = 1; };\n",
                         &p, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "did you mean \"zero_stage\"?"));
    CU_ASSERT(point_text("dym9.cfg",
                         "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                         "sytem = \"h100-8\";\ntask = { type = \"pretrain\"; };\n",
                         &p, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "unknown key 'sytem' in point; did you "
                                            "mean \"system\"?"));
    unit_cli r;
    CLI(&r, "bset");
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "did you mean \"best\"?"));
    CLI(&r, "best", "--grup", "x", "f.h5");
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "did you mean '--group'?"));
}

/* hw figures equal but for the name and the NIC */
static int same_but_nic(const hw_t *a, const hw_t *b)
{
    hw_t x = *a, y = *b;
    memset(x.name, 0, sizeof x.name);
    memset(y.name, 0, sizeof y.name);
    x.nic_bytes_per_s = y.nic_bytes_per_s = 0;
    return memcmp(&x, &y, sizeof x) == 0;
}

static void test_base_overrides(void)
{
    spec sp;
    load_err err;
    /* custom hardware in the spec, swept beside its base */
    int rc = spec_text("base1.cfg",
                       DSPEC("{ hardware = [\"h100-sxm-80g\", \"h100-2xnic\"]; nodes = [2]; }")
                       "hardware = ( { name = \"h100-2xnic\"; base = \"h100-sxm-80g\";\n"
                       "  nic_bytes_per_s = 100e9; } );\n",
                       &sp, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(sp.nsystems, 2);
    CU_ASSERT_STRING_EQUAL(sp.dsystems[1].hw.name, "h100-2xnic");
    CU_ASSERT_EQUAL(sp.dsystems[0].hw.nic_bytes_per_s, 50e9);
    CU_ASSERT_EQUAL(sp.dsystems[1].hw.nic_bytes_per_s, 100e9);
    CU_ASSERT(same_but_nic(&sp.dsystems[0].hw, &sp.dsystems[1].hw));
    /* the base came from hardware.cfg: recorded for provenance */
    CU_ASSERT_PTR_NOT_NULL(sources_find(&sp.files, "hardware.cfg"));
    spec_free(&sp);

    /* a custom system from a catalogue system, in a point */
    point_t p;
    rc = point_text("base2.cfg",
                    "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                    "system = { name = \"h100-2048\"; base = \"h100-1024\"; devices = 2048; };\n"
                    "task = { type = \"pretrain\"; tp = 8; pp = 1; dp = 256; };\n",
                    &p, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(p.system.devices, 2048);
    CU_ASSERT_EQUAL(p.system.nic_gbps_per_device, 400.0); /* from h100-1024 */
    CU_ASSERT_STRING_EQUAL(p.system.hw.name, "h100-sxm-80g");
    /* inline hardware with a base, inside a system */
    rc = point_text("base3.cfg",
                    "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                    "system = { name = \"x\"; devices = 8; hardware = { name = \"h100-fat\";\n"
                    "  base = \"h100-sxm-80g\"; mem_capacity_bytes = 160e9; }; };\n"
                    "task = { type = \"pretrain\"; tp = 8; pp = 1; dp = 1; };\n",
                    &p, &err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(p.system.hw.mem_capacity_bytes, 160e9);
    CU_ASSERT_EQUAL(p.system.hw.peak_flops[HW_BF16], 989e12);
    /* madmax system from a base */
    rc = point_text("base4.cfg",
                    "model = \"dlrm_a\";\n"
                    "system = { name = \"zionex_256\"; base = \"zionex_128\"; devices = 256;\n"
                    "  nodes = 32; };\n"
                    "task = { type = \"pretrain\"; dense = [\"ddp:256\"]; embedding = [\"mp:256\"];\n"
                    "  local_batch_dense = 64; local_batch_emb = 16384; };\n",
                    &p, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(p.cluster.devices, 256);
    CU_ASSERT_EQUAL(p.cluster.devices_per_node, 8);

    /* errors: an unknown base, half a GEMM table, a base naming itself */
    CU_ASSERT(point_text("base5.cfg",
                         "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                         "system = { name = \"y\"; base = \"h100-1042\"; };\n"
                         "task = { type = \"pretrain\"; tp = 8; pp = 1; dp = 1; };\n",
                         &p, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "did you mean \"h100-1024\"?"));
    CU_ASSERT(spec_text("base6.cfg",
                        DSPEC("{ hardware = \"h\"; nodes = [1]; }")
                        "hardware = ( { name = \"h\"; base = \"h100-sxm-80g\";\n"
                        "  gemm_efficiency = [0.5]; } );\n",
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "together"));
    CU_ASSERT(spec_text("base7.cfg",
                        DSPEC("{ hardware = \"h\"; nodes = [1]; }")
                        "hardware = ( { name = \"h\"; base = \"h\"; } );\n",
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "names the entry itself"));
    CU_ASSERT(spec_text("base8.cfg",
                        DSPEC("{ hardware = \"h\"; nodes = [1]; }")
                        "hardware = ( { base = \"h100-sxm-80g\"; } );\n",
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "missing key 'name'"));
}

static void test_nic_scale(void)
{
    spec sp;
    load_err err;
    int rc = spec_text("nic1.cfg",
                       DSPEC("{ hardware = \"h100-sxm-80g\"; nodes = [2];"
                             " nic_scale = [1.0, 2.0]; }"),
                       &sp, &err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(sp.nsystems, 2);
    CU_ASSERT_EQUAL(sp.dsystems[0].hw.nic_bytes_per_s, 50e9);
    CU_ASSERT_EQUAL(sp.dsystems[1].hw.nic_bytes_per_s, 100e9);
    CU_ASSERT_STRING_EQUAL(sp.dsystems[1].name, "h100-sxm-80g/2x8/nicx2");
    /* the doubled NIC is in the topology: the scale-out level's bandwidth */
    CU_ASSERT_EQUAL(sp.dsystems[1].topo.level[1].bw,
                    2 * sp.dsystems[0].topo.level[1].bw);
    spec_free(&sp);
    CU_ASSERT(spec_text("nic2.cfg",
                        DSPEC("{ hardware = \"h100-sxm-80g\"; nodes = [2];"
                              " nic_scale = [2.0]; nic_gbps_per_device = [400.0]; }"),
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "not both"));
}

static void test_domain_sizes(void)
{
    spec sp;
    load_err err;
    /* NVL72 racks are allocated in compute trays of 4: 1026 GPUs is not
     * a whole number of trays (1024 is, below) */
    CU_ASSERT(spec_text("dom1.cfg", DSPEC("{ hardware = \"gb200-nvl72\"; devices = [1026]; }"),
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "1026 devices of hardware 'gb200-nvl72'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "scale-up domains of 72 devices"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "1008 (14 x 72) and 1080 (15 x 72)"));
    CU_ASSERT(spec_text("dom2.cfg", DSPEC("{ hardware = \"h100-sxm-80g\"; devices = [100]; }"),
                        &sp, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "96 (12 x 8) and 104 (13 x 8)"));
    int rc;
    rc = spec_text("dom3.cfg",
                   DSPEC("{ hardware = [\"gb200-nvl72\", \"h100-sxm-80g\"];"
                         " devices = [144, 576]; }, { hardware = \"gb200-nvl72\"; devices = [8]; }"),
                   &sp, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(sp.nsystems, 5);
    CU_ASSERT_STRING_EQUAL(sp.dsystems[0].name, "gb200-nvl72/2x72");
    CU_ASSERT_STRING_EQUAL(sp.dsystems[3].name, "h100-sxm-80g/72x8");
    CU_ASSERT_STRING_EQUAL(sp.dsystems[4].name, "gb200-nvl72/1x8"); /* part of a rack */
    spec_free(&sp);
    /* 1024 GPUs of NVL72 racks: whole trays, placed as 16 domains of 64
     * (whole and partial racks); 1026 are refused */
    CU_ASSERT_EQUAL(spec_text("dom5.cfg",
                              DSPEC("{ hardware = \"gb200-nvl72\"; devices = [1024]; }"), &sp,
                              &err), 0);
    CU_ASSERT_EQUAL(sp.nsystems, 1);
    CU_ASSERT_STRING_EQUAL(sp.dsystems[0].name, "gb200-nvl72/16x64");
    spec_free(&sp);
    point_t p;
    CU_ASSERT(point_text("dom4.cfg",
                         "fidelity = \"detailed\";\nmodel = \"llama3-8b\";\n"
                         "system = { name = \"gb-1k\"; hardware = \"gb200-nvl72\"; "
                         "devices = 1026; };\n"
                         "task = { type = \"pretrain\"; tp = 2; pp = 1; dp = 513; };\n",
                         &p, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "1026 devices are not a whole number of "
                                            "scale-up domains of 72 devices"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.text, "1008 (14 x 72) and 1080 (15 x 72)"));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("discover", NULL, NULL);
    CU_add_test(s, "list and keys", test_list_and_keys);
    CU_add_test(s, "list stacks", test_list_stacks);
    CU_add_test(s, "did you mean", test_did_you_mean);
    CU_add_test(s, "base overrides for hardware and systems", test_base_overrides);
    CU_add_test(s, "nic_scale in the detailed system_grid", test_nic_scale);
    CU_add_test(s, "cluster sizes and scale-up domains", test_domain_sizes);
    return unit_run();
}

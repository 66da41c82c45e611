/*
 * list.c - `madsweep list models|hardware|systems|stacks`: the catalogue
 * entries with their key figures (see list.h).
 *
 * Every entry is loaded with the loader a sweep uses (so a listed entry
 * is one a spec can name, and a broken one is an error with its file and
 * line, after which the listing goes on and the exit code is 1); figures
 * are printed from the loaded values in the units named in the header.
 */
#include "list.h"

#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "../../cost/detailed.h"
#include "load.h"
#include "../suggest.h"

/* Opens DIR/file and returns its list `list`; prints the error. */
static const config_setting_t *list_open(config_t *cfg, const char *dir,
                                         const char *file, const char *list,
                                         FILE *err)
{
    char path[LOAD_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    load_err le;
    if (load_open_catalogue(cfg, path, dir, &le) != 0) {
        fprintf(err, "madsweep list: %s\n", le.text);
        return NULL;
    }
    const config_setting_t *l = config_lookup(cfg, list);
    if (!l || !config_setting_is_list(l)) {
        fprintf(err, "madsweep list: %s has no list '%s'\n", path, list);
        config_destroy(cfg);
        return NULL;
    }
    if (load_unique(l, list, &le) != 0) { /* a catalogue's names are unique */
        fprintf(err, "madsweep list: %s\n", le.text);
        config_destroy(cfg);
        return NULL;
    }
    return l;
}

static int list_hardware(const char *dir, FILE *out, FILE *err)
{
    config_t cfg;
    const config_setting_t *l = list_open(&cfg, dir, "hardware.cfg", "hardware", err);
    if (!l)
        return 2; /* a catalogue that does not read is bad input */
    fprintf(out, "hardware generations (%s/hardware.cfg):\n", dir);
    fprintf(out, "%-16s %10s %10s %10s %8s %9s %8s %12s %10s %8s %8s\n", "name",
            "BF16 TF/s", "FP8 TF/s", "FP4 TF/s", "HBM GB", "HBM TB/s", "scale-up",
            "up GB/s/dir", "NIC Gb/s", "board W", "USD/h");
    int rc = 0;
    for (int i = 0; i < config_setting_length(l); i++) {
        hw_t h;
        load_err le;
        if (load_hw_in(config_setting_get_elem(l, (unsigned)i), dir, NULL, &h,
                       &le) != 0) {
            fprintf(err, "madsweep list: %s\n", le.text);
            rc = 1;
            continue;
        }
        fprintf(out, "%-16s %10.0f %10.0f %10.0f %8.0f %9.2f %8lld %12.0f %10.0f %8.0f %8.2f\n",
                h.name, h.peak_flops[HW_BF16] / 1e12, h.peak_flops[HW_FP8] / 1e12,
                h.peak_flops[HW_FP4] / 1e12,
                h.mem_capacity_bytes / 1e9, h.mem_bw_bytes_per_s / 1e12,
                (long long)h.scaleup_devices, h.scaleup_bytes_per_s / 1e9,
                h.nic_bytes_per_s * 8 / 1e9, h.board_power_w, h.price_per_hour_usd);
    }
    config_destroy(&cfg);
    return rc;
}

static int list_models(const char *dir, FILE *out, FILE *err)
{
    config_t cfg;
    const config_setting_t *l =
        list_open(&cfg, dir, "detailed_models.cfg", "models", err);
    if (!l)
        return 2; /* a catalogue that does not read is bad input */
    int rc = 0;
    fprintf(out, "detailed fidelity (%s/detailed_models.cfg):\n", dir);
    fprintf(out, "%-18s %-9s %9s %7s %7s %9s %7s %8s %s\n", "name", "arch",
            "params B", "layers", "hidden", "heads/kv", "seq", "vocab",
            "experts (top-k) / tables x rows");
    for (int i = 0; i < config_setting_length(l); i++) {
        model_t m;
        load_err le;
        if (load_model_detailed(config_setting_get_elem(l, (unsigned)i), &m, &le) != 0) {
            fprintf(err, "madsweep list: %s\n", le.text);
            rc = 1;
            continue;
        }
        task_detailed_t none;
        memset(&none, 0, sizeof none);
        double total = 0, per = 0;
        detailed_params(&m, &none, &total, &per);
        static const char *const arch[] = {"gpt", "llama", "mpt", "bloom", "vit",
                                           "mixtral", "deepseek"};
        if (m.kind == MODEL_DLRM) {
            double bot = 0, top = 0, emb = 0;
            detailed_dlrm_params(&m, &bot, &top, &emb);
            total = bot + top + emb;
            fprintf(out, "%-18s %-9s %9.2f %7s %7s %9s %7s %8s %lld x %lld, dim %lld\n",
                    m.name, "dlrm", total / 1e9, "-", "-", "-", "-", "-",
                    (long long)m.tables, (long long)m.rows_per_table,
                    (long long)m.emb_dim);
            continue;
        }
        char heads[32], moe[48] = "-";
        snprintf(heads, sizeof heads, "%lld/%lld", (long long)m.heads,
                 (long long)(m.kv_heads > 0 ? m.kv_heads : m.heads));
        if (m.d.experts > 0)
            snprintf(moe, sizeof moe, "%lld (top-%lld)", (long long)m.d.experts,
                     (long long)(m.d.top_k > 0 ? m.d.top_k : 2));
        fprintf(out, "%-18s %-9s %9.2f %7lld %7lld %9s %7lld %8lld %s\n", m.name,
                (int)m.d.arch >= 0 && m.d.arch < MODEL_NARCHS ? arch[m.d.arch] : "?",
                total / 1e9, (long long)m.layers, (long long)m.hidden, heads,
                (long long)m.seq_len, (long long)m.vocab, moe);
    }
    config_destroy(&cfg);
    l = list_open(&cfg, dir, "models.cfg", "models", err);
    if (!l)
        return 2; /* a catalogue that does not read is bad input */
    fprintf(out, "\nmadmax fidelity (%s/models.cfg):\n", dir);
    fprintf(out, "%-18s %-5s %14s %14s %16s\n", "name", "type", "dense params B",
            "emb params B", "GFLOP/sample fwd");
    for (int i = 0; i < config_setting_length(l); i++) {
        model_t m;
        load_err le;
        if (load_model(config_setting_get_elem(l, (unsigned)i), &m, &le) != 0) {
            fprintf(err, "madsweep list: %s\n", le.text);
            rc = 1;
            continue;
        }
        fprintf(out, "%-18s %-5s %14.3f %14.3f %16.3f\n", m.name,
                model_kind_name(m.kind), m.dense_params / 1e9, m.emb_params / 1e9,
                m.total_flops / 1e9);
    }
    config_destroy(&cfg);
    return rc;
}

static int list_systems(const char *dir, FILE *out, FILE *err)
{
    config_t cfg;
    const config_setting_t *l =
        list_open(&cfg, dir, "detailed_systems.cfg", "systems", err);
    if (!l)
        return 2; /* a catalogue that does not read is bad input */
    int rc = 0;
    fprintf(out, "detailed fidelity (%s/detailed_systems.cfg; sweeps also "
            "generate systems with system_grid):\n", dir);
    fprintf(out, "%-14s %-14s %8s %9s %9s %s\n", "name", "hardware", "devices",
            "scale-up", "NIC Gb/s", "pod");
    for (int i = 0; i < config_setting_length(l); i++) {
        topo_system_t y;
        load_err le;
        if (load_system_detailed(config_setting_get_elem(l, (unsigned)i), dir, NULL, &y,
                                 &le) != 0) {
            fprintf(err, "madsweep list: %s\n", le.text);
            rc = 1;
            continue;
        }
        double nic = y.nic_gbps_per_device > 0 ? y.nic_gbps_per_device
                                               : y.hw.nic_bytes_per_s * 8 / 1e9;
        char pod[64] = "-";
        if (y.pod_devices > 0 && y.pod_devices < y.devices)
            snprintf(pod, sizeof pod, "%lld devices, 1:%g above",
                     (long long)y.pod_devices,
                     y.pod_oversubscription > 0 ? y.pod_oversubscription : 1.0);
        fprintf(out, "%-14s %-14s %8lld %9lld %9.0f %s\n", y.name, y.hw.name,
                (long long)y.devices, (long long)y.topo.level[0].span, nic, pod);
    }
    config_destroy(&cfg);
    l = list_open(&cfg, dir, "systems.cfg", "systems", err);
    if (!l)
        return 2; /* a catalogue that does not read is bad input */
    fprintf(out, "\nmadmax fidelity (%s/systems.cfg):\n", dir);
    fprintf(out, "%-24s %8s %6s %10s %8s %16s\n", "name", "devices", "nodes",
            "FP16 TF/s", "mem GB", "NIC GB/s/node 1 dir");
    for (int i = 0; i < config_setting_length(l); i++) {
        cluster_t c;
        load_err le;
        if (load_system(config_setting_get_elem(l, (unsigned)i), dir, NULL, &c,
                        &le) != 0) {
            fprintf(err, "madsweep list: %s\n", le.text);
            rc = 1;
            continue;
        }
        fprintf(out, "%-24s %8lld %6lld %10.0f %8.0f %16.1f\n", c.name,
                (long long)c.devices, (long long)c.nodes, c.peak_fp16_flops / 1e12,
                c.mem_capacity_bytes / 1e9,
                (double)c.nic_ports * c.nic_bidir_bytes_per_s / 2 / 1e9);
    }
    config_destroy(&cfg);
    return rc;
}

static int list_stacks(const char *dir, FILE *out, FILE *err)
{
    char path[LOAD_PATH_MAX];
    snprintf(path, sizeof path, "%s/stacks.cfg", dir);
    if (access(path, F_OK) != 0) {
        fprintf(out, "no software stacks: %s does not exist (this catalogue "
                "directory defines none)\n", path);
        return 0;
    }
    config_t cfg;
    const config_setting_t *l = list_open(&cfg, dir, "stacks.cfg", "stacks", err);
    if (!l)
        return 2; /* a catalogue that does not read is bad input */
    fprintf(out, "software stacks (%s):\n", path);
    int rc = 0;
    for (int i = 0; i < config_setting_length(l); i++) {
        const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);
        const char *name = NULL;
        if (!config_setting_is_group(e) ||
            config_setting_lookup_string(e, "name", &name) != CONFIG_TRUE) {
            fprintf(err, "madsweep list: %s:%u: an entry of list 'stacks' without "
                    "a string 'name'\n", path, config_setting_source_line(e));
            rc = 1;
            break;
        }
        fprintf(out, "%s\n", name);
        for (int k = 0; k < config_setting_length(e); k++) {
            const config_setting_t *m = config_setting_get_elem(e, (unsigned)k);
            const char *v = config_setting_get_string(m);
            if (v && strcmp(config_setting_name(m), "name") != 0)
                fprintf(out, "    %s: %s\n", config_setting_name(m), v);
        }
    }
    config_destroy(&cfg);
    return rc;
}

int list_run(const char *what, const char *configs_dir, FILE *out, FILE *err)
{
    static const char *const names[] = {"models", "hardware", "systems", "stacks"};
    int (*const run[])(const char *, FILE *, FILE *) = {list_models, list_hardware,
                                                       list_systems, list_stacks};
    for (int i = 0; i < 4; i++)
        if (strcmp(what, names[i]) == 0)
            return run[i](configs_dir, out, err);
    suggest s;
    suggest_init(&s, what);
    for (int i = 0; i < 4; i++)
        suggest_offer(&s, names[i]);
    char hint[SUGGEST_NAME_MAX + 32];
    fprintf(err, "madsweep list: unknown catalogue '%s'%s (expected models, "
            "hardware, systems or stacks)\n", what, suggest_hint(&s, hint, sizeof hint));
    return 2;
}

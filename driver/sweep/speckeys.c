/*
 * speckeys.c - the key tables of sweep specs and the readers of their
 * numbers (see speckeys.h and the format in spec_load.h).
 */
#include "speckeys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../worker/spec.h"
#include "../load/load.h"
#include "../suggest.h"

/* A key, its fidelities and help; numbers: the accepted range [lo, hi]
 * and the unit (hi 0: not a number of the spec's own; SPECKEYS_LOAD: a
 * system's key of that name, whose row in the catalogue tables gives
 * its range and unit, load.h load_keys_range_text). */
typedef struct speckey {
    const char *name;
    unsigned fid;
    const char *doc;
    double lo, hi;
    const char *unit;
} speckey;

#define SPECKEYS_LOAD -1.0
#define SPECKEYS_DEV(unit) 1, (double)SPEC_MAX_DEVICES, unit

#define M SPECKEYS_MADMAX
#define D SPECKEYS_DETAILED
#define B SPECKEYS_BOTH

static const speckey speckeys_top[] = {
    {"name", B, "label of the sweep (optional)", 0, 0, NULL},
    {"fidelity", B, "\"detailed\" (default) or \"madmax\"", 0, 0, NULL},
    {"models", B, "catalogue names, inline model groups, or \"all\"", 0, 0, NULL},
    {"systems", B,
     "catalogue names, inline system groups (may start from a `base` entry "
     "and override it), or \"all\"; optional with system_grid", 0, 0, NULL},
    {"system_grid", B, "list of groups generating systems (keys below)", 0, 0, NULL},
    {"hardware", D,
     "custom hardware generations for system_grid: groups { name = \"...\"; "
     "base = \"h100-sxm-80g\"; nic_bytes_per_s = 100e9; } (a base and the "
     "figures it overrides, or every key of `madsweep keys` hardware)", 0, 0, NULL},
    {"tasks", B, "task types or task groups (keys below)", 0, 0, NULL},
    {"global_batch", B,
     "global batch sizes, samples per step (detailed: sequences; serving: "
     "sequences decoded concurrently), or a group per model kind "
     "{ llm = [...]; dlrm = [...]; }", 1, (double)SPEC_MAX_BATCH, "samples (llm: sequences)"},
    {"strategies", B,
     "\"auto\" (every candidate of the fidelity) or, madmax, groups "
     "{ dense = \"fsdp:node,ddp:rest\"; embedding = \"mp:all\"; }, detailed, groups "
     "of a task's strategy keys { tp = 8; pp = 4; vpp = 5; cp = 2; } (dp: the rest)", 0, 0, NULL},
    {"stacks", B,
     "software stacks of configs/stacks.cfg (names, inline groups or \"all\"; "
     "default [\"unknown\"]): an axis of the sweep; detailed fidelity only "
     "(a madmax spec refuses it)", 0, 0, NULL},
    {"chunk", B, "ids per work chunk on average (default 4096)", 1, (double)SPEC_CHUNK_MAX, "ids"},
    {"elasticities", D,
     "true: every ok row also carries the elasticities of its step time to compute, HBM "
     "bandwidth, scale-up and scale-out bandwidth (d log T / d log R, four more "
     "evaluations per point; default false)", 0, 0, NULL},
    {"keep", B,
     "what the sweep keeps (default \"all\"): { top = K; by = \"FIGURE\"; "
     "group = [...]; }, { pareto = [\"F1\", \"F2\"]; group = [...]; } or "
     "{ feasible = true; }, reduced in situ", 0, 0, NULL},
};

static const speckey speckeys_grid[] = {
    {"base", M, "madmax: the catalogue system to start from (systems.cfg)", 0, 0, NULL},
    {"hardware", D,
     "detailed: hardware generations, names (the spec's `hardware` list, "
     "then hardware.cfg) or inline groups", 0, 0, NULL},
    {"nodes", B,
     "node counts (madmax: nodes of the base's size; detailed: scale-up "
     "domains of devices_per_node)", SPECKEYS_DEV("nodes")},
    {"devices", D,
     "detailed: device counts instead of nodes, each a whole number of "
     "devices_per_node (an error names the nearest valid sizes)", SPECKEYS_DEV("devices")},
    {"devices_per_node", B,
     "devices per node (default: the base's; detailed: the hardware's "
     "scale-up domain, e.g. 72 for an NVL72 rack)", SPECKEYS_DEV("devices/node")},
    {"nic_scale", B,
     "factors on the NIC bandwidth (madmax: the base's ports; detailed: "
     "the hardware's nic_bytes_per_s), default [1.0]", 1e-9, 1e6, "factor"},
    {"nic_gbps_per_device", D,
     "detailed: absolute NIC bandwidths per device, Gb/s one direction "
     "(instead of nic_scale)", 1e-9, 1e9, "Gb/s per device, one direction"},
    {"scale", D,
     "detailed: hardware figures as axes, { KEY = [factors]; ... } over the "
     "numeric hardware keys of `madsweep keys` (peaks, HBM capacity and "
     "bandwidth, scale-up size, bandwidth and latency, NIC, power, price), "
     "crossed with each other and the group's other keys; systems named "
     "\"HW/NxDPN/bf16x1.5/hbmbwx2\", factors in /axes/system scale_KEY; the range is "
     "a factor's", 1e-9, (double)SPEC_MAX_DEVICES, "factor"},
    {"pod_devices", D, "detailed: devices per pod (oversubscribed above it)",
     SPECKEYS_DEV("devices")},
    {"pod_oversubscription", D,
     "detailed: oversubscription above the pod (e.g. 7 for 1:7)", 1, 1e6, "1"},
    {"collective", D,
     "detailed: collective algorithms, \"ring\", \"tree\", \"hierarchical\" "
     "(a string or an array)", 0, 0, NULL},
    {"board_power_w", B,
     "board power per device, W, over the hardware's (energy figures)", 0,
     SPECKEYS_LOAD, NULL},
    {"idle_power_w", B,
     "idle power per device, W, over the hardware's (default 30 % of board "
     "power)", 0, SPECKEYS_LOAD, NULL},
    {"price_per_hour_usd", B,
     "price per device-hour, USD, over the hardware's (cost figures)", 0,
     SPECKEYS_LOAD, NULL},
};

static const speckey speckeys_task[] = {
    {"type", B, "\"pretrain\", \"finetune\" or \"inference\"", 0, 0, NULL},
    {"name", B, "label (default: the type)", 0, 0, NULL},
    {"freeze_emb", B, "finetune: embeddings frozen", 0, 0, NULL},
    {"freeze_top_mlp", B, "finetune, DLRM: top MLP frozen", 0, 0, NULL},
    {"freeze_bot_mlp", B, "finetune, DLRM: bottom MLP frozen", 0, 0, NULL},
    {"freeze_dense", M, "madmax finetune: all transformer layers frozen", 0, 0, NULL},
    {"min_frozen_layer", M, "madmax finetune: layers below it get gradients", 0,
     (double)SPEC_MAX_LAYERS, "layer index"},
    {"frozen_layers", D, "detailed finetune: the first N layers frozen", 0,
     (double)SPEC_MAX_LAYERS, "layers"},
    {"precision", D, "detailed: \"bf16\" (default), \"fp16\", \"fp8\", \"fp4\", \"tf32\", \"fp32\"", 0, 0, NULL},
    {"prompt_tokens", D, "detailed inference: prompt length (default seq_len)", 1,
     (double)SPEC_MAX_TOKENS, "tokens"},
    {"decode_tokens", D, "detailed inference: generated tokens (default 128)", 1,
     (double)SPEC_MAX_TOKENS, "tokens"},
    {"concurrency", D, "detailed inference: requests in flight, \"max\" or \"sla\" "
     "(default: the batch axis)", 1, (double)SPEC_MAX_REQUESTS, "requests"},
    {"ttft_max_s", D, "detailed inference SLA: time to first token at most, s", 0, 3600, "s"},
    {"tpot_max_s", D, "detailed inference SLA: time per output token at most, s", 0, 3600,
     "s per token"},
    {"max_seqs", D, "detailed inference: the engine's batch limit per attention rank as "
     "launched (default: the stack's)", 1, (double)SPEC_MAX_REQUESTS, "sequences"},
    {"token_budget", D, "detailed inference: the engine's tokens per step as launched "
     "(default: the stack's)", 16, 16777216, "tokens per step"},
    {"rounds", D, "detailed inference: the client's requests per slot, the first round sent "
     "at once (default 0: an endless loop)", 1, 16777216, "requests per slot"},
    {"front_end", D, "detailed inference: \"engine\" (default) or \"dynamo\"", 0, 0, NULL},
    {"prefill", D, "detailed inference: a disaggregated prefill pool, the keys of a point's "
     "`prefill` group with tp required (`madsweep keys`); the sweep's system decodes", 0, 0, NULL},
};

#undef M
#undef D
#undef B

static const struct {
    const speckey *k;
    size_t n;
    const char *title;
} speckeys_tables[SPECKEYS_NNS] = {
    {speckeys_top, sizeof speckeys_top / sizeof speckeys_top[0], "sweep spec"},
    {speckeys_grid, sizeof speckeys_grid / sizeof speckeys_grid[0],
     "sweep spec: a group of system_grid"},
    {speckeys_task, sizeof speckeys_task / sizeof speckeys_task[0],
     "sweep spec: a group of tasks"},
};

static const speckey *speckeys_find(speckeys_ns ns, const char *key)
{
    for (size_t i = 0; i < speckeys_tables[ns].n; i++)
        if (strcmp(speckeys_tables[ns].k[i].name, key) == 0)
            return &speckeys_tables[ns].k[i];
    return NULL;
}

/* The accepted range [*lo, *hi] of numeric key `key` of namespace ns
 * (what the spec loader checks, and `madsweep keys` prints as {lo to
 * hi}); false for other keys. */
static bool speckeys_range(speckeys_ns ns, const char *key, double *lo, double *hi)
{
    const speckey *k = speckeys_find(ns, key);
    if (!k || k->hi <= 0)
        return false;
    *lo = k->lo;
    *hi = k->hi;
    return true;
}

bool speckeys_known(speckeys_ns ns, unsigned fid, const char *key)
{
    for (size_t i = 0; i < speckeys_tables[ns].n; i++)
        if ((speckeys_tables[ns].k[i].fid & fid) &&
            strcmp(speckeys_tables[ns].k[i].name, key) == 0)
            return true;
    return false;
}

const char *speckeys_unknown(speckeys_ns ns, unsigned fid, const char *key,
                             const char *where, char *buf, size_t size)
{
    suggest sg;
    suggest_init(&sg, key);
    char list[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < speckeys_tables[ns].n; i++) {
        const speckey *k = &speckeys_tables[ns].k[i];
        if (!(k->fid & fid))
            continue;
        suggest_offer(&sg, k->name);
        int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                         k->name);
        if (w > 0 && used + (size_t)w < sizeof list)
            used += (size_t)w;
    }
    char hint[SUGGEST_NAME_MAX + 32];
    bool other = speckeys_known(ns, SPECKEYS_BOTH & ~fid, key);
    snprintf(buf, size, "unknown key '%s' in %s of the %s fidelity%s%s (keys: %s)",
             key, where, fid == SPECKEYS_MADMAX ? "madmax" : "detailed",
             other ? " (a key of the other fidelity)" : "",
             suggest_hint(&sg, hint, sizeof hint), list);
    return buf;
}

/* A value and its index, sorted by value then index. */
typedef struct speckeys_at {
    double v;
    int i;
} speckeys_at;

static int speckeys_at_cmp(const void *pa, const void *pb)
{
    const speckeys_at *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* The first element of v[0..n) that repeats an earlier one (the
 * smallest such index, *rep) and the first it repeats (*of), sorted
 * rather than compared pairwise (issue 29: an array of 10^5 values took
 * 10^10 comparisons); 0 when none, 1 found, -1 out of memory. */
static int speckeys_repeat(const double *v, int n, int *rep, int *of)
{
    if (n < 2)
        return 0;
    speckeys_at *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return -1;
    for (int i = 0; i < n; i++)
        s[i] = (speckeys_at){v[i], i};
    qsort(s, (size_t)n, sizeof *s, speckeys_at_cmp);
    *rep = -1;
    for (int k = 1; k < n; k++)
        if (s[k].v == s[k - 1].v && (k < 2 || s[k - 2].v != s[k].v) &&
            (*rep < 0 || s[k].i < *rep)) {
            *rep = s[k].i; /* the second of a run of one value */
            *of = s[k - 1].i;
        }
    free(s);
    return *rep >= 0;
}

int speckeys_numbers(speckeys_ns ns, const char *row, const config_setting_t *g,
                     const char *key, bool integer, double def, double **out, int *n,
                     load_err *err)
{
    double lo = 0, hi = 0;
    if (!speckeys_range(ns, row ? row : key, &lo, &hi)) {
        load_fail(err, g, "internal error: spec key '%s' has no range",
                  row ? row : key);
        return -1;
    }
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s) {
        if (def <= 0) {
            *out = NULL;
            *n = 0;
            return 0;
        }
        *out = malloc(sizeof **out);
        if (!*out)
            return -1;
        (*out)[0] = def;
        *n = 1;
        return 0;
    }
    if (!config_setting_is_array(s) || config_setting_length(s) == 0) {
        load_fail(err, s, "key '%s': expected a non-empty array [...] of "
                  "numbers", key);
        return -1;
    }
    int len = config_setting_length(s);
    double *v = malloc((size_t)len * sizeof *v);
    if (!v) {
        load_fail(err, s, "key '%s': out of memory", key);
        return -1;
    }
    int bad = -1; /* the first element of the wrong type or range */
    for (int i = 0; i < len && bad < 0; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        int t = config_setting_type(e);
        if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
            v[i] = (double)config_setting_get_int64(e);
        else if (t == CONFIG_TYPE_FLOAT && !integer)
            v[i] = config_setting_get_float(e);
        else
            bad = i;
        if (bad < 0 && (!(v[i] >= lo) || !isfinite(v[i]) || v[i] > hi))
            bad = i;
    }
    /* a repeat before the first bad element is reported first, as an
     * element-by-element reading would */
    int rep = -1, of = -1;
    int found = speckeys_repeat(v, bad < 0 ? len : bad, &rep, &of);
    if (found > 0) {
        load_fail(err, s, "key '%s': element %d repeats element %d (%g); each value "
                  "may appear once", key, rep, of, v[rep]);
    } else if (found < 0) {
        load_fail(err, s, "key '%s': out of memory", key);
    } else if (bad >= 0) {
        int t = config_setting_type(config_setting_get_elem(s, (unsigned)bad));
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64 &&
            !(t == CONFIG_TYPE_FLOAT && !integer))
            load_fail(err, s, "key '%s': element %d: expected %s", key, bad,
                      integer ? "an integer" : "a number");
        else
            load_fail(err, s, "key '%s': element %d: must be >= %g and at most %g", key,
                      bad, lo, hi);
    }
    if (found != 0 || bad >= 0) {
        free(v);
        return -1;
    }
    *out = v;
    *n = len;
    return 0;
}

int speckeys_int(speckeys_ns ns, const config_setting_t *g, const char *key, int64_t *out,
                 load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s)
        return 0;
    double lo = 0, hi = 0;
    if (!speckeys_range(ns, key, &lo, &hi)) {
        load_fail(err, s, "internal error: spec key '%s' has no range", key);
        return -1;
    }
    int t = config_setting_type(s);
    if ((t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) ||
        (double)config_setting_get_int64(s) < lo || (double)config_setting_get_int64(s) > hi) {
        load_fail(err, s, "key '%s': expected an integer from %lld to %lld", key,
                  (long long)lo, (long long)hi);
        return -1;
    }
    *out = (int64_t)config_setting_get_int64(s);
    return 1;
}

int speckeys_label(const config_setting_t *g, const char *key, char *dst, size_t size,
                   load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s)
        return 0;
    const char *text = config_setting_get_string(s);
    if (!text || !*text || strlen(text) >= size) {
        load_fail(err, s, "key '%s': expected a name of 1 to %zu characters%s", key,
                  size - 1, !text ? ", got no string" : !*text ? ", got \"\"" : "");
        return -1;
    }
    if (load_name_control(s, key, text, err))
        return -1;
    memcpy(dst, text, strlen(text) + 1);
    return 0;
}

int speckeys_bool(const config_setting_t *g, const char *key, bool *out, load_err *err)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s)
        return 0;
    if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
        load_fail(err, s, "key '%s': expected true or false", key);
        return -1;
    }
    *out = config_setting_get_bool(s) != 0;
    return 0;
}

void speckeys_print(FILE *out)
{
    for (int ns = 0; ns < SPECKEYS_NNS; ns++) {
        fprintf(out, "%s:\n", speckeys_tables[ns].title);
        for (size_t i = 0; i < speckeys_tables[ns].n; i++) {
            const speckey *k = &speckeys_tables[ns].k[i];
            char range[160] = "";
            const char *unit = k->unit;
            if (k->hi > 0)
                snprintf(range, sizeof range, " {%.15g to %.15g", k->lo, k->hi);
            else if (k->hi == SPECKEYS_LOAD) {
                char r[64];
                snprintf(range, sizeof range, " {%s",
                         load_keys_range_text(LOAD_NS_SYSTEM, k->name, r, sizeof r));
                unit = load_keys_unit(LOAD_NS_SYSTEM, k->name);
            }
            if (range[0]) {
                size_t used = strlen(range);
                bool dimensionless = !unit || strcmp(unit, "1") == 0;
                snprintf(range + used, sizeof range - used, "%s%s}",
                         dimensionless ? "" : " ", dimensionless ? "" : unit);
            }
            fprintf(out, "  %-26s %s%s%s\n", k->name, k->doc, range,
                    k->fid == SPECKEYS_MADMAX     ? " [madmax]"
                    : k->fid == SPECKEYS_DETAILED ? " [detailed]"
                                                  : "");
        }
    }
}

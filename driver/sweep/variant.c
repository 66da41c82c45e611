/*
 * variant.c - the variants of a hardware generation a detailed
 * system_grid group generates (see variant.h): scaled hardware figures,
 * pods, oversubscription and collectives, their names and factors.
 */
#include "variant.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../load/load.h"
#include "../suggest.h"
#include "speckeys.h"

/* Short names of scaled hardware keys in generated system names
 * ("h100-sxm-80g/128x8/bf16x1.5/hbmbwx2"); a key not listed is named
 * in full. */
static const char *variant_short(const char *key)
{
    static const char *const tab[][2] = {
        {"peak_fp32_flops", "fp32"},      {"peak_tf32_flops", "tf32"},
        {"peak_bf16_flops", "bf16"},      {"peak_fp8_flops", "fp8"},
        {"peak_int8_ops", "int8"},        {"mem_capacity_bytes", "hbm"},
        {"mem_bw_bytes_per_s", "hbmbw"},  {"mem_bw_efficiency", "hbmeff"},
        {"attention_efficiency", "attn"}, {"attention_tuned_efficiency", "attnt"},
        {"kernel_overhead_s", "launch"},  {"scaleup_devices", "sud"},
        {"scaleup_bytes_per_s", "subw"},  {"scaleup_latency_s", "sulat"},
        {"scaleup_efficiency", "sueff"},  {"nic_bytes_per_s", "nic"},
        {"nic_latency_s", "niclat"},      {"nic_efficiency", "niceff"},
        {"board_power_w", "power"},       {"idle_power_w", "idle"},
        {"price_per_hour_usd", "price"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(tab[i][0], key) == 0)
            return tab[i][1];
    return key;
}

void variant_free(variant_axes *x)
{
    for (int a = 0; a < x->nax; a++)
        free(x->f[a]);
    free(x->pod);
    free(x->ovs);
    memset(x, 0, sizeof *x);
}

/* Key `key` of sp->scale_keys, added when new; -1 with err set when the
 * spec scales more than SPEC_SCALE_MAX keys. */
static int variant_key(spec *sp, const config_setting_t *s, const char *key,
                       load_err *err)
{
    for (int k = 0; k < sp->nscale; k++)
        if (strcmp(sp->scale_keys[k], key) == 0)
            return k;
    if (sp->nscale == SPEC_SCALE_MAX) {
        load_fail(err, s, "key 'scale': a spec scales at most %d hardware keys",
                  SPEC_SCALE_MAX);
        return -1;
    }
    snprintf(sp->scale_keys[sp->nscale], SPEC_SCALE_KEY, "%s", key);
    return sp->nscale++;
}

/* Reads `scale` of a grid group: a group of numeric hardware keys, each
 * with a non-empty array of factors > 0. */
static int variant_scale(spec *sp, const config_setting_t *g, variant_axes *x,
                         load_err *err)
{
    const config_setting_t *sc = config_setting_get_member(g, "scale");
    if (!sc)
        return 0;
    if (!config_setting_is_group(sc) || config_setting_length(sc) == 0) {
        load_fail(err, sc, "key 'scale': expected a group { KEY = [factors]; "
                  "... } of hardware keys (`madsweep keys`, hardware)");
        return -1;
    }
    hw_t probe;
    memset(&probe, 0, sizeof probe);
    for (int i = 0; i < config_setting_length(sc); i++) {
        const config_setting_t *m = config_setting_get_elem(sc, (unsigned)i);
        const char *key = config_setting_name(m);
        double v;
        if (load_hw_number(&probe, key, &v) != 0) {
            char list[1024], hint[SUGGEST_NAME_MAX + 32];
            suggest sg;
            suggest_init(&sg, key);
            load_hw_number_keys(list, sizeof list, &sg);
            load_fail(err, m, "key 'scale': '%s' is not a numeric hardware key%s "
                      "(keys: %s)", key, suggest_hint(&sg, hint, sizeof hint), list);
            return -1;
        }
        if ((strcmp(key, "nic_bytes_per_s") == 0 &&
             (config_setting_get_member(g, "nic_scale") ||
              config_setting_get_member(g, "nic_gbps_per_device"))) ||
            (strcmp(key, "scaleup_devices") == 0 &&
             config_setting_get_member(g, "devices_per_node"))) {
            load_fail(err, m, "key 'scale': '%s' and the group's %s set one "
                      "figure twice; give one of them", key,
                      key[0] == 'n' ? "nic_scale/nic_gbps_per_device"
                                    : "devices_per_node");
            return -1;
        }
        int k = variant_key(sp, m, key, err);
        if (k < 0 || speckeys_numbers(SPECKEYS_GRID, "scale", sc, key, false, 0,
                                      &x->f[x->nax], &x->nf[x->nax], err) != 0)
            return -1;
        x->key[x->nax++] = k;
    }
    return 0;
}

/* Reads the scale, pod_devices, pod_oversubscription and collective axes
 * of a detailed grid group. */
int variant_read(spec *sp, const config_setting_t *g, variant_axes *x,
                 load_err *err)
{
    memset(x, 0, sizeof *x);
    if (variant_scale(sp, g, x, err) ||
        speckeys_numbers(SPECKEYS_GRID, NULL, g, "pod_devices", true, 0, &x->pod, &x->npod,
                         err) ||
        speckeys_numbers(SPECKEYS_GRID, NULL, g, "pod_oversubscription", false, 0, &x->ovs,
                         &x->novs, err))
        return -1;
    const config_setting_t *cs = config_setting_get_member(g, "collective");
    if (!cs)
        return 0;
    bool one = config_setting_get_string(cs) != NULL;
    int n = one ? 1 : config_setting_is_array(cs) ? config_setting_length(cs) : 0;
    if (n < 1 || n > 4) {
        load_fail(err, cs, "key 'collective': expected \"auto\", \"ring\", \"tree\", "
                  "\"hierarchical\" or an array of them");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const char *a = one ? config_setting_get_string(cs)
                            : config_setting_get_string_elem(cs, (unsigned)i);
        int v = a ? topo_algo_parse(a) : -1;
        if (v < 0) {
            load_fail(err, cs, "key 'collective': element %d: expected \"auto\", "
                      "\"ring\", \"tree\" or \"hierarchical\"", i);
            return -1;
        }
        x->alg[x->nalg++] = v;
    }
    return 0;
}

/* Appends to *name the text `fmt` (a name part); -1 with err set when
 * the name would pass HW_NAME_MAX - 1 characters. */
int variant_name_add(char *name, const config_setting_t *g, load_err *err,
                     const char *fmt, ...)
{
    size_t used = strlen(name);
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(name + used, HW_NAME_MAX - used, fmt, ap);
    va_end(ap);
    if (w < 0 || used + (size_t)w >= HW_NAME_MAX) {
        load_fail(err, g, "system_grid: the generated system name '%s...' is "
                  "longer than %d characters; scale fewer keys in one group or "
                  "name the hardware shorter", name, HW_NAME_MAX - 1);
        return -1;
    }
    return 0;
}

/* Appends system variant `v` of a grid group to sp: y (sizes and NIC
 * set) takes variant v of x's pod, oversubscription and collective
 * axes; fac holds the factors of sp's scale keys, `tail` the scaled
 * figures' name part. */
int variant_push(spec *sp, const config_setting_t *g, topo_system_t *y,
                 const variant_axes *x, int64_t v, const double *fac,
                 const char *tail, load_err *err)
{
    if (x->nalg > 0) {
        y->algo = (topo_algo)x->alg[v % x->nalg];
        v /= x->nalg;
        if (variant_name_add(y->name, g, err, "/%s", y->algo == TOPO_TREE ? "tree"
                          : y->algo == TOPO_HIERARCHICAL ? "hier"
                          : y->algo == TOPO_RING ? "ring" : "auto"))
            return -1;
    }
    if (x->novs > 0) {
        y->pod_oversubscription = x->ovs[v % x->novs];
        v /= x->novs;
        if (variant_name_add(y->name, g, err, "/ovs%g", y->pod_oversubscription))
            return -1;
    }
    if (x->npod > 0) {
        y->pod_devices = (int64_t)x->pod[v % x->npod];
        if (variant_name_add(y->name, g, err, "/pod%lld", (long long)y->pod_devices))
            return -1;
    }
    if (variant_name_add(y->name, g, err, "%s", tail))
        return -1;
    const char *bad = NULL;
    status_code st = topo_system_derive(y, &bad);
    if (st != STATUS_OK) {
        char why[200];
        load_fail(err, g, "system_grid: generated system '%s': key '%s': %s",
                  y->name, bad ? bad : "?", load_system_why(y, st, bad, why, sizeof why));
        return -1;
    }
    if (load_system_pod_check(g, y, err) != 0) { /* a pod dropped, ovs for nothing */
        size_t n = strlen(err->text);
        snprintf(err->text + n, sizeof err->text - n, " (a system this grid group "
                 "generates; give the sizes that need a pod a group of their own)");
        return -1;
    }
    memcpy(&sp->scale[sp->nsystems * SPEC_SCALE_MAX], fac,
           SPEC_SCALE_MAX * sizeof *fac);
    sp->nsystems++;
    return 0;
}

/* Grows sp->dsystems and sp->scale by `add` systems (scale rows of the
 * systems before the first grid: factors 1). */
int variant_grow(spec *sp, const config_setting_t *g, int64_t add,
                 load_err *err)
{
    size_t n = (size_t)(sp->nsystems + add);
    topo_system_t *grown = realloc(sp->dsystems, n * sizeof *grown);
    if (grown)
        sp->dsystems = grown;
    bool fresh = sp->scale == NULL;
    double *sc = grown ? realloc(sp->scale, n * SPEC_SCALE_MAX * sizeof *sc) : NULL;
    if (!sc) {
        load_fail(err, g, "system_grid: out of memory");
        return -1;
    }
    sp->scale = sc;
    for (int64_t i = 0; fresh && i < sp->nsystems * SPEC_SCALE_MAX; i++)
        sc[i] = 1.0;
    return 0;
}

int64_t variant_combos(const variant_axes *x)
{
    int64_t n = 1;
    for (int a = 0; a < x->nax; a++)
        if (__builtin_mul_overflow(n, (int64_t)x->nf[a], &n))
            return -1;
    return n;
}

int variant_combo(const spec *sp, const config_setting_t *g, const variant_axes *x,
                  int64_t c, const hw_t *hw, hw_t *out, double fac[SPEC_SCALE_MAX],
                  char *tail, size_t size, load_err *err)
{
    *out = *hw;
    for (int k = 0; k < SPEC_SCALE_MAX; k++)
        fac[k] = 1.0;
    for (int a = x->nax - 1; a >= 0; a--) { /* the last key fastest */
        double f = x->f[a][c % x->nf[a]], v = 0;
        const char *key = sp->scale_keys[x->key[a]];
        c /= x->nf[a];
        fac[x->key[a]] = f;
        const config_setting_t *at = config_setting_get_member(
            config_setting_get_member(g, "scale"), key);
        if (load_hw_number(hw, key, &v) == 0 && !(v > 0)) {
            /* every factor of 0 is 0: identical variants named apart */
            load_fail(err, at ? at : g, "key 'scale': '%s' is 0 on hardware '%s' (it has "
                      "none): scaling it would make %d identical variants; scale it on "
                      "hardware that has it, in a grid group of its own", key, hw->name,
                      x->nf[a]);
            return -1;
        }
        if (load_hw_scale(out, key, f) > 0) {
            load_fail(err, at ? at : g, "key 'scale': '%s' of hardware '%s' is a whole "
                      "number (%.17g); x %g = %.17g is not (it would be rounded): give "
                      "factors that keep it whole", key, hw->name, v, f, v * f);
            return -1;
        }
    }
    size_t used = 0;
    tail[0] = '\0';
    for (int a = 0; a < x->nax && used < size; a++) {
        int w = snprintf(tail + used, size - used, "/%sx%g",
                         variant_short(sp->scale_keys[x->key[a]]), fac[x->key[a]]);
        used += w > 0 ? (size_t)w : 0;
    }
    return 0;
}

int variant_figures(spec *sp, const config_setting_t *at, load_err *err)
{
    if (sp->nscale == 0)
        return 0;
    sp->scale_fig = malloc((size_t)sp->nsystems * SPEC_SCALE_MAX * sizeof *sp->scale_fig);
    if (!sp->scale_fig) {
        load_fail(err, at, "system_grid: out of memory");
        return -1;
    }
    for (int64_t i = 0; i < sp->nsystems; i++)
        for (int k = 0; k < sp->nscale; k++)
            (void)load_hw_number(&sp->dsystems[i].hw, sp->scale_keys[k],
                                 &sp->scale_fig[i * SPEC_SCALE_MAX + k]);
    return 0;
}

/* The grid group system i came from (NULL: key 'systems'). */
static const config_setting_t *variant_origin(const config_setting_t *grid,
                                              const int64_t *first, int ngroups,
                                              int64_t i)
{
    int g = ngroups - 1;
    while (g >= 0 && first[g] > i)
        g--;
    return g < 0 ? NULL : config_setting_get_elem(grid, (unsigned)g);
}

/* The name of system i of either fidelity (a detailed spec mirrors its
 * systems into sp->systems only after the grid). */
static const char *variant_system_name(const spec *sp, int64_t i)
{
    return sp->dsystems ? sp->dsystems[i].name : sp->systems[i].name;
}


/* Every two systems of a spec are named apart (a generated name never
 * stands for two systems); a clash names both places: of the clashes,
 * the one whose first system comes first. Sorted, not compared pairwise
 * (issue 29: 64,000 variants took minutes in this check alone). */
int variant_names_apart(const spec *sp, const config_setting_t *grid,
                        const int64_t *first, int ngroups, load_err *err)
{
    if (sp->nsystems < 2)
        return 0;
    load_named *v = malloc((size_t)sp->nsystems * sizeof *v);
    if (!v) {
        load_fail(err, grid, "system_grid: out of memory");
        return -1;
    }
    for (int64_t k = 0; k < sp->nsystems; k++)
        v[k] = (load_named){variant_system_name(sp, k), k};
    load_named_sort(v, sp->nsystems);
    int64_t i = -1, j = -1;
    for (int64_t k = 1; k < sp->nsystems; k++)
        if (strcmp(v[k - 1].name, v[k].name) == 0 && (k < 2 || strcmp(v[k - 2].name,
                                                                       v[k].name) != 0) &&
            (i < 0 || v[k - 1].i < i)) {
            i = v[k - 1].i; /* the first two of a run of one name */
            j = v[k].i;
        }
    free(v);
    if (i < 0)
        return 0;
    const config_setting_t *a = variant_origin(grid, first, ngroups, i),
                           *b = variant_origin(grid, first, ngroups, j);
    const char *fa = a ? config_setting_source_file(a) : NULL;
    char where[600];
    if (a)
        snprintf(where, sizeof where, "the first from the group at %s:%d", fa ? fa : "?",
                 config_setting_source_line(a));
    else
        snprintf(where, sizeof where, "the first from key 'systems'");
    load_fail(err, b ? b : grid, "key 'system_grid': two systems are named '%s' (%s; give "
              "each grid group other figures)", variant_system_name(sp, i), where);
    return -1;
}

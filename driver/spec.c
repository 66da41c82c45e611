/*
 * spec.c - loading sweep specifications (see spec.h for the format).
 *
 * Invariant after a successful spec_load(): every axis has at least one
 * value, every model and system passed load_model()/load_system() (so
 * their derived figures are filled), and every explicit strategy parsed.
 * Validity of combinations is not checked here: that is the sweep's job,
 * point by point, and invalid combinations are data, not errors.
 */
#define _POSIX_C_SOURCE 200809L
#include "spec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/detailed.h"
#include "keep.h"
#include "overlay.h"
#include "speckeys.h"
#include "variant.h"
#include "suggest.h"

#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))

/* Catalogue files opened on demand, destroyed by spec_load; each one
 * opened is noted in `reads` (provenance). */
typedef struct spec_cat {
    config_t cfg;
    int open;
    load_reads *reads;
} spec_cat;

static char *spec_read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (len + 1 < cap)
            break;
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb) {
            free(buf);
            buf = NULL;
        }
        buf = nb;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* The list `list` of catalogue file `file`, opened once. */
static const config_setting_t *spec_catalogue(spec_cat *cat,
                                              const config_setting_t *at,
                                              const char *key,
                                              const char *configs_dir,
                                              const char *file,
                                              const char *list, load_err *err)
{
    if (!cat->open) {
        char path[1024];
        load_err cerr;
        snprintf(path, sizeof path, "%s/%s", configs_dir, file);
        if (load_open(&cat->cfg, path, configs_dir, &cerr) != 0) {
            load_fail(err, at, "key '%s': the catalogue could not be read: %s",
                      key, cerr.text);
            return NULL;
        }
        cat->open = 1;
        load_reads_add(cat->reads, path);
    }
    const config_setting_t *l = config_lookup(&cat->cfg, list);
    if (!l || !config_setting_is_list(l)) {
        load_fail(err, at, "key '%s': catalogue %s/%s has no list '%s'", key,
                  configs_dir, file, list);
        return NULL;
    }
    if (load_unique(l, list, err) != 0) /* a catalogue's names are unique */
        return NULL;
    return l;
}

/* Loads one model or system group into slot i of *arr. */
typedef int (*spec_loader)(const config_setting_t *g, const char *configs_dir,
                           load_reads *reads, void *obj, load_err *err);

static int spec_load_model(const config_setting_t *g, const char *configs_dir,
                           load_reads *reads, void *obj, load_err *err)
{
    (void)configs_dir;
    (void)reads;
    return load_model(g, obj, err);
}

static int spec_load_system(const config_setting_t *g, const char *configs_dir,
                            load_reads *reads, void *obj, load_err *err)
{
    return load_system(g, configs_dir, reads, obj, err);
}

static int spec_load_dmodel(const config_setting_t *g, const char *configs_dir,
                            load_reads *reads, void *obj, load_err *err)
{
    (void)configs_dir;
    (void)reads;
    return load_dmodel(g, obj, err);
}

static int spec_load_dsystem(const config_setting_t *g, const char *configs_dir,
                             load_reads *reads, void *obj, load_err *err)
{
    return load_dsystem(g, configs_dir, reads, obj, err);
}

static int spec_load_stack(const config_setting_t *g, const char *configs_dir,
                           load_reads *reads, void *obj, load_err *err)
{
    (void)reads;
    return load_stack_in(g, configs_dir, obj, err);
}

/* Fills an axis of models or systems from `s`: "all", or a list/array
 * of names and inline groups. */
static int spec_entities(const config_setting_t *s, const char *key,
                         spec_cat *cat, const char *configs_dir,
                         const char *file, size_t elem, spec_loader loader,
                         void **out, int64_t *n, load_err *err)
{
    const char *all = config_setting_get_string(s);
    const config_setting_t *src = s;
    bool from_cat = false;
    if (all) {
        if (strcmp(all, "all") != 0) {
            load_fail(err, s, "key '%s': expected a list of names or \"all\", "
                      "got \"%s\"", key, all);
            return -1;
        }
        src = spec_catalogue(cat, s, key, configs_dir, file, key, err);
        if (!src)
            return -1;
        from_cat = true;
    } else if (!config_setting_is_list(s) && !config_setting_is_array(s)) {
        load_fail(err, s, "key '%s': expected a list of catalogue names or "
                  "groups, or \"all\"", key);
        return -1;
    }
    int len = config_setting_length(src);
    if (len == 0) {
        load_fail(err, s, "key '%s': empty list", key);
        return -1;
    }
    char *arr = calloc((size_t)len, elem);
    if (!arr) {
        load_fail(err, s, "key '%s': out of memory", key);
        return -1;
    }
    if (load_unique(src, key, err) != 0)
        goto fail;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(src, (unsigned)i);
        const config_setting_t *g = e;
        if (!from_cat && !config_setting_is_group(e)) {
            const char *name = config_setting_get_string(e);
            if (!name) {
                load_fail(err, e, "key '%s': element %d: expected a "
                          "catalogue name or a group", key, i);
                goto fail;
            }
            const config_setting_t *l =
                spec_catalogue(cat, e, key, configs_dir, file, key, err);
            if (!l)
                goto fail;
            g = load_find(l, name);
            if (!g) {
                char hint[SUGGEST_NAME_MAX + 32];
                load_fail(err, e, "key '%s': \"%s\" is not in the catalogue "
                          "%s/%s%s (`madsweep list %s` lists them)", key, name,
                          configs_dir, file, load_suggest(l, NULL, name, hint,
                                                          sizeof hint), key);
                goto fail;
            }
        }
        if (loader(g, configs_dir, cat->reads, arr + (size_t)i * elem, err) != 0)
            goto fail;
    }
    *out = arr;
    *n = len;
    return 0;
fail:
    free(arr);
    return -1;
}

/* The largest value of an array key (spec_numbers), from the key tables
 * (speckeys.h): the device bound for node and device counts, 2^40
 * samples for batches (also per model kind, global_batch = { llm =
 * [...]; dlrm = [...]; }); bandwidth scales and Gb/s up to 1e6 and 1e9.
 * Checked before any conversion to int64. */
static double spec_upper(const char *key)
{
    double lo = 0, hi = 0;
    if (strcmp(key, "llm") == 0 || strcmp(key, "dlrm") == 0)
        key = "global_batch";
    if (speckeys_range(SPECKEYS_GRID, key, &lo, &hi) ||
        speckeys_range(SPECKEYS_TOP, key, &lo, &hi))
        return hi;
    return (double)SPEC_MAX_DEVICES;
}

/* Reads an optional array of numbers; `def` when absent. */
int spec_numbers(const config_setting_t *g, const char *key, bool integer, double lo,
                 double def, double **out, int *n, load_err *err)
{
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
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        int t = config_setting_type(e);
        if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
            v[i] = (double)config_setting_get_int64(e);
        else if (t == CONFIG_TYPE_FLOAT && !integer)
            v[i] = config_setting_get_float(e);
        else {
            load_fail(err, s, "key '%s': element %d: expected %s", key, i,
                      integer ? "an integer" : "a number");
            free(v);
            return -1;
        }
        if (!(v[i] >= lo) || !isfinite(v[i]) || v[i] > spec_upper(key)) {
            load_fail(err, s, "key '%s': element %d: must be >= %g and at "
                      "most %g", key, i, lo, spec_upper(key));
            free(v);
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (v[j] == v[i]) {
                load_fail(err, s, "key '%s': element %d repeats element %d (%g); "
                          "each value may appear once", key, i, j, v[i]);
                free(v);
                return -1;
            }
    }
    *out = v;
    *n = len;
    return 0;
}

/* Element gi of the list system_grid as a group whose keys are all grid
 * keys of the fidelity, with nodes (or, detailed, devices); NULL with
 * err set. */
static const config_setting_t *spec_grid_group(const config_setting_t *grid,
                                               int gi, eval_fidelity fid,
                                               load_err *err)
{
    const config_setting_t *g = config_setting_get_elem(grid, (unsigned)gi);
    if (!config_setting_is_group(g)) {
        load_fail(err, g, "key 'system_grid': element %d: expected a group", gi);
        return NULL;
    }
    for (int k = 0; k < config_setting_length(g); k++) {
        const config_setting_t *m = config_setting_get_elem(g, (unsigned)k);
        if (!speckeys_known(SPECKEYS_GRID, 1u << fid, config_setting_name(m))) {
            char msg[800];
            load_fail(err, m, "%s", speckeys_unknown(SPECKEYS_GRID, 1u << fid,
                                                     config_setting_name(m),
                                                     "system_grid", msg,
                                                     sizeof msg));
            return NULL;
        }
    }
    bool nodes = config_setting_get_member(g, "nodes") != NULL;
    bool devices = config_setting_get_member(g, "devices") != NULL;
    if (nodes == devices && (fid == EVAL_DETAILED || !nodes)) {
        load_fail(err, g, fid == EVAL_DETAILED
                              ? "system_grid: give one of 'nodes' (scale-up "
                                "domains) or 'devices'"
                              : "missing key 'nodes' in system_grid");
        return NULL;
    }
    return g;
}

/* Appends the systems generated by the groups of system_grid. */
/* The groups of a madmax system_grid; first[g]: group g's first system. */
static int spec_grid_groups(spec *sp, const config_setting_t *grid, spec_cat *cat,
                            const char *configs_dir, int64_t *first, load_err *err)
{
    for (int gi = 0; gi < config_setting_length(grid); gi++) {
        first[gi] = sp->nsystems;
        const config_setting_t *g = spec_grid_group(grid, gi, EVAL_MADMAX, err);
        if (!g)
            return -1;
        const config_setting_t *bs = config_setting_get_member(g, "base");
        const char *bname = bs ? config_setting_get_string(bs) : NULL;
        if (!bname) {
            load_fail(err, bs ? bs : g, "key 'base' in system_grid: expected "
                      "a catalogue system name");
            return -1;
        }
        const config_setting_t *l = spec_catalogue(
            cat, bs, "base", configs_dir, "systems.cfg", "systems", err);
        const config_setting_t *bg = l ? load_find(l, bname) : NULL;
        char hint[SUGGEST_NAME_MAX + 32];
        if (l && !bg)
            load_fail(err, bs, "key 'base': \"%s\" is not in the catalogue "
                      "%s/systems.cfg%s (`madsweep list systems` lists them)",
                      bname, configs_dir, load_suggest(l, NULL, bname, hint,
                                                       sizeof hint));
        cluster_t base;
        if (!bg || load_system(bg, configs_dir, cat->reads, &base, err) != 0 ||
            load_power(g, &base.board_power_w, &base.idle_power_w,
                       &base.price_per_hour_usd, err) != 0)
            return -1;
        double *nodes = NULL, *dpn = NULL, *nic = NULL;
        int nn = 0, nd = 0, nk = 0, rc = -1;
        if (spec_numbers(g, "nodes", true, 1, 0, &nodes, &nn, err) ||
            spec_numbers(g, "devices_per_node", true, 1,
                         (double)base.devices_per_node, &dpn, &nd, err) ||
            spec_numbers(g, "nic_scale", false, 1e-9, 1.0, &nic, &nk, err))
            goto out;
        int64_t add = (int64_t)nn * nd * nk;
        cluster_t *ns = realloc(sp->systems, (size_t)(sp->nsystems + add) *
                                                 sizeof *ns);
        if (!ns) {
            load_fail(err, g, "system_grid: out of memory");
            goto out;
        }
        sp->systems = ns;
        for (int a = 0; a < nn; a++)
            for (int b = 0; b < nd; b++)
                for (int c = 0; c < nk; c++) {
                    cluster_t *s = &sp->systems[sp->nsystems];
                    *s = base;
                    s->nodes = (int64_t)nodes[a];
                    s->devices = (int64_t)nodes[a] * (int64_t)dpn[b];
                    if (s->devices > SPEC_MAX_DEVICES) {
                        load_fail(err, g, "system_grid: %lld nodes x %lld "
                                  "devices is more than %lld devices",
                                  (long long)s->nodes, (long long)dpn[b],
                                  (long long)SPEC_MAX_DEVICES);
                        goto out;
                    }
                    s->nic_bidir_bytes_per_s = base.nic_bidir_bytes_per_s * nic[c];
                    if (s->nodes == 1)
                        s->allreduce_intra_fraction = 1.0;
                    int w = snprintf(s->name, sizeof s->name, "%s/%lldx%lld/nic%g",
                                     bname, (long long)s->nodes, (long long)dpn[b],
                                     nic[c]);
                    if (w < 0 || (size_t)w >= sizeof s->name) {
                        /* cut, it could name two systems alike (issue 19) */
                        load_fail(err, g, "system_grid: generated system name "
                                  "'%s/%lldx%lld/nic%g' is longer than %zu "
                                  "characters: shorten the system's name", bname,
                                  (long long)s->nodes, (long long)dpn[b], nic[c],
                                  sizeof s->name - 1);
                        goto out;
                    }
                    const char *bad = NULL;
                    status_code st = cluster_derive(s, &bad);
                    if (st != STATUS_OK) {
                        load_fail(err, g, "system_grid: generated system '%s': "
                                  "key '%s': %s", s->name, bad ? bad : "?",
                                  status_text(st));
                        goto out;
                    }
                    sp->nsystems++;
                }
        rc = 0;
    out:
        free(nodes);
        free(dpn);
        free(nic);
        if (rc)
            return -1;
    }
    return 0;
}

static int spec_grid(spec *sp, const config_setting_t *grid, spec_cat *cat,
                     const char *configs_dir, load_err *err)
{
    if (!config_setting_is_list(grid)) {
        load_fail(err, grid, "key 'system_grid': expected a list ( {...}, ... )");
        return -1;
    }
    int ngroups = config_setting_length(grid);
    int64_t *first = calloc((size_t)ngroups + 1, sizeof *first);
    if (!first) {
        load_fail(err, grid, "key 'system_grid': out of memory");
        return -1;
    }
    int rc = spec_grid_groups(sp, grid, cat, configs_dir, first, err) ||
                     variant_names_apart(sp, grid, first, ngroups, err)
                 ? -1
                 : 0;
    free(first);
    return rc;
}

/* The cluster_t mirror of detailed system i (name, devices, nodes), so
 * that code reading p->cluster (output rows, reports) sees the system. */
static void spec_mirror(const topo_system_t *d, cluster_t *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", d->name);
    c->devices = d->devices;
    c->devices_per_node = d->topo.level[0].span;
    c->nodes = c->devices_per_node > 0 ? d->devices / c->devices_per_node : 0;
    if (c->nodes * c->devices_per_node < d->devices)
        c->nodes++;
}

/* The hardware group element `he` of a grid names: itself when it is a
 * group, else the entry of the spec's own list `hardware`, else of the
 * catalogue hardware.cfg; NULL with err set. */
static const config_setting_t *spec_hw_group(const config_setting_t *he,
                                             const config_setting_t *own,
                                             spec_cat *cat, const char *configs_dir,
                                             load_err *err)
{
    if (config_setting_is_group(he))
        return he;
    const char *hname = config_setting_get_string(he);
    if (!hname) {
        load_fail(err, he, "key 'hardware': expected a hardware name or group");
        return NULL;
    }
    const config_setting_t *hg = load_find(own, hname);
    if (hg)
        return hg;
    const config_setting_t *l = spec_catalogue(cat, he, "hardware", configs_dir,
                                               "hardware.cfg", "hardware", err);
    hg = l ? load_find(l, hname) : NULL;
    if (l && !hg) {
        char hint[SUGGEST_NAME_MAX + 32];
        load_fail(err, he, "key 'hardware': \"%s\" is not in the catalogue "
                  "%s/hardware.cfg%s%s (`madsweep list hardware` lists them)",
                  hname, configs_dir, own ? " nor in the spec's list 'hardware'" : "",
                  load_suggest(own, l, hname, hint, sizeof hint));
    }
    return hg;
}

/* The systems of one hardware generation of a detailed grid group g:
 * nodes (or devices) x devices_per_node x NIC figures x the pod,
 * oversubscription and collective axes of x; hw has the scaled figures
 * (factors fac, name part `tail`). */
static int spec_dgrid_hw(spec *sp, const config_setting_t *g, const hw_t *hw,
                         const variant_axes *x, const double *fac,
                         const char *tail, load_err *err)
{
    double *nodes = NULL, *devs = NULL, *dpn = NULL, *gbps = NULL, *scale = NULL;
    int nn = 0, nv = 0, nd = 0, ng = 0, ns = 0, rc = -1;
    if (spec_numbers(g, "nodes", true, 1, 0, &nodes, &nn, err) ||
        spec_numbers(g, "devices", true, 1, 0, &devs, &nv, err) ||
        spec_numbers(g, "devices_per_node", true, 1, (double)hw->scaleup_devices,
                     &dpn, &nd, err) ||
        spec_numbers(g, "nic_gbps_per_device", false, 1e-9, 0, &gbps, &ng, err) ||
        spec_numbers(g, "nic_scale", false, 1e-9, 0, &scale, &ns, err))
        goto out;
    if (ng > 0 && ns > 0) {
        load_fail(err, config_setting_get_member(g, "nic_scale"),
                  "system_grid: give nic_gbps_per_device (absolute) or nic_scale "
                  "(relative to the hardware's), not both");
        goto out;
    }
    const double *size = nn > 0 ? nodes : devs;
    int nsize = nn > 0 ? nn : nv;
    int nk = ng > 0 ? ng : ns > 0 ? ns : 1;
    int64_t nvar = (int64_t)(x->nalg > 0 ? x->nalg : 1) * (x->novs > 0 ? x->novs : 1) *
                   (x->npod > 0 ? x->npod : 1);
    if (variant_grow(sp, g, (int64_t)nsize * nd * nk * nvar, err))
        goto out;
    for (int a = 0; a < nsize; a++)
        for (int b = 0; b < nd; b++)
            for (int c = 0; c < nk; c++)
                for (int64_t v = 0; v < nvar; v++) {
                topo_system_t *y = &sp->dsystems[sp->nsystems];
                memset(y, 0, sizeof *y);
                y->hw = *hw;
                int64_t per = (int64_t)dpn[b], n = (int64_t)size[a];
                if (nn == 0) { /* devices: whole scale-up domains */
                    if (n < per)
                        per = n; /* one partial domain */
                    per = hw_job_domain(hw, n, per); /* whole trays */
                    if (n % per != 0) {
                        char advice[160];
                        load_domain_advice(advice, sizeof advice, n, per);
                        load_fail(err, config_setting_get_member(g, "devices"),
                                  "system_grid: %lld devices of hardware '%s' are "
                                  "not a whole number of scale-up domains of %lld "
                                  "devices (devices_per_node); %s", (long long)n,
                                  hw->name, (long long)per, advice);
                        goto out;
                    }
                    n /= per;
                }
                if (n > SPEC_MAX_DEVICES / per) {
                    load_fail(err, g, "system_grid: %lld nodes x %lld devices "
                              "is more than %lld devices", (long long)n,
                              (long long)per, (long long)SPEC_MAX_DEVICES);
                    goto out;
                }
                y->devices_per_node = per;
                y->devices = n * per;
                char nicx[40] = "";
                if (ng > 0) {
                    y->nic_gbps_per_device = gbps[c];
                    snprintf(nicx, sizeof nicx, "/nic%g", gbps[c]);
                } else if (ns > 0) {
                    y->hw.nic_bytes_per_s = hw->nic_bytes_per_s * scale[c];
                    snprintf(nicx, sizeof nicx, "/nicx%g", scale[c]);
                }
                y->name[0] = '\0';
                if (variant_name_add(y->name, g, err, "%s/%lldx%lld%s", hw->name,
                                  (long long)n, (long long)per, nicx) ||
                    variant_push(sp, g, y, x, v, fac, tail, err))
                    goto out;
            }
    rc = 0;
out:
    free(nodes);
    free(devs);
    free(dpn);
    free(gbps);
    free(scale);
    return rc;
}

/* Every combination of the scale factors of x on hardware hw (the
 * scaled hardware, its factors and name part: variant_combo), each
 * passed to spec_dgrid_hw. */
static int spec_dgrid_scaled(spec *sp, const config_setting_t *g, const hw_t *hw,
                             const variant_axes *x, load_err *err)
{
    int64_t ncomb = variant_combos(x);
    for (int64_t c = 0; c < ncomb; c++) {
        hw_t h;
        double fac[SPEC_SCALE_MAX];
        char tail[HW_NAME_MAX];
        variant_combo(sp, x, c, hw, &h, fac, tail, sizeof tail);
        if (spec_dgrid_hw(sp, g, &h, x, fac, tail, err))
            return -1;
    }
    return 0;
}

/* Detailed fidelity: appends the systems of system_grid groups
 * { hardware = "h100-sxm-80g" or [...] or ( "name", { group } );
 *   nodes = [...] or devices = [...]; devices_per_node = [...];
 *   nic_gbps_per_device = [...] or nic_scale = [...];
 *   scale = { KEY = [...]; ... }; pod_devices = [...];
 *   pod_oversubscription = [...]; collective = [...]; }. */
static int spec_dgrid(spec *sp, const config_setting_t *grid,
                      const config_setting_t *own, spec_cat *cat,
                      const char *configs_dir, load_err *err)
{
    if (!config_setting_is_list(grid)) {
        load_fail(err, grid, "key 'system_grid': expected a list ( {...}, ... )");
        return -1;
    }
    int ngroups = config_setting_length(grid);
    int64_t *first = calloc((size_t)ngroups + 1, sizeof *first);
    if (!first) {
        load_fail(err, grid, "key 'system_grid': out of memory");
        return -1;
    }
    for (int gi = 0; gi < ngroups; gi++) {
        first[gi] = sp->nsystems;
        const config_setting_t *g = spec_grid_group(grid, gi, EVAL_DETAILED, err);
        if (!g) {
            free(first);
            return -1;
        }
        const config_setting_t *hs = config_setting_get_member(g, "hardware");
        bool one = hs && (config_setting_get_string(hs) || config_setting_is_group(hs));
        if (!hs || (!one && !((config_setting_is_array(hs) ||
                               config_setting_is_list(hs)) &&
                              config_setting_length(hs) > 0))) {
            load_fail(err, hs ? hs : g, "key 'hardware' in system_grid: expected "
                      "a hardware name, a group, or a non-empty list of them "
                      "(hardware.cfg)");
            free(first);
            return -1;
        }
        variant_axes x;
        if (variant_read(sp, g, &x, err)) {
            variant_free(&x);
            free(first);
            return -1;
        }
        int nh = one ? 1 : config_setting_length(hs);
        for (int h = 0; h < nh; h++) {
            const config_setting_t *he =
                one ? hs : config_setting_get_elem(hs, (unsigned)h);
            const config_setting_t *hg = spec_hw_group(he, own, cat, configs_dir, err);
            hw_t hw;
            if (!hg || load_hw_in(hg, configs_dir, cat->reads, &hw, err) != 0 ||
                load_power(g, &hw.board_power_w, &hw.idle_power_w,
                           &hw.price_per_hour_usd, err) != 0 ||
                spec_dgrid_scaled(sp, g, &hw, &x, err) != 0) {
                variant_free(&x);
                free(first);
                return -1;
            }
        }
        variant_free(&x);
    }
    int rc = variant_figures(sp, grid, err) ||
                     variant_names_apart(sp, grid, first, ngroups, err)
                 ? -1
                 : 0;
    free(first);
    return rc;
}

static int spec_bool(const config_setting_t *g, const char *key, bool *out,
                     load_err *err)
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

/* Serving keys of an inference task: concurrency (an integer, "max" or
 * "sla") and the SLA (ttft_max_s, tpot_max_s). */
static int spec_serving(const config_setting_t *e, spec_task *t, load_err *err)
{
    static const char *const lim[2] = {"ttft_max_s", "tpot_max_s"};
    double *limv[2] = {&t->ttft_max_s, &t->tpot_max_s};
    const config_setting_t *cs = config_setting_get_member(e, "concurrency");
    for (int j = 0; j < 3; j++) {
        const config_setting_t *ks = j < 2 ? config_setting_get_member(e, lim[j]) : cs;
        if (ks && t->kind != TASK_INFERENCE) {
            load_fail(err, ks, "task '%s': key '%s' only applies to type \"inference\"",
                      t->name, j < 2 ? lim[j] : "concurrency");
            return -1;
        }
    }
    for (int j = 0; j < 2; j++) {
        const config_setting_t *ks = config_setting_get_member(e, lim[j]);
        if (!ks)
            continue;
        int ty = config_setting_type(ks);
        double v = ty == CONFIG_TYPE_FLOAT ? config_setting_get_float(ks)
                   : ty == CONFIG_TYPE_INT || ty == CONFIG_TYPE_INT64
                       ? (double)config_setting_get_int64(ks)
                       : -1.0;
        if (!(v > 0.0 && v <= 3600.0)) {
            load_fail(err, ks, "key '%s': expected a number of seconds in (0, 3600]", lim[j]);
            return -1;
        }
        *limv[j] = v;
    }
    if (!cs)
        return 0;
    int ty = config_setting_type(cs);
    const char *text = ty == CONFIG_TYPE_STRING ? config_setting_get_string(cs) : NULL;
    if (text && (strcmp(text, "max") == 0 || strcmp(text, "sla") == 0)) {
        t->concurrency = strcmp(text, "max") == 0 ? TASK_CONC_MAX : TASK_CONC_SLA;
    } else if ((ty == CONFIG_TYPE_INT || ty == CONFIG_TYPE_INT64) &&
               config_setting_get_int64(cs) >= 1 &&
               config_setting_get_int64(cs) <= (INT64_C(1) << 24)) {
        t->concurrency = (int64_t)config_setting_get_int64(cs);
    } else {
        load_fail(err, cs, "key 'concurrency': expected an integer from 1 to %lld, \"max\" "
                  "or \"sla\"", (long long)(INT64_C(1) << 24));
        return -1;
    }
    return 0;
}

/* A serving task's disaggregated prefill pool (`prefill = { ... }`, the
 * keys of a point's, load.h load_prefill_pool, with tp required): its
 * hardware a name of the spec's list `hardware` or of hardware.cfg, or a
 * group; without one, each point's system lends its own. */
static int spec_prefill(const config_setting_t *e, spec_task *t, const config_setting_t *own,
                        spec_cat *cat, const char *configs_dir, load_err *err)
{
    const config_setting_t *g = config_setting_get_member(e, "prefill");
    if (!g)
        return 0;
    if (t->kind != TASK_INFERENCE || !config_setting_is_group(g)) {
        load_fail(err, g, "task '%s': key 'prefill' is a group { hardware; devices; tp; "
                  "... } of an \"inference\" task (a disaggregated prefill pool)", t->name);
        return -1;
    }
    if (load_prefill_pool(g, 0, &t->prefill, err))
        return -1;
    snprintf(t->prefill.system.name, sizeof t->prefill.system.name, "%s-prefill", t->name);
    const config_setting_t *hm = config_setting_get_member(g, "hardware");
    if (!hm)
        return 0;
    const config_setting_t *hg = spec_hw_group(hm, own, cat, configs_dir, err);
    if (!hg || load_hw_in(hg, configs_dir, cat->reads, &t->prefill.system.hw, err) != 0)
        return -1;
    t->prefill_hw = true;
    return load_prefill_derive(g, &t->prefill, err);
}

static int spec_tasks(spec *sp, const config_setting_t *s, const config_setting_t *own,
                      spec_cat *cat, const char *configs_dir, load_err *err)
{
    if (!config_setting_is_list(s) && !config_setting_is_array(s)) {
        load_fail(err, s, "key 'tasks': expected a list of task types or "
                  "groups");
        return -1;
    }
    int n = config_setting_length(s);
    if (n == 0) {
        load_fail(err, s, "key 'tasks': empty list");
        return -1;
    }
    sp->tasks = calloc((size_t)n, sizeof *sp->tasks);
    if (!sp->tasks) {
        load_fail(err, s, "key 'tasks': out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        spec_task *t = &sp->tasks[i];
        t->min_frozen_layer = -1;
        t->dtype = HW_BF16;
        t->decode_tokens = SPEC_DECODE_TOKENS;
        const config_setting_t *ts = e;
        if (config_setting_is_group(e)) {
            for (int k = 0; k < config_setting_length(e); k++) {
                const config_setting_t *m =
                    config_setting_get_elem(e, (unsigned)k);
                const char *kn = config_setting_name(m);
                if (!speckeys_known(SPECKEYS_TASK, 1u << sp->fidelity, kn)) {
                    char msg[800];
                    load_fail(err, m, "%s", speckeys_unknown(SPECKEYS_TASK,
                                                             1u << sp->fidelity,
                                                             kn, "a task", msg,
                                                             sizeof msg));
                    return -1;
                }
            }
            ts = config_setting_get_member(e, "type");
            if (!ts) {
                load_fail(err, e, "missing key 'type' in task");
                return -1;
            }
        }
        const char *type = config_setting_get_string(ts);
        int k = type ? task_kind_parse(type) : -1;
        if (k < 0) {
            load_fail(err, ts, "key 'tasks': task type must be \"pretrain\", "
                      "\"finetune\" or \"inference\"");
            return -1;
        }
        t->kind = (task_kind)k;
        snprintf(t->name, sizeof t->name, "%s", type);
        if (!config_setting_is_group(e))
            continue;
        const char *label = NULL;
        if (config_setting_lookup_string(e, "name", &label) == CONFIG_TRUE)
            snprintf(t->name, sizeof t->name, "%s", label);
        if (spec_bool(e, "freeze_emb", &t->freeze_emb, err) ||
            spec_bool(e, "freeze_dense", &t->freeze_dense, err) ||
            spec_bool(e, "freeze_top_mlp", &t->freeze_top_mlp, err) ||
            spec_bool(e, "freeze_bot_mlp", &t->freeze_bot_mlp, err))
            return -1;
        const config_setting_t *ps = config_setting_get_member(e, "precision");
        if (ps) {
            const char *pt = config_setting_get_string(ps);
            int d = pt ? hw_dtype_parse(pt) : -1;
            if (d < 0) {
                load_fail(err, ps, "key 'precision': expected \"bf16\", "
                          "\"fp16\", \"fp8\", \"fp4\", \"tf32\" or \"fp32\"");
                return -1;
            }
            t->dtype = d;
        }
        static const char *const tok[2] = {"prompt_tokens", "decode_tokens"};
        int64_t *tokv[2] = {&t->prompt_tokens, &t->decode_tokens};
        for (int j = 0; j < 2; j++) {
            const config_setting_t *ks = config_setting_get_member(e, tok[j]);
            if (!ks)
                continue;
            int ty = config_setting_type(ks);
            if ((ty != CONFIG_TYPE_INT && ty != CONFIG_TYPE_INT64) ||
                config_setting_get_int64(ks) < 1 ||
                config_setting_get_int64(ks) > SPEC_MAX_TOKENS) {
                load_fail(err, ks, "key '%s': expected an integer from 1 to %lld",
                          tok[j], (long long)SPEC_MAX_TOKENS);
                return -1;
            }
            if (t->kind != TASK_INFERENCE) {
                load_fail(err, ks, "task '%s': key '%s' only applies to type "
                          "\"inference\"", t->name, tok[j]);
                return -1;
            }
            *tokv[j] = (int64_t)config_setting_get_int64(ks);
        }
        if (spec_serving(e, t, err) || spec_prefill(e, t, own, cat, configs_dir, err))
            return -1;
        const config_setting_t *mf = config_setting_get_member(e, "min_frozen_layer");
        if (mf) {
            int ty = config_setting_type(mf);
            if ((ty != CONFIG_TYPE_INT && ty != CONFIG_TYPE_INT64) ||
                config_setting_get_int64(mf) < 0 ||
                config_setting_get_int64(mf) > SPEC_MAX_LAYERS) {
                load_fail(err, mf, "key 'min_frozen_layer': expected an "
                          "integer from 0 to %lld", (long long)SPEC_MAX_LAYERS);
                return -1;
            }
            t->min_frozen_layer = (int64_t)config_setting_get_int64(mf);
        }
        const config_setting_t *fl = config_setting_get_member(e, "frozen_layers");
        if (fl) {
            int ty = config_setting_type(fl);
            if ((ty != CONFIG_TYPE_INT && ty != CONFIG_TYPE_INT64) ||
                config_setting_get_int64(fl) < 0 ||
                config_setting_get_int64(fl) > SPEC_MAX_LAYERS) {
                load_fail(err, fl, "key 'frozen_layers': expected an "
                          "integer from 0 to %lld", (long long)SPEC_MAX_LAYERS);
                return -1;
            }
            t->frozen_layers = (int64_t)config_setting_get_int64(fl);
        }
        if (t->kind != TASK_FINETUNE &&
            (t->freeze_emb || t->freeze_dense || t->freeze_top_mlp ||
             t->freeze_bot_mlp || mf || fl)) {
            load_fail(err, e, "task '%s': freeze keys only apply to type "
                      "\"finetune\"", t->name);
            return -1;
        }
    }
    sp->ntasks = n;
    /* two tasks of one name (unnamed groups take their type's) would be
     * evaluated apart and merged by `best --group task`: refused naming
     * both places (issue 19) */
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) {
            if (strcmp(sp->tasks[i].name, sp->tasks[j].name) != 0)
                continue;
            const config_setting_t *a = config_setting_get_elem(s, (unsigned)j);
            const char *fa = config_setting_source_file(a);
            load_fail(err, config_setting_get_elem(s, (unsigned)i), "key 'tasks': "
                      "two tasks are named \"%s\" (the first at %s:%d); a task is "
                      "named by its type unless it gives name = \"...\": name them "
                      "apart", sp->tasks[i].name, fa ? fa : "?",
                      config_setting_source_line(a));
            return -1;
        }
    return 0;
}

/* global_batch: an array for every model, or a group of arrays per model
 * kind { llm = [...]; dlrm = [...]; } (an LLM's batch is sequences, a
 * DLRM's samples: their sensible values differ by orders of magnitude).
 * The axis is the llm values then the dlrm values, each value once with
 * the kinds it applies to. */
static int spec_batches(spec *sp, const config_setting_t *s, load_err *err)
{
    static const char *const kinds[2] = {"llm", "dlrm"};
    static const model_kind kind_of[2] = {MODEL_LLM, MODEL_DLRM};
    const config_setting_t *parent = config_setting_parent(s);
    bool grouped = config_setting_is_group(s);
    if (grouped) {
        for (int k = 0; k < config_setting_length(s); k++) {
            const config_setting_t *m = config_setting_get_elem(s, (unsigned)k);
            const char *n = config_setting_name(m);
            if (strcmp(n, kinds[0]) != 0 && strcmp(n, kinds[1]) != 0) {
                load_fail(err, m, "unknown key '%s' in global_batch (expected "
                          "llm, dlrm)", n);
                return -1;
            }
        }
        if (config_setting_length(s) == 0) {
            load_fail(err, s, "key 'global_batch': empty group (expected "
                      "{ llm = [...]; dlrm = [...]; })");
            return -1;
        }
    }
    for (int k = 0; k < (grouped ? 2 : 1); k++) {
        double *gb = NULL;
        int ngb = 0;
        const config_setting_t *g = grouped ? s : parent;
        const char *key = grouped ? kinds[k] : "global_batch";
        if (spec_numbers(g, key, true, 1, 0, &gb, &ngb, err))
            return -1;
        unsigned mask = grouped ? 1u << kind_of[k] : (1u << MODEL_LLM) | (1u << MODEL_DLRM);
        int64_t *nb = realloc(sp->batches, (size_t)(sp->nbatches + ngb) * sizeof *nb);
        unsigned *nk = realloc(sp->batch_kinds,
                               (size_t)(sp->nbatches + ngb) * sizeof *nk);
        if (nb)
            sp->batches = nb;
        if (nk)
            sp->batch_kinds = nk;
        if (!nb || !nk) {
            free(gb);
            load_fail(err, s, "key 'global_batch': out of memory");
            return -1;
        }
        for (int i = 0; i < ngb; i++) {
            int64_t v = (int64_t)gb[i];
            int64_t j;
            for (j = 0; j < sp->nbatches && sp->batches[j] != v; j++)
                ;
            if (j == sp->nbatches) {
                sp->batches[sp->nbatches] = v;
                sp->batch_kinds[sp->nbatches++] = 0;
            }
            sp->batch_kinds[j] |= mask;
        }
        free(gb);
    }
    return 0;
}

/* Keys of a spec's tasks that only models of one kind read (the others
 * ignore them): with no model of that kind in the spec they would change
 * nothing, so they are refused with their line (issue 19: an LLM sweep
 * took freeze_top_mlp, a DLRM sweep decode_tokens, without a word). The
 * keys of one task type are spec_tasks'. A global_batch list of a kind
 * the spec lacks stays allowed: it gives no valid point, and a space of
 * none is data (tests/test_empty.sh). */
static int spec_kind_keys(const spec *sp, const config_setting_t *root, load_err *err)
{
    static const struct {
        const char *key;
        model_kind kind;
    } only[] = {
        {"freeze_top_mlp", MODEL_DLRM}, {"freeze_bot_mlp", MODEL_DLRM},
        {"freeze_dense", MODEL_LLM},    {"min_frozen_layer", MODEL_LLM},
        {"frozen_layers", MODEL_LLM},   {"prompt_tokens", MODEL_LLM},
        {"decode_tokens", MODEL_LLM},   {"concurrency", MODEL_LLM},
        {"ttft_max_s", MODEL_LLM},      {"tpot_max_s", MODEL_LLM},
        {"prefill", MODEL_LLM},
    };
    unsigned present = 0;
    for (int64_t i = 0; i < sp->nmodels; i++)
        present |= 1u << sp->models[i].kind;
    const config_setting_t *ts = config_setting_get_member(root, "tasks");
    int nt = ts ? config_setting_length(ts) : 0;
    for (int i = 0; i < nt; i++) {
        const config_setting_t *g = config_setting_get_elem(ts, (unsigned)i);
        if (!config_setting_is_group(g))
            continue;
        for (size_t k = 0; k < sizeof only / sizeof only[0]; k++) {
            const config_setting_t *m = config_setting_get_member(g, only[k].key);
            if (!m || (present & (1u << only[k].kind)))
                continue;
            bool llm = only[k].kind == MODEL_LLM;
            load_fail(err, m, "key '%s' only applies to %s models; the spec's "
                      "models are all %s, which would ignore it", only[k].key,
                      llm ? "LLM" : "DLRM", llm ? "DLRMs" : "LLMs");
            return -1;
        }
    }
    return 0;
}

/* A literal degree larger than any system (the product of all of them
 * is then bounded too: autoplan_resolve checks it against devices). */
static bool spec_degrees_too_large(const autoplan_tmpl *t, const char **why)
{
    for (int i = 0; i < t->nlevels; i++)
        if (t->level[i].kind == AUTOPLAN_NUM &&
            t->level[i].degree > SPEC_MAX_DEVICES) {
            *why = "a degree is larger than 2^24 devices";
            return true;
        }
    return false;
}

/* The list of strategy groups s: a non-empty list whose elements are all
 * groups (`shape` describes one, `alone` follows it in the element's
 * message), *out an array of as many zeroed elements of `size` bytes.
 * Returns the count, or -1 with the message. */
static int spec_strat_list(const config_setting_t *s, size_t size, void **out,
                           const char *shape, const char *alone, load_err *err)
{
    if (!config_setting_is_list(s) || config_setting_length(s) == 0) {
        load_fail(err, s, "key 'strategies': expected \"auto\" or a non-empty "
                  "list of %s groups", shape);
        return -1;
    }
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        if (!config_setting_is_group(e)) {
            load_fail(err, e, "key 'strategies': element %d: expected a group "
                      "%s%s", i, shape, alone);
            return -1;
        }
    }
    *out = calloc((size_t)n, size);
    if (!*out) {
        load_fail(err, s, "key 'strategies': out of memory");
        return -1;
    }
    return n;
}

/* Explicit detailed strategies: a list of groups of a detailed task's
 * strategy keys (load_dstrategy), each refused with its file and line. */
static int spec_dstrategies(spec *sp, const config_setting_t *s, load_err *err)
{
    void *a = NULL;
    int n = spec_strat_list(s, sizeof *sp->dstrats, &a, "{ tp = ...; pp = ...; ... }",
                            " (or \"auto\" alone)", err);
    if (n < 0)
        return -1;
    sp->dstrats = a;
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        if (load_dstrategy(e, &sp->dstrats[i], err) != 0)
            return -1;
    }
    sp->nstrats = n;
    sp->npar = 1;
    return 0;
}

static int spec_strategies(spec *sp, const config_setting_t *s, load_err *err)
{
    const char *text = config_setting_get_string(s);
    if (text) {
        if (strcmp(text, "auto") != 0) {
            load_fail(err, s, "key 'strategies': expected \"auto\" or a list "
                      "of { dense = \"...\"; embedding = \"...\"; } groups");
            return -1;
        }
        if (!sp->ops->auto_count || !sp->ops->auto_apply) {
            load_fail(err, s, "key 'strategies': fidelity '%s' has no auto "
                      "strategies", sp->ops->name);
            return -1;
        }
        sp->strat_auto = true;
        sp->nstrats = sp->ops->auto_count();
        sp->npar = 1;
        if (sp->fidelity == EVAL_DETAILED)
            detailed_auto_factors(&sp->npar, &sp->nstrats);
        return 0;
    }
    if (sp->fidelity == EVAL_DETAILED)
        return spec_dstrategies(sp, s, err);
    void *a = NULL;
    int n = spec_strat_list(s, sizeof *sp->strats, &a,
                            "{ dense = \"...\"; embedding = \"...\"; }", "", err);
    if (n < 0)
        return -1;
    sp->strats = a;
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        static const char *const comp[2] = {"dense", "embedding"};
        autoplan_tmpl *dst[2] = {&sp->strats[i].dense, &sp->strats[i].emb};
        if (config_setting_length(e) != 2 ||
            !config_setting_get_member(e, "dense") ||
            !config_setting_get_member(e, "embedding")) {
            load_fail(err, e, "key 'strategies': element %d: expected exactly "
                      "the keys 'dense' and 'embedding'", i);
            return -1;
        }
        for (int c = 0; c < 2; c++) {
            const config_setting_t *m = config_setting_get_member(e, comp[c]);
            const char *pt = config_setting_get_string(m);
            const char *why = "expected a string like \"fsdp:node,ddp:rest\"";
            if (!pt || autoplan_parse(pt, dst[c], &why) != 0 ||
                spec_degrees_too_large(dst[c], &why)) {
                load_fail(err, m, "key '%s': %s%s%s: %s", comp[c],
                          pt ? "\"" : "", pt ? pt : "", pt ? "\"" : "", why);
                return -1;
            }
        }
    }
    sp->nstrats = n;
    sp->npar = 1;
    return 0;
}

/* The stack axis: `stacks` (names of configs/stacks.cfg, inline groups
 * or "all"; detailed fidelity only), default the catalogue's "unknown"
 * (LOAD_STACK_DEFAULT, what a point naming no stack gets). The MAD-Max
 * fidelity models no software stack: its axis is one entry "none". */
static int spec_stacks(spec *sp, const config_setting_t *root, spec_cat *cat,
                       const char *configs_dir, load_err *err)
{
    const config_setting_t *ss = config_setting_get_member(root, "stacks");
    if (sp->fidelity != EVAL_DETAILED) {
        if (ss) {
            load_fail(err, ss, "key 'stacks': software stacks apply to the "
                      "detailed fidelity only (this spec is '%s')", sp->ops->name);
            return -1;
        }
        sp->stacks = calloc(1, sizeof *sp->stacks);
        if (!sp->stacks) {
            load_fail(err, root, "key 'stacks': out of memory");
            return -1;
        }
        snprintf(sp->stacks[0].name, sizeof sp->stacks[0].name, "none");
        snprintf(sp->stacks[0].summary, sizeof sp->stacks[0].summary,
                 "the %s fidelity models no software stack", sp->ops->name);
        sp->nstacks = 1;
        return 0;
    }
    void *arr = NULL;
    if (ss) {
        if (spec_entities(ss, "stacks", cat, configs_dir, "stacks.cfg",
                          sizeof(stack_desc), spec_load_stack, &arr,
                          &sp->nstacks, err))
            return -1;
        sp->stacks = arr;
        return 0;
    }
    const config_setting_t *l =
        spec_catalogue(cat, root, "stacks", configs_dir, "stacks.cfg", "stacks", err);
    if (!l)
        return -1;
    const config_setting_t *g = load_find(l, LOAD_STACK_DEFAULT);
    if (!g) {
        load_fail(err, root, "no stack named '%s' in %s/stacks.cfg (the default "
                  "of specs without key 'stacks')", LOAD_STACK_DEFAULT, configs_dir);
        return -1;
    }
    sp->stacks = calloc(1, sizeof *sp->stacks);
    if (!sp->stacks) {
        load_fail(err, root, "key 'stacks': out of memory");
        return -1;
    }
    sp->nstacks = 1;
    return load_stack_in(g, configs_dir, &sp->stacks[0], err);
}

int spec_load(const char *path, const char *configs_dir, spec *sp,
              load_err *err)
{
    return spec_load_stacks(path, configs_dir, NULL, sp, err);
}

int spec_load_stacks(const char *path, const char *configs_dir, const char *stacks_path,
                     spec *sp, load_err *err)
{
    memset(sp, 0, sizeof *sp);
    config_t cfg;
    load_reads *reads = calloc(1, sizeof *reads);
    if (!reads) {
        snprintf(err->text, sizeof err->text, "%s: out of memory", path);
        return -1;
    }
    spec_cat mcat = {.open = 0, .reads = reads}, scat = {.open = 0, .reads = reads},
             hcat = {.open = 0, .reads = reads}, kcat = {.open = 0, .reads = reads};
    if (load_open(&cfg, path, configs_dir, err) != 0) {
        free(reads);
        return -1;
    }
    int rc = -1;
    const config_setting_t *root = config_root_setting(&cfg);
    sp->text = spec_read_text(path);
    if (!sp->text) {
        snprintf(err->text, sizeof err->text, "%s: cannot read file", path);
        goto out;
    }
    const char *name = NULL;
    snprintf(sp->name, sizeof sp->name, "sweep");
    const config_setting_t *ns = config_setting_get_member(root, "name");
    if (ns) {
        if (!(name = config_setting_get_string(ns))) {
            load_fail(err, ns, "key 'name': expected a string");
            goto out;
        }
        snprintf(sp->name, sizeof sp->name, "%s", name);
    }
    sp->fidelity = EVAL_DETAILED;
    const config_setting_t *fs = config_setting_get_member(root, "fidelity");
    if (fs) {
        const char *fn = config_setting_get_string(fs);
        int f = fn ? eval_fidelity_parse(fn) : -1;
        if (f < 0) {
            load_fail(err, fs, "key 'fidelity': expected \"detailed\" "
                      "(default) or \"madmax\"");
            goto out;
        }
        sp->fidelity = (eval_fidelity)f;
    }
    sp->ops = eval_ops_of(sp->fidelity);
    bool detailed = sp->fidelity == EVAL_DETAILED;
    for (int i = 0; i < config_setting_length(root); i++) {
        const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        if (!speckeys_known(SPECKEYS_TOP, 1u << sp->fidelity, config_setting_name(s))) {
            char msg[800];
            load_fail(err, s, "%s", speckeys_unknown(SPECKEYS_TOP, 1u << sp->fidelity,
                                                     config_setting_name(s),
                                                     "sweep spec", msg, sizeof msg));
            goto out;
        }
    }
    /* custom hardware of the spec: checked whether a grid uses it or not */
    const config_setting_t *own = config_setting_get_member(root, "hardware");
    if (own && !config_setting_is_list(own)) {
        load_fail(err, own, "key 'hardware': expected a list ( { name = ...; "
                  "base = ...; ... }, ... ) of hardware groups");
        goto out;
    }
    for (int i = 0; own && i < config_setting_length(own); i++) {
        hw_t hw;
        if (load_hw_in(config_setting_get_elem(own, (unsigned)i), configs_dir,
                       reads, &hw, err) != 0)
            goto out;
    }
    static const char *const need[] = {"models", "tasks", "global_batch",
                                       "strategies"};
    for (size_t k = 0; k < NKEYS(need); k++)
        if (!config_setting_get_member(root, need[k])) {
            load_fail(err, root, "missing key '%s' in sweep spec", need[k]);
            goto out;
        }
    void *arr = NULL;
    if (spec_entities(config_setting_get_member(root, "models"), "models",
                      &mcat, configs_dir,
                      detailed ? "detailed_models.cfg" : "models.cfg",
                      sizeof(model_t),
                      detailed ? spec_load_dmodel : spec_load_model, &arr,
                      &sp->nmodels, err))
        goto out;
    sp->models = arr;
    const config_setting_t *ss = config_setting_get_member(root, "systems");
    const config_setting_t *gs = config_setting_get_member(root, "system_grid");
    if (!ss && !gs) {
        load_fail(err, root, "missing key 'systems' (or 'system_grid') in "
                  "sweep spec");
        goto out;
    }
    if (ss && detailed) {
        if (spec_entities(ss, "systems", &scat, configs_dir,
                          "detailed_systems.cfg", sizeof(topo_system_t),
                          spec_load_dsystem, &arr, &sp->nsystems, err))
            goto out;
        sp->dsystems = arr;
    } else if (ss) {
        if (spec_entities(ss, "systems", &scat, configs_dir, "systems.cfg",
                          sizeof(cluster_t), spec_load_system, &arr,
                          &sp->nsystems, err))
            goto out;
        sp->systems = arr;
    }
    if (gs && (detailed ? spec_dgrid(sp, gs, own, &hcat, configs_dir, err)
                        : spec_grid(sp, gs, &scat, configs_dir, err)))
        goto out;
    if (detailed && sp->nsystems > 0) {
        sp->systems = calloc((size_t)sp->nsystems, sizeof *sp->systems);
        if (!sp->systems) {
            load_fail(err, root, "key 'systems': out of memory");
            goto out;
        }
        for (int64_t i = 0; i < sp->nsystems; i++)
            spec_mirror(&sp->dsystems[i], &sp->systems[i]);
    }
    if (sp->nsystems == 0) {
        load_fail(err, gs ? gs : root, "key 'system_grid': no systems");
        goto out;
    }
    if (stacks_path && (!spec_catalogue(&kcat, root, "stacks", configs_dir, "stacks.cfg",
                                        "stacks", err) ||
                        overlay_stacks(config_root_setting(&kcat.cfg), stacks_path,
                                       configs_dir, err) != 0))
        goto out;
    if (stacks_path)
        load_reads_add(reads, stacks_path); /* provenance: the fragment's text too */
    if (spec_stacks(sp, root, &kcat, configs_dir, err))
        goto out;
    if (spec_tasks(sp, config_setting_get_member(root, "tasks"), own, &hcat, configs_dir, err))
        goto out;
    if (spec_kind_keys(sp, root, err))
        goto out;
    if (spec_batches(sp, config_setting_get_member(root, "global_batch"), err))
        goto out;
    if (spec_strategies(sp, config_setting_get_member(root, "strategies"), err))
        goto out;
    if (keep_load(&sp->keep, sp->fidelity, config_setting_get_member(root, "keep"), err))
        goto out;
    if (spec_bool(root, "elasticities", &sp->elasticities, err))
        goto out;
    sp->chunk = SPEC_CHUNK_DEFAULT;
    const config_setting_t *cs = config_setting_get_member(root, "chunk");
    if (cs) {
        int t = config_setting_type(cs);
        if ((t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) ||
            config_setting_get_int64(cs) < 1 ||
            config_setting_get_int64(cs) > SPEC_CHUNK_MAX) {
            load_fail(err, cs, "key 'chunk': expected an integer from 1 "
                      "to %lld", (long long)SPEC_CHUNK_MAX);
            goto out;
        }
        sp->chunk = (int64_t)config_setting_get_int64(cs);
    }
    if (sources_collect(&sp->files, &cfg, path, reads, configs_dir, err) != 0)
        goto out;
    rc = 0;
out:
    if (mcat.open)
        config_destroy(&mcat.cfg);
    if (scat.open)
        config_destroy(&scat.cfg);
    if (hcat.open)
        config_destroy(&hcat.cfg);
    if (kcat.open)
        config_destroy(&kcat.cfg);
    config_destroy(&cfg);
    free(reads);
    if (rc)
        spec_free(sp);
    return rc;
}

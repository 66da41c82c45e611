/*
 * load_fit.c - checking a catalogue entry's fit declarations and its
 * serving match (load_fit.h): each declaration's key is a numeric key
 * the entry states, its value lies in its range, its range inside the
 * fact's band, its filter parses.
 *
 * Nothing here changes a value: scripts/calibrate.py writes fitted
 * values back into the catalogue text, and `madsweep eval --batch`
 * (driver/cli/batch.c) sets trial values through load_fit_target_of.
 */
#include "load_fit.h"
#include "load_key.h"
#include "rowfilter.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool load_fit_number(const config_setting_t *s, double *v)
{
    int ty = config_setting_type(s);
    if (ty == CONFIG_TYPE_FLOAT)
        *v = config_setting_get_float(s);
    else if (ty == CONFIG_TYPE_INT || ty == CONFIG_TYPE_INT64)
        *v = (double)config_setting_get_int64(s);
    else
        return false;
    return true;
}

int load_fit_target_of(const config_setting_t *g, const char *key,
                       const struct load_table *t, const config_setting_t *at,
                       load_fit_target *out, load_err *err)
{
    if (!at)
        at = g;
    memset(out, 0, sizeof *out);
    out->index = -1;
    size_t n = strcspn(key, "[");
    long idx = -1;
    if (key[n] == '[') {
        char *end = NULL;
        idx = strtol(key + n + 1, &end, 10);
        if (end == key + n + 1 || idx < 0 || idx > 64 || strcmp(end, "]") != 0) {
            load_fail(err, at, "fit key '%s': expected KEY or KEY[i] (i from 0)", key);
            return -1;
        }
    }
    char name[LOAD_FIT_KEY_MAX];
    snprintf(name, sizeof name, "%.*s", (int)n, key);
    const load_key *k = n < sizeof name ? load_keys_find(t, name) : NULL;
    if (!k) {
        load_fail(err, at, "fit key '%s': no such key in this catalogue", key);
        return -1;
    }
    config_setting_t *s = config_setting_get_member(g, name);
    if (!s) {
        load_fail(err, at, "fit key '%s': the entry does not state it (a fitted "
                  "constant is stated where it is declared, not taken from a base)", key);
        return -1;
    }
    out->s = s;
    int ty = config_setting_type(s);
    bool arr = ty == CONFIG_TYPE_ARRAY || ty == CONFIG_TYPE_LIST;
    if (idx >= 0) {
        if (!arr || k->type == LT_FACT || idx >= config_setting_length(s) ||
            !load_fit_number(config_setting_get_elem(s, (unsigned)idx), &out->value)) {
            load_fail(err, s, "fit key '%s': not an element of a number array", key);
            return -1;
        }
        out->index = (int)idx;
        return 0;
    }
    if (k->type == LT_FACT && arr && config_setting_length(s) == 3) {
        double e[3];
        for (unsigned i = 0; i < 3; i++)
            if (!load_fit_number(config_setting_get_elem(s, i), &e[i])) {
                load_fail(err, s, "fit key '%s': a fact of three numbers", key);
                return -1;
            }
        out->index = 1;
        out->value = e[1];
        out->band = true;
        out->band_lo = e[0];
        out->band_hi = e[2];
        return 0;
    }
    if ((k->type != LT_FLOAT && k->type != LT_FACT) || !load_fit_number(s, &out->value)) {
        load_fail(err, s, "fit key '%s': not a number or a fact [low, nominal, high]", key);
        return -1;
    }
    return 0;
}

/* A string member of declaration d, required. */
static const char *load_fit_text(const config_setting_t *d, const char *key, load_err *err)
{
    const config_setting_t *s = config_setting_get_member(d, key);
    const char *v = s ? config_setting_get_string(s) : NULL;
    if (!v)
        load_fail(err, s ? s : d, "fit: key '%s' %s", key,
                  s ? "is not a string" : "is missing (key, rows, objective, range, prior)");
    return v;
}

static int load_fit_filter(const config_setting_t *s, const char *what, const char *text,
                           load_err *err)
{
    char why[160];
    if (rowfilter_check(text, why, sizeof why) == 0)
        return 0;
    load_fail(err, s, "%s \"%.200s\": not a row filter: %s", what, text, why);
    return -1;
}

/* The objective: a measured column, measured_[a-z0-9_]+. */
static int load_fit_objective(const config_setting_t *d, const char *obj, load_err *err)
{
    bool ok = strncmp(obj, "measured_", 9) == 0 && obj[9] != '\0';
    for (const char *c = obj; ok && *c; c++)
        ok = islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_';
    if (!ok)
        load_fail(err, config_setting_get_member(d, "objective"), "fit: objective '%s': "
                  "expected the name of a measured column (measured_...)", obj);
    return ok ? 0 : -1;
}

static int load_fit_one(const config_setting_t *g, const config_setting_t *d, const char *ns,
                        const struct load_table *t, load_err *err)
{
    static const char *const keys[] = {"key", "rows", "objective", "range", "prior"};
    if (!config_setting_is_group(d)) {
        load_fail(err, d, "fit: each declaration is a group { key; rows; objective; range; "
                  "prior; }");
        return -1;
    }
    for (int i = 0; i < config_setting_length(d); i++) {
        const config_setting_t *m = config_setting_get_elem(d, (unsigned)i);
        bool known = false;
        for (size_t k = 0; k < NKEYS(keys); k++)
            known |= strcmp(config_setting_name(m), keys[k]) == 0;
        if (!known) {
            load_fail(err, m, "fit: unknown key '%s' (expected key, rows, objective, range, "
                      "prior)", config_setting_name(m));
            return -1;
        }
    }
    const char *key = load_fit_text(d, "key", err);
    const char *rows = key ? load_fit_text(d, "rows", err) : NULL;
    const char *obj = rows ? load_fit_text(d, "objective", err) : NULL;
    if (!obj || strlen(key) >= LOAD_FIT_KEY_MAX ||
        load_fit_filter(config_setting_get_member(d, "rows"), "fit rows", rows, err) ||
        load_fit_objective(d, obj, err))
        return -1;
    load_fit_target tg;
    if (load_fit_target_of(g, key, t, config_setting_get_member(d, "key"), &tg, err) != 0)
        return -1;
    const config_setting_t *r = config_setting_get_member(d, "range");
    const config_setting_t *ps = config_setting_get_member(d, "prior");
    double lo = 0, hi = 0, prior = 0;
    if (!r || config_setting_length(r) != 2 ||
        !load_fit_number(config_setting_get_elem(r, 0), &lo) ||
        !load_fit_number(config_setting_get_elem(r, 1), &hi) || !(lo < hi)) {
        load_fail(err, r ? r : d, "fit '%s' of %s: range: expected [low, high] with low < high",
                  key, ns);
        return -1;
    }
    if (!ps || !load_fit_number(ps, &prior)) {
        load_fail(err, ps ? ps : d, "fit '%s' of %s: prior: expected a number (the value "
                  "without the fit)", key, ns);
        return -1;
    }
    if (!(tg.value >= lo && tg.value <= hi)) {
        load_fail(err, tg.s, "fit '%s' of %s: the value %g lies outside its range [%g, %g]",
                  key, ns, tg.value, lo, hi);
        return -1;
    }
    if (!(prior >= lo && prior <= hi)) {
        load_fail(err, ps, "fit '%s' of %s: the prior %g lies outside the range [%g, %g] "
                  "(a cross-validation fold may fall back to it)", key, ns, prior, lo, hi);
        return -1;
    }
    if (tg.band && !(lo >= tg.band_lo && hi <= tg.band_hi && prior >= tg.band_lo &&
                     prior <= tg.band_hi)) {
        load_fail(err, r, "fit '%s' of %s: range [%g, %g] and prior %g must lie inside the "
                  "fact's band [%g, %g]", key, ns, lo, hi, prior, tg.band_lo, tg.band_hi);
        return -1;
    }
    return 0;
}

int load_fit_check(const config_setting_t *g, const char *kind, const struct load_table *t,
                   bool allow_match, load_err *err)
{
    const char *name = NULL;
    config_setting_lookup_string(g, "name", &name);
    char ns[96];
    snprintf(ns, sizeof ns, "%s '%s'", kind, name ? name : "?");
    const config_setting_t *m = config_setting_get_member(g, "match");
    if (m) {
        const char *text = config_setting_get_string(m);
        if (!allow_match || !text) {
            load_fail(err, m, allow_match ? "key 'match': expected a row filter string"
                                          : "key 'match': only a serving stack has one");
            return -1;
        }
        if (load_fit_filter(m, "key 'match'", text, err) != 0)
            return -1;
    }
    const config_setting_t *f = config_setting_get_member(g, "fit");
    if (!f)
        return 0;
    if (!config_setting_is_list(f)) {
        load_fail(err, f, "key 'fit': expected a list of declarations ( { key; rows; "
                  "objective; range; prior; }, ... )");
        return -1;
    }
    for (int i = 0; i < config_setting_length(f); i++) {
        const config_setting_t *d = config_setting_get_elem(f, (unsigned)i);
        if (load_fit_one(g, d, ns, t, err) != 0)
            return -1;
        const char *key = NULL;
        config_setting_lookup_string(d, "key", &key);
        for (int j = 0; j < i; j++) {
            const char *other = NULL;
            config_setting_lookup_string(config_setting_get_elem(f, (unsigned)j), "key", &other);
            if (other && key && strcmp(other, key) == 0) {
                load_fail(err, d, "fit '%s' of %s: declared twice", key, ns);
                return -1;
            }
        }
    }
    return 0;
}

const load_table *load_fit_table(const char *list)
{
    return strcmp(list, "stacks") == 0     ? &load_stack_table
           : strcmp(list, "hardware") == 0 ? &load_hw_table
                                           : NULL;
}

/* Loads entry g again: 0 when it is still a valid entry. */
static int load_fit_reload(const config_setting_t *g, const char *list, const char *configs_dir,
                           load_err *err)
{
    if (strcmp(list, "stacks") == 0) {
        stack_desc st;
        return load_stack_in(g, configs_dir, &st, err);
    }
    hw_t h;
    return load_hw_in(g, configs_dir, NULL, &h, err);
}

static bool load_fit_put(config_setting_t *x, double v)
{
    if (config_setting_type(x) == CONFIG_TYPE_FLOAT)
        return config_setting_set_float(x, v) == CONFIG_TRUE;
    if (v != (double)(int64_t)v)
        return false; /* an integer setting keeps its type */
    return config_setting_set_int64(x, (int64_t)v) == CONFIG_TRUE;
}

int load_fit_set(config_setting_t *root, const char *list, const char *entry, const char *key,
                 double v, const char *configs_dir, load_err *err)
{
    const load_table *t = load_fit_table(list);
    if (!t) {
        load_fail(err, root, "set: list '%s': expected stacks or hardware", list);
        return -1;
    }
    const config_setting_t *g = load_find(config_setting_get_member(root, list), entry);
    if (!g) {
        load_fail(err, root, "set: no entry '%s' in list '%s'", entry, list);
        return -1;
    }
    load_fit_target tg;
    if (load_fit_target_of(g, key, t, NULL, &tg, err) != 0)
        return -1;
    config_setting_t *x = tg.index < 0 ? tg.s : config_setting_get_elem(tg.s, (unsigned)tg.index);
    if (!isfinite(v) || !load_fit_put(x, v)) {
        load_fail(err, x, "set %s of %s '%s': cannot hold %g", key, list, entry, v);
        return -1;
    }
    if (load_fit_reload(g, list, configs_dir, err) != 0) {
        load_fit_put(x, tg.value);
        return -1;
    }
    return 0;
}

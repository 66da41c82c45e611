/*
 * catjson.c - the catalogues as one JSON document (catjson.h).
 *
 * The catalogue is read as batch.c reads it (overlay_catalogue), every
 * hardware and stack entry loaded with the loader a point uses before
 * anything is printed, so that the document names only entries a point
 * can use, and a fit declaration only when its entry loaded.
 */
#include "catjson.h"

#include <stdbool.h>
#include <string.h>

#include "../load/load.h"
#include "../load/load_fit.h"
#include "../load/overlay.h"
#include "../query/report.h"

static void catjson_str(FILE *out, const char *key, const char *v, bool comma)
{
    fprintf(out, "%s\"%s\":", comma ? "," : "", key);
    if (v)
        report_json_string(out, v);
    else
        fputs("null", out);
}

/* Loads every entry of `list`; prints the first error. 0 or -1. */
static int catjson_check(const config_setting_t *root, const char *list,
                         const char *configs_dir, FILE *err)
{
    const config_setting_t *l = config_setting_get_member(root, list);
    load_err le;
    if (l && load_unique(l, list, &le) != 0) {
        fprintf(err, "madsweep list json: %s\n", le.text);
        return -1;
    }
    for (int i = 0; l && i < config_setting_length(l); i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        int rc;
        if (strcmp(list, "stacks") == 0) {
            stack_desc st;
            rc = load_stack_in(g, configs_dir, &st, &le);
        } else {
            hw_t h;
            rc = load_hw_in(g, configs_dir, NULL, &h, &le);
        }
        if (rc != 0) {
            fprintf(err, "madsweep list json: %s\n", le.text);
            return -1;
        }
    }
    return 0;
}

static void catjson_hardware(FILE *out, const config_setting_t *root)
{
    const config_setting_t *l = config_setting_get_member(root, "hardware");
    fputs(",\n\"hardware\":[", out);
    for (int i = 0; l && i < config_setting_length(l); i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        const char *name = NULL, *base = NULL;
        config_setting_lookup_string(g, "name", &name);
        config_setting_lookup_string(g, "base", &base);
        fputs(i ? ",\n{" : "\n{", out);
        catjson_str(out, "name", name, false);
        catjson_str(out, "base", base, true);
        fputs(",\"aliases\":[", out);
        const config_setting_t *al = config_setting_get_member(g, "aliases");
        for (int k = 0; al && k < config_setting_length(al); k++) {
            if (k)
                fputc(',', out);
            report_json_string(out, config_setting_get_string(
                                        config_setting_get_elem(al, (unsigned)k)));
        }
        fputs("]}", out);
    }
    fputs("]", out);
}

/* The numbers and three-number facts group g states, as {KEY: ...}. */
static void catjson_values(FILE *out, const config_setting_t *g)
{
    fputs(",\"values\":{", out);
    bool first = true;
    for (int k = 0; k < config_setting_length(g); k++) {
        const config_setting_t *m = config_setting_get_elem(g, (unsigned)k);
        double v[3];
        int n = 0;
        if (load_fit_number(m, &v[0]))
            n = 1;
        else if (config_setting_is_array(m) && config_setting_length(m) == 3 &&
                 load_fit_number(config_setting_get_elem(m, 0), &v[0]) &&
                 load_fit_number(config_setting_get_elem(m, 1), &v[1]) &&
                 load_fit_number(config_setting_get_elem(m, 2), &v[2]))
            n = 3;
        if (!n)
            continue;
        fputs(first ? "" : ",", out);
        first = false;
        report_json_string(out, config_setting_name(m));
        fputc(':', out);
        if (n == 3)
            fputc('[', out);
        for (int i = 0; i < n; i++) {
            if (i)
                fputc(',', out);
            report_json_number(out, v[i]);
        }
        if (n == 3)
            fputc(']', out);
    }
    fputc('}', out);
}

static void catjson_stacks(FILE *out, const config_setting_t *root, const char *stacks_path)
{
    const config_setting_t *l = config_setting_get_member(root, "stacks");
    fputs(",\n\"stacks\":[", out);
    for (int i = 0; l && i < config_setting_length(l); i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        const char *name = NULL, *base = NULL, *match = NULL, *summary = NULL;
        int serving = 0;
        config_setting_lookup_string(g, "name", &name);
        config_setting_lookup_string(g, "base", &base);
        config_setting_lookup_string(g, "match", &match);
        config_setting_lookup_string(g, "summary", &summary);
        config_setting_lookup_bool(g, "serving", &serving);
        const char *file = config_setting_source_file(g);
        fputs(i ? ",\n{" : "\n{", out);
        catjson_str(out, "name", name, false);
        catjson_str(out, "base", base, true);
        fprintf(out, ",\"serving\":%s", serving ? "true" : "false");
        catjson_str(out, "match", match, true);
        catjson_str(out, "summary", summary, true);
        catjson_str(out, "file", file ? file : stacks_path, true);
        catjson_values(out, g);
        fputc('}', out);
    }
    fputs("]", out);
}

/* One fit declaration d of entry g (named `entry`) of list `list`, as a
 * JSON object (after ",\n" unless *first): list, entry, key, file, line
 * (of the key's value), value, band, rows, objective, range, prior. */
static void catjson_fit(FILE *out, const char *list, const config_setting_t *g,
                        const char *entry, const config_setting_t *d,
                        const struct load_table *t, bool *first)
{
    const char *key = NULL, *rows = NULL, *obj = NULL;
    config_setting_lookup_string(d, "key", &key);
    config_setting_lookup_string(d, "rows", &rows);
    config_setting_lookup_string(d, "objective", &obj);
    load_fit_target tg;
    load_err le;
    if (!key || !rows || !obj || load_fit_target_of(g, key, t, NULL, &tg, &le) != 0)
        return; /* the loader refuses such an entry; listed as an error elsewhere */
    const config_setting_t *r = config_setting_get_member(d, "range");
    double lo = 0, hi = 0, prior = 0;
    load_fit_number(config_setting_get_elem(r, 0), &lo);
    load_fit_number(config_setting_get_elem(r, 1), &hi);
    load_fit_number(config_setting_get_member(d, "prior"), &prior);
    const char *file = config_setting_source_file(tg.s);
    if (!*first)
        fputs(",\n", out);
    *first = false;
    fputc('{', out);
    catjson_str(out, "list", list, false);
    catjson_str(out, "entry", entry, true);
    catjson_str(out, "key", key, true);
    catjson_str(out, "file", file ? file : "", true);
    fprintf(out, ",\"line\":%u,\"value\":", config_setting_source_line(tg.s));
    report_json_number(out, tg.value);
    fputs(",\"band\":", out);
    if (tg.band) {
        fputc('[', out);
        report_json_number(out, tg.band_lo);
        fputc(',', out);
        report_json_number(out, tg.band_hi);
        fputc(']', out);
    } else {
        fputs("null", out);
    }
    catjson_str(out, "rows", rows, true);
    catjson_str(out, "objective", obj, true);
    fputs(",\"range\":[", out);
    report_json_number(out, lo);
    fputc(',', out);
    report_json_number(out, hi);
    fputs("],\"prior\":", out);
    report_json_number(out, prior);
    fputc('}', out);
}

/* The fit declarations of every entry of list `list` ("stacks" or
 * "hardware") of the catalogue config `root` (*first: none printed yet). */
static void catjson_fits(FILE *out, const config_setting_t *root, const char *list, bool *first)
{
    const struct load_table *t = load_fit_table(list);
    const config_setting_t *l = config_setting_get_member(root, list);
    for (int i = 0; t && l && i < config_setting_length(l); i++) {
        const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
        const char *name = NULL;
        const config_setting_t *f = config_setting_get_member(g, "fit");
        if (!f || config_setting_lookup_string(g, "name", &name) != CONFIG_TRUE)
            continue;
        for (int k = 0; k < config_setting_length(f); k++)
            catjson_fit(out, list, g, name, config_setting_get_elem(f, (unsigned)k), t, first);
    }
}

int catjson_run(const char *configs_dir, const char *stacks_path, FILE *out, FILE *err)
{
    config_t cat;
    load_err le;
    if (overlay_catalogue(&cat, configs_dir, stacks_path, &le) != 0) {
        fprintf(err, "madsweep list json: %s\n", le.text);
        return 2;
    }
    const config_setting_t *root = config_root_setting(&cat);
    if (catjson_check(root, "hardware", configs_dir, err) != 0 ||
        catjson_check(root, "stacks", configs_dir, err) != 0) {
        config_destroy(&cat);
        return 2;
    }
    fputs("{", out);
    catjson_str(out, "configs", configs_dir, false);
    catjson_hardware(out, root);
    catjson_stacks(out, root, stacks_path);
    fputs(",\n\"fits\":[\n", out);
    bool first = true;
    catjson_fits(out, root, "hardware", &first);
    catjson_fits(out, root, "stacks", &first);
    fputs("]}\n", out);
    config_destroy(&cat);
    return 0;
}

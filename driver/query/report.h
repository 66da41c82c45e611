/*
 * report.h - human and machine reports of one evaluated point.
 */
#ifndef MADSWEEP_REPORT_H
#define MADSWEEP_REPORT_H

#include <stdio.h>

#include "../../cost/eval.h"

/* Readable report: model, system and task figures, the time breakdown,
 * exposed vs overlapped communication. */
void report_text(FILE *out, const point_t *p, const result_t *r);

/* One JSON object (one line) with every figure of result_fields plus
 * identification (model, system, task, plans, status). */
void report_json(FILE *out, const point_t *p, const result_t *r);

/* Writes a double as JSON: shortest round-tripping form, null if not
 * finite. */
void report_json_number(FILE *out, double v);

/* Writes s as a JSON string literal (quotes and escapes included). The
 * output is always valid UTF-8: each byte of s that does not begin a
 * well-formed UTF-8 sequence becomes U+FFFD (names in configs may be in
 * any encoding). */
void report_json_string(FILE *out, const char *s);

#endif

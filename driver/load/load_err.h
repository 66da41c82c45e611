/*
 * load_err.h - the error of a load: one line "FILE:LINE: what is wrong
 * (key 'k')", naming the setting at fault.
 *
 * The bottom of driver/load/: it includes only libconfig, so the range
 * checks (range.h), the value readers and every catalogue reader report
 * through it without a loop between them.
 */
#ifndef MADSWEEP_LOAD_ERR_H
#define MADSWEEP_LOAD_ERR_H

#include <libconfig.h>

typedef struct load_err {
    char text[1024];
} load_err;

/* Formats "FILE:LINE: " for a setting into err and appends the message
 * (a NULL setting: "(input):0: "). */
void load_fail(load_err *err, const config_setting_t *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif

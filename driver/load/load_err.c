/*
 * load_err.c - the one shape of every loading error: "FILE:LINE: text"
 * (see load_err.h). The bottom of driver/load/: it calls nothing of the
 * loader, so every other file of the room may report through it.
 */
#include "load_err.h"

#include <stdarg.h>
#include <stdio.h>

void load_fail(load_err *err, const config_setting_t *s, const char *fmt, ...)
{
    int n = 0;
    const char *file = s ? config_setting_source_file(s) : NULL;
    unsigned line = s ? config_setting_source_line(s) : 0;
    n = snprintf(err->text, sizeof err->text, "%s:%u: ",
                 file ? file : "(input)", line);
    if (n < 0 || (size_t)n >= sizeof err->text)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text + n, sizeof err->text - (size_t)n, fmt, ap);
    va_end(ap);
}

/*
 * fuzz_util.c - scratch files and checks shared by the fuzz targets.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    static char path[512]; /* one scratch file per process and kind */
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/madsweep-fuzz-%ld%s",
             dir && *dir ? dir : "/tmp", (long)getpid(), suffix);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    size_t w = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || w != size)
        return NULL;
    return path;
}

const char *fuzz_configs(void)
{
    const char *d = getenv("MADSWEEP_CONFIGS");
    return d && *d ? d : MADSWEEP_CONFIGS_DIR;
}

void fuzz_check_json(const char *s, size_t n)
{
    if (n < 3 || s[0] != '{' || s[n - 2] != '}' || s[n - 1] != '\n')
        abort();
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2
                   : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (k == 0 || i + k > n || (c < 0x20 && c != '\n'))
            abort();
        for (size_t j = 1; j < k; j++)
            if (((unsigned char)s[i + j] & 0xc0) != 0x80)
                abort();
        i += k;
    }
}

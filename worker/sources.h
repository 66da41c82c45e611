/*
 * sources.h (worker) - the files a sweep spec was read from, as plain
 * data: what the provenance of a sweep file stores and --resume compares
 * (worker/provenance.h). Collecting them from a loaded spec is the
 * driver's job (driver/sweep/sources_collect.h); no libconfig here.
 *
 * Each entry has its whole text and SHA-256. Names are relative to the
 * catalogue directory when the file lies under it ("hardware.cfg"), else
 * the path as opened; `path` is the absolute path. Names are unique.
 */
#ifndef MADSWEEP_WORKER_SOURCES_H
#define MADSWEEP_WORKER_SOURCES_H

#include <stdint.h>

#include "sha256.h"

#define SOURCES_PATH_MAX 1024

typedef struct source_file {
    char name[256];
    char path[SOURCES_PATH_MAX];
    char sha256[SHA256_HEX_LEN + 1];
    char *text; /* NUL-terminated, `bytes` long */
    int64_t bytes;
} source_file;

typedef struct sources {
    source_file *f;
    int n;
} sources;

/* The file named `name`, or NULL. */
const source_file *sources_find(const sources *s, const char *name);

void sources_free(sources *s);

/* Reads a whole file into a NUL-terminated malloc'ed buffer (*bytes its
 * length); NULL when it cannot be read. */
char *sources_read(const char *path, int64_t *bytes);

#endif

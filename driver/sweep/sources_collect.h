/*
 * sources_collect.h - the files a sweep spec was read from, for provenance.
 *
 * After a spec is loaded, sources_collect() lists every catalogue file
 * it read (the catalogues opened to resolve names, see load_reads) and
 * every file pulled in with @include by the spec or by those catalogues
 * (libconfig records each setting's source file, so a walk over the
 * parsed trees finds them), each once, in the order found, with its
 * whole text and SHA-256. Names are relative to the catalogue directory
 * when the file lies under it ("hardware.cfg"), else the path as opened;
 * `path` is the absolute path. The spec file itself is not listed (the
 * sweep file keeps its text separately). The list (source_file, sources,
 * sources_find, sources_free, sources_read) is plain data of the worker
 * (worker/sources.h), which stores it in sweep files.
 */
#ifndef MADSWEEP_SOURCES_COLLECT_H
#define MADSWEEP_SOURCES_COLLECT_H

#include <libconfig.h>
#include <stdint.h>

#include "../../worker/sources.h"
#include "../load/load.h"

/* Collects the files of a loaded spec: `spec_cfg` is the spec's parsed
 * tree (for its includes), `spec_path` the spec (excluded), `reads` the
 * catalogues opened by name. Returns 0, or -1 with err set (a file that
 * can no longer be read). */
int sources_collect(sources *s, const config_t *spec_cfg,
                    const char *spec_path, const load_reads *reads,
                    const char *configs_dir, load_err *err);

#endif

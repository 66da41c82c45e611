/*
 * list.h - `madsweep list`: what the catalogues offer.
 *
 *   models    detailed_models.cfg (params, layers, hidden, heads, seq,
 *             vocab, experts) and models.cfg (madmax)
 *   hardware  hardware.cfg: peaks, memory, scale-up domain, NIC
 *   systems   detailed_systems.cfg (hardware, devices, domain, NIC, pod)
 *             and systems.cfg (madmax)
 *   stacks    stacks.cfg (list `stacks`): each entry's name and its text
 *             fields; says so when the directory has no such file
 * Entries are loaded with the sweep's loaders, so an entry listed is one
 * a spec can name.
 */
#ifndef MADSWEEP_LIST_H
#define MADSWEEP_LIST_H

#include <stdio.h>

/* Returns 0, 1 (a catalogue cannot be read) or 2 (unknown `what`). */
int list_run(const char *what, const char *configs_dir, FILE *out, FILE *err);

#endif

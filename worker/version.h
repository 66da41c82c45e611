/*
 * version.h - the tool's version, stored in every sweep file and printed
 * by `madsweep --version` (one definition for the driver and the worker;
 * the cost model's version is eval_ops.version).
 */
#ifndef MADSWEEP_VERSION_H
#define MADSWEEP_VERSION_H

#define MADSWEEP_VERSION "0.1.0"

#endif

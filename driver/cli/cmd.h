/*
 * cmd.h - the madsweep command line as a library call.
 *
 * main() only forwards to cmd_main(), so tests run every subcommand
 * in-process with their own output streams. Exit codes: 0 success,
 * 1 runtime failure, 2 bad usage or bad input, 75 (JOB_EXIT_STOPPED,
 * driver/job.h) a sweep stopped by a signal; `--help` explains them.
 */
#ifndef MADSWEEP_CMD_H
#define MADSWEEP_CMD_H

#include <stdio.h>

#include "../../worker/version.h"

int cmd_main(int argc, char **argv, FILE *out, FILE *err);

#endif

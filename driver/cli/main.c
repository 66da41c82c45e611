/*
 * main.c - the madsweep executable: finds the installed catalogues, then
 * forwards to cmd_main().
 *
 * An installed madsweep (cmake --install, Spack) keeps its catalogues in
 * PREFIX/share/madsweep/configs beside PREFIX/bin/madsweep: when that
 * directory exists and MADSWEEP_CONFIGS is unset, it becomes the
 * default (load_configs_dir: --configs, then MADSWEEP_CONFIGS, then the
 * source tree the binary was built from). Read from /proc/self/exe, so
 * the prefix may be moved after the install.
 *
 * SIGXFSZ is ignored: a file-size limit (ulimit -f, a batch system's)
 * then fails the write with EFBIG, which every writer reports and
 * cleans up after, instead of killing the process mid-file; a sweep's
 * ranks replace this with job.h's handler (parallel HDF5 may wait for
 * ever after a failed write on one rank).
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

static void main_installed_configs(void)
{
    const char *env = getenv("MADSWEEP_CONFIGS");
    if (env && *env)
        return;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = '\0'; /* PREFIX/bin */
    char dir[PATH_MAX + 40];
    snprintf(dir, sizeof dir, "%s/../share/madsweep/configs", exe);
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        setenv("MADSWEEP_CONFIGS", dir, 0);
}

int main(int argc, char **argv)
{
    main_installed_configs();
    signal(SIGXFSZ, SIG_IGN);
    return cmd_main(argc, argv, stdout, stderr);
}

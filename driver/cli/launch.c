/*
 * launch.c - the launcher's task count against the MPI world (launch.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* A positive decimal environment variable, or -1 (unset or malformed). */
static long launch_number(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0)
        return -1;
    return v;
}

void launch_capture(launch_env *e)
{
    e->mpirun_size = launch_number("OMPI_COMM_WORLD_SIZE");
    e->step_tasks = -1;
    if (getenv("SLURM_STEP_ID")) {
        e->step_tasks = launch_number("SLURM_STEP_NUM_TASKS");
        if (e->step_tasks < 0)
            e->step_tasks = launch_number("SLURM_NTASKS");
    }
    e->procid = launch_number("SLURM_PROCID");
    e->pmi = getenv("PMIX_RANK") || getenv("PMI_RANK") || getenv("PMI_FD") ||
             getenv("PMI_SIZE");
}

int launch_check_env(const launch_env *e, char *msg, size_t size)
{
    if (e->mpirun_size >= 0 || e->step_tasks <= 1 || e->pmi)
        return 0;
    snprintf(msg, size, "srun started %ld tasks without an MPI plugin (no PMIx "
             "or PMI in the environment), so they cannot form one MPI job and "
             "each would sweep everything into the same file; refusing to run. "
             "Use srun --mpi=pmix (scripts/sweep.sbatch's default, "
             "MADSWEEP_SRUN_MPI overrides it), or mpirun",
             e->step_tasks);
    return -1;
}

int launch_check_world(const launch_env *e, int world, char *msg, size_t size)
{
    long want = e->mpirun_size >= 0 ? e->mpirun_size : e->step_tasks;
    const char *who = e->mpirun_size >= 0 ? "mpirun (OMPI_COMM_WORLD_SIZE)"
                                          : "srun (SLURM_STEP_NUM_TASKS)";
    if (want < 0 || want == world)
        return 0;
    snprintf(msg, size, "the MPI world has %d rank%s but %s started %ld "
             "tasks: the tasks did not join one MPI job (a launcher without "
             "its MPI plugin, e.g. srun without --mpi=pmix?), and each would "
             "sweep everything into the same file; refusing to run",
             world, world == 1 ? "" : "s", who, want);
    return -1;
}

bool launch_reports(const launch_env *e)
{
    return e->procid <= 0;
}

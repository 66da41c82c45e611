/*
 * launch.h - does the MPI world match what the launcher started?
 *
 * A launcher that starts N tasks without a process-management interface
 * (srun --mpi=none where the site's Open MPI has no Slurm support, or an
 * MPI that falls back to singletons) gives N independent 1-rank worlds:
 * each would sweep the whole space into the same file. The launcher's
 * task count is read from the environment before MPI_Init (an MPI
 * library may add its own variables during init):
 *   OMPI_COMM_WORLD_SIZE      set by Open MPI's mpirun for its ranks;
 *   SLURM_STEP_NUM_TASKS      set by srun for the tasks of a job step
 *   (or SLURM_NTASKS)         (only inside a step: SLURM_STEP_ID set; a
 *                             batch script itself is not a step);
 *   PMIX_RANK, PMI_RANK,      present when a process-management
 *   PMI_FD, PMI_SIZE          interface was given to the task.
 */
#ifndef MADSWEEP_LAUNCH_H
#define MADSWEEP_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct launch_env {
    long mpirun_size; /* OMPI_COMM_WORLD_SIZE, -1 when unset */
    long step_tasks;  /* srun step's task count, -1 outside a step */
    long procid;      /* SLURM_PROCID, -1 when unset */
    bool pmi;         /* a PMIx/PMI variable is present */
} launch_env;

/* Reads the variables above from the process environment. */
void launch_capture(launch_env *e);

/* Before MPI_Init: -1 (msg set) when srun started several tasks without
 * any process-management interface (MPI_Init could not join them). */
int launch_check_env(const launch_env *e, char *msg, size_t size);

/* After MPI_Init: -1 (msg set) when the world size differs from the
 * launcher's task count; 0 when they agree or no launcher count is known. */
int launch_check_world(const launch_env *e, int world, char *msg, size_t size);

/* Whether this task should print launch errors (task 0, or no Slurm). */
bool launch_reports(const launch_env *e);

#endif

/*
 * stale_sem.c - leaves a named POSIX semaphore taken, as a process killed
 * while holding it does (the test of driver/job.h's job_mpi_defaults:
 * tests/test_stale_sem.sh).
 *   stale_sem take NAME     creates NAME at 1 if absent, takes it (0),
 *                           and exits without giving it back;
 *   stale_sem unlink NAME   removes NAME (absent: not an error).
 * Exit 0, or 1 with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "take") != 0 && strcmp(argv[1], "unlink") != 0)) {
        fprintf(stderr, "usage: stale_sem take|unlink NAME\n");
        return 1;
    }
    if (strcmp(argv[1], "unlink") == 0) {
        if (sem_unlink(argv[2]) != 0 && errno != ENOENT) {
            fprintf(stderr, "stale_sem: sem_unlink %s: %s\n", argv[2], strerror(errno));
            return 1;
        }
        return 0;
    }
    sem_t *s = sem_open(argv[2], O_CREAT, 0644, 1);
    if (s == SEM_FAILED) {
        fprintf(stderr, "stale_sem: sem_open %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    if (sem_trywait(s) != 0) {
        fprintf(stderr, "stale_sem: %s is already taken\n", argv[2]);
        return 1;
    }
    sem_close(s);
    return 0;
}

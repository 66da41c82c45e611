/*
 * claim.c - refusing inputs, foreign files and second writers (claim.h).
 *
 * Order matters: the output is compared with the inputs and locked
 * before it is ever truncated, so a refused sweep leaves the file (and
 * the sweep that owns it) untouched.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "claim.h"

#include <errno.h>
#include <sys/types.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char claim_h5sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n',
                                             0x1a, '\n'};

/* Does the file hold the HDF5 signature where HDF5 looks for it? */
static bool claim_is_hdf5(int fd, off_t size)
{
    for (off_t at = 0; at + 8 <= size; at = at ? 2 * at : 512) {
        unsigned char b[8];
        if (pread(fd, b, 8, at) != 8)
            return false;
        if (memcmp(b, claim_h5sig, 8) == 0)
            return true;
    }
    return false;
}

/* The text of a laid-out sweep file's user block (the 512 bytes HDF5
 * leaves to the application before its superblock). */
static const char claim_born_text[] = "madsweep sweep file: laid out\n";

/* Was the file never laid out? Its first 512 bytes (the user block) are
 * zeros, and it is that short or HDF5's signature follows: a sweep
 * killed, stopped or out of space while creating it (claim_born marks
 * the end of that). A file without a user block (signature at 0) is
 * not. */
static bool claim_unborn(int fd, off_t size)
{
    unsigned char b[CLAIM_USERBLOCK + 8];
    ssize_t n = pread(fd, b, sizeof b, 0);
    if (n < 0 || (off_t)n != (size < (off_t)sizeof b ? size : (off_t)sizeof b))
        return false;
    for (ssize_t i = 0; i < n && i < CLAIM_USERBLOCK; i++)
        if (b[i] != 0)
            return false;
    static const unsigned char zero[8] = {0};
    return n < (ssize_t)sizeof b || memcmp(b + CLAIM_USERBLOCK, claim_h5sig, 8) == 0 ||
           memcmp(b + CLAIM_USERBLOCK, zero, 8) == 0; /* no superblock yet */
}

int claim_born(claim *c)
{
    if (c->fd < 0)
        return 0;
    ssize_t n = pwrite(c->fd, claim_born_text, sizeof claim_born_text - 1, 0);
    return n == (ssize_t)sizeof claim_born_text - 1 ? 0 : -1;
}

static bool claim_same(const struct stat *a, const char *path)
{
    struct stat b;
    return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

static bool claim_unsupported(int e)
{
    return e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS || e == EINVAL;
}

claim_rc claim_take(claim *c, const char *path, bool fresh,
                    const char *const *inputs, bool *empty, char *msg,
                    size_t size)
{
    c->fd = -1;
    *empty = true;
    struct stat st;
    if (stat(path, &st) == 0)
        for (size_t i = 0; inputs && inputs[i]; i++)
            if (claim_same(&st, inputs[i])) {
                snprintf(msg, size, "%s is an input of this sweep (%s); "
                         "refusing to write the output over it", path,
                         inputs[i]);
                return CLAIM_REFUSED;
            }
    int fd = open(path, O_RDWR | O_CLOEXEC | (fresh ? O_CREAT : 0), 0644);
    if (fd < 0 && !fresh && errno == ENOENT) {
        snprintf(msg, size, "cannot resume: %s does not exist (run without "
                 "--resume to start the sweep)", path);
        return CLAIM_REFUSED;
    }
    if (fd < 0) {
        snprintf(msg, size, "cannot open %s for writing: %s (check the "
                 "directory exists and is writable)", path, strerror(errno));
        return CLAIM_IO;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(msg, size, "%s is not a regular file", path);
        close(fd);
        return CLAIM_REFUSED;
    }
    struct flock l;
    memset(&l, 0, sizeof l);
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET; /* l_start 0, l_len 0: the whole file */
    claim_rc rc = CLAIM_OK;
    if (fcntl(fd, F_OFD_SETLK, &l) != 0) {
        int e = errno;
        if (!claim_unsupported(e)) {
            snprintf(msg, size, "%s is being written by another running sweep "
                     "(it holds the file's lock); wait for it to end, or "
                     "write to another file", path);
            close(fd);
            return CLAIM_BUSY;
        }
        snprintf(msg, size, "warning: %s: the file system does not lock files "
                 "(%s), so nothing stops a second sweep from writing it at "
                 "the same time", path, strerror(e));
        rc = CLAIM_NO_LOCKS;
    }
    if (fresh && st.st_size > 0 && !claim_is_hdf5(fd, st.st_size)) {
        snprintf(msg, size, "%s exists and is not an HDF5 file (an input, or "
                 "someone's data?); refusing to replace it: remove it or "
                 "choose another -o", path);
        close(fd);
        return CLAIM_REFUSED;
    }
    *empty = st.st_size == 0 || claim_unborn(fd, st.st_size);
    c->fd = fd;
    return rc;
}

void claim_release(claim *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

/* A sealed memfd holding rtn-init. The bytes are linked into rtn (runtime/sandbox/init_blob.S), so
 * the init a sandbox runs is the one this rtn was built with, and the seals (write, grow,
 * shrink, seal) mean nothing — not even a process inside that reaches /proc/1/exe — can
 * change it afterwards (memfd_create(2), "File sealing"). Creating and filling are two
 * steps so that a sandbox start can fill the memfd its child already holds while the child
 * works (runtime/sandbox/sandbox.c); the child checks the seals before it executes it. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "runtime/internal.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

extern const char rtn_init_blob[];
extern const char rtn_init_blob_end[];

#define INIT_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

int rt_init_memfd_new(struct rtn_error *err) {
        /* MFD_EXEC: with vm.memfd_noexec=1 a memfd is otherwise created non-executable
         * (Linux 6.3); older kernels reject the flag, so retry without it. */
        int fd = memfd_create("rtn-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (fd < 0 && errno == EINVAL)
                fd = memfd_create("rtn-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return rtn_err(err, errno, "memfd_create rtn-init");
        return fd;
}

int rt_init_memfd_fill(int fd, struct rtn_error *err) {
        size_t len = (size_t)(rtn_init_blob_end - rtn_init_blob);
        int r = rtn_write_all(fd, rtn_init_blob, len);
        if (r < 0)
                return rtn_err(err, r, "write rtn-init memfd");
        if (fcntl(fd, F_ADD_SEALS, INIT_SEALS) < 0)
                return rtn_err(err, errno, "seal rtn-init memfd");
        return 0;
}

int rt_init_memfd_check(int fd, struct rtn_error *err) {
        int seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0)
                return rtn_err(err, errno, "read the seals of the rtn-init memfd");
        if ((seals & INIT_SEALS) != INIT_SEALS)
                return rtn_errx(err, EPERM, "the rtn-init memfd is not sealed (seals %#x)", seals);
        return 0;
}

int rt_init_memfd(struct rtn_error *err) {
        _cleanup_close_ int fd = rt_init_memfd_new(err);
        if (fd < 0)
                return fd;
        int r = rt_init_memfd_fill(fd, err);
        return r < 0 ? r : TAKE_FD(fd);
}

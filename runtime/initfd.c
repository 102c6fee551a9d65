/* A sealed memfd holding rtn-init. The bytes are linked into rtn (runtime/init_blob.S), so
 * the init a sandbox runs is the one this rtn was built with, and the seals (write, grow,
 * shrink, seal) mean nothing — not even a process inside that reaches /proc/1/exe — can
 * change it afterwards (memfd_create(2), "File sealing"). */
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

int rt_init_memfd(struct rtn_error *err) {
        /* MFD_EXEC: with vm.memfd_noexec=1 a memfd is otherwise created non-executable
         * (Linux 6.3); older kernels reject the flag, so retry without it. */
        _cleanup_close_ int fd =
                memfd_create("rtn-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (fd < 0 && errno == EINVAL)
                fd = memfd_create("rtn-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return rtn_err(err, errno, "memfd_create rtn-init");
        size_t len = (size_t)(rtn_init_blob_end - rtn_init_blob);
        int r = rtn_write_all(fd, rtn_init_blob, len);
        if (r < 0)
                return rtn_err(err, r, "write rtn-init memfd");
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
                return rtn_err(err, errno, "seal rtn-init memfd");
        return TAKE_FD(fd);
}

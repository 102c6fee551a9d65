/* A main for the fuzz targets without libFuzzer (after systemd's fuzz-main.c): feeds every
 * file named on the command line, and every regular file in every directory named, to
 * LLVMFuzzerTestOneInput once. `make test` runs it over fuzz/corpus/<target>/ under
 * ASan/UBSan, so every input that ever found a bug stays a regression test. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "fuzz/fuzz.h"

#define REPLAY_MAX_INPUT (16u << 20)

static int run_file(int dirfd, const char *name) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                fprintf(stderr, "replay: %s: %s\n", name, strerror(errno));
                return -1;
        }
        if (!S_ISREG(st.st_mode) || (size_t)st.st_size > REPLAY_MAX_INPUT)
                return 0;
        size_t n = (size_t)st.st_size;
        _cleanup_free_ uint8_t *buf = malloc(n ? n : 1);
        if (!buf)
                return -1;
        size_t got = 0;
        while (got < n) {
                ssize_t k = read(fd, buf + got, n - got);
                if (k <= 0)
                        return -1;
                got += (size_t)k;
        }
        LLVMFuzzerTestOneInput(buf, n);
        return 1;
}

static int run_dir(const char *path) {
        DIR *d = opendir(path);
        if (!d)
                return run_file(AT_FDCWD, path);
        int count = 0, r = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                int k = run_file(dirfd(d), e->d_name);
                if (k < 0)
                        r = -1;
                else
                        count += k;
        }
        closedir(d);
        return r < 0 ? r : count;
}

int main(int argc, char **argv) {
        int total = 0;
        for (int i = 1; i < argc; i++) {
                int r = run_dir(argv[i]);
                if (r < 0)
                        return EXIT_FAILURE;
                total += r;
        }
        printf("%s: %d inputs replayed\n", argv[0], total);
        return EXIT_SUCCESS;
}

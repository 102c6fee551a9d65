/* store_import (store/import.c) of an archive: exports travel between machines and users,
 * and the layers in them hold whatever an agent wrote. The input is the archive (pax tar,
 * plain or zstd, as rtn export writes it) imported into a store in a temp dir with a 1 MiB
 * cap. Oracles beyond the sanitizers: a refused import leaves the store as it was (nothing
 * in tmp/, no environment); an accepted one passes store_verify; no fd is left open. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "fuzz/peer.h"
#include "store/internal.h"

static struct store *st;
static char dir[64], archive[96];
static unsigned envs;

static void cleanup(void) {
        store_close(st);
        (void)store_rm_rf_at(AT_FDCWD, dir);
}

static bool tmp_empty(void) {
        int fd = openat(st->tmpfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        bool empty = d != NULL;
        for (struct dirent *e; d && (e = readdir(d));)
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                        empty = false;
        if (d)
                closedir(d);
        return empty;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct rtn_error err = {0};
        if (!st) {
                char data_dir[96];
                snprintf(dir, sizeof dir, "/tmp/rtn-fuzz-import-XXXXXX");
                if (!mkdtemp(dir))
                        abort();
                snprintf(data_dir, sizeof data_dir, "%s/data", dir);
                snprintf(archive, sizeof archive, "%s/in.tar", dir);
                if (store_open(data_dir, &st, &err) < 0)
                        abort();
                atexit(cleanup);
        }
        int before = fuzz_count_fds();
        int fd = open(archive, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || rtn_write_all(fd, data, size) < 0)
                abort();
        close(fd);
        char env[32], tip[STORE_ID_SIZE];
        snprintf(env, sizeof env, "e%u", envs);
        int r = store_import(st, env, archive, 1u << 20, tip, &err);
        if (r < 0) {
                char had[STORE_ID_SIZE];
                if (!err.msg[0] || store_tip(st, env, had, &err) != -ENOENT || !tmp_empty())
                        abort();
        } else {
                struct store_verify_stats vs;
                if (store_verify(st, &vs, &err) < 0)
                        abort();
                envs++; /* the next import goes to an environment of its own */
        }
        fuzz_fds_check(before);
        return 0;
}

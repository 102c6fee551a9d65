/* Linked into every unit binary (GNUmakefile): criterion starts each test in a process of
 * its own (an exec of the binary) and calls git_libgit2_init there, for nothing but the diff
 * of the two sides of a failed string assertion. Loading libgit2 with the fifteen libraries
 * it needs (mbedTLS, krb5, ssh2, pcre2...) cost every test process its relocations, and its
 * TLS setup parsed the system's CA bundle (~9 ms of CPU per test under ASan). These
 * definitions take the place of libgit2's for criterion (linked statically, GNUmakefile's
 * CRITERION_LIBS, no libgit2 is linked at all; linked shared, the executable's symbols come
 * first) and load libgit2 through common/dl.h at the first diff, so a failing assertion still
 * prints its diff. */
#include <stddef.h>

#include "common/dl.h"

int git_libgit2_init(void);
int git_libgit2_shutdown(void);
int git_diff_buffers(const void *old_buffer, size_t old_len, const char *old_as_path,
                     const void *new_buffer, size_t new_len, const char *new_as_path,
                     const void *options, void *file_cb, void *binary_cb, void *hunk_cb,
                     void *line_cb, void *payload);

static struct {
        int (*git_libgit2_init)(void);
        int (*git_libgit2_shutdown)(void);
        int (*git_diff_buffers)(const void *, size_t, const char *, const void *, size_t,
                                const char *, const void *, void *, void *, void *, void *, void *);
} git;

#define GIT_SYM(f) RTN_DL_SYM(git, f)
static const struct rtn_dl_sym git_syms[] = {GIT_SYM(git_libgit2_init) GIT_SYM(git_libgit2_shutdown)
                                                     GIT_SYM(git_diff_buffers)};

/* The development link libcriterion-dev brings (through libgit2-dev): the libgit2 whose
 * headers criterion was built against. When criterion is linked shared, libgit2 is already
 * loaded as its dependency and dlopen returns that copy. */
static struct rtn_dl git_dl = RTN_DL_INIT("libgit2.so", git_syms);

static int inits; /* criterion's init calls not yet undone by a shutdown */
static int real_inits; /* of them, how many libgit2 itself has had */

int git_libgit2_init(void) {
        return ++inits;
}

int git_libgit2_shutdown(void) {
        if (inits == 0)
                return -1;
        if (real_inits == inits) {
                git.git_libgit2_shutdown();
                real_inits--;
        }
        return --inits;
}

int git_diff_buffers(const void *old_buffer, size_t old_len, const char *old_as_path,
                     const void *new_buffer, size_t new_len, const char *new_as_path,
                     const void *options, void *file_cb, void *binary_cb, void *hunk_cb,
                     void *line_cb, void *payload) {
        if (rtn_dl_load(&git_dl) < 0)
                return -1;
        while (real_inits < inits && git.git_libgit2_init() > 0)
                real_inits++;
        return git.git_diff_buffers(old_buffer, old_len, old_as_path, new_buffer, new_len,
                                    new_as_path, options, file_cb, binary_cb, hunk_cb, line_cb,
                                    payload);
}

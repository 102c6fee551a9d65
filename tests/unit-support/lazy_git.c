/* Linked into every unit binary (GNUmakefile): criterion starts each test in a process of
 * its own and calls git_libgit2_init there, whose TLS setup parses the system's CA bundle
 * (~9 ms of CPU per test process, for nothing: criterion uses libgit2 only to diff the two
 * sides of a failed string assertion). These definitions take the place of libgit2's for
 * criterion (the executable's symbols come first) and defer that init to the first diff,
 * so a failing assertion still prints its diff. */
#include <dlfcn.h>
#include <stddef.h>

int git_libgit2_init(void);
int git_libgit2_shutdown(void);
int git_diff_buffers(const void *old_buffer, size_t old_len, const char *old_as_path,
                     const void *new_buffer, size_t new_len, const char *new_as_path,
                     const void *options, void *file_cb, void *binary_cb, void *hunk_cb,
                     void *line_cb, void *payload);

static int inits; /* criterion's init calls not yet undone by a shutdown */
static int real_inits; /* of them, how many libgit2 itself has had */

static void *next(const char *name) {
        return dlsym(RTLD_NEXT, name);
}

int git_libgit2_init(void) {
        return ++inits;
}

int git_libgit2_shutdown(void) {
        if (inits == 0)
                return -1;
        if (real_inits == inits) {
                int (*shutdown)(void) = next("git_libgit2_shutdown");
                if (shutdown)
                        shutdown();
                real_inits--;
        }
        return --inits;
}

int git_diff_buffers(const void *old_buffer, size_t old_len, const char *old_as_path,
                     const void *new_buffer, size_t new_len, const char *new_as_path,
                     const void *options, void *file_cb, void *binary_cb, void *hunk_cb,
                     void *line_cb, void *payload) {
        int (*init)(void) = next("git_libgit2_init");
        int (*diff)(const void *, size_t, const char *, const void *, size_t, const char *,
                    const void *, void *, void *, void *, void *, void *) =
                next("git_diff_buffers");
        if (!init || !diff)
                return -1;
        while (real_inits < inits && init() > 0)
                real_inits++;
        return diff(old_buffer, old_len, old_as_path, new_buffer, new_len, new_as_path, options,
                    file_cb, binary_cb, hunk_cb, line_cb, payload);
}

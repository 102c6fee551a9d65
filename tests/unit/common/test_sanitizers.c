/* The sanitized tree that make test runs (make SANITIZE=address,undefined, docs/HACKING.md)
 * still catches what it is there for: a leak, a heap overflow, a use after free, a signed
 * overflow. Each is made in a child whose stderr is read back here, so a change to how that
 * tree is linked (the runtimes linked statically, criterion's archive) or to the sanitizer
 * options that let one of them pass unseen fails this test instead of every other test
 * passing for the wrong reason. In an unsanitized tree the cases skip. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define RTN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RTN_TEST_ASAN 1
#endif
#endif

/* Linked in when UBSan is (weak: NULL otherwise). */
extern void __ubsan_handle_add_overflow_abort(void *, void *, void *) __attribute__((weak));

static void *volatile sink;
static volatile int int_sink;

static __attribute__((noinline)) void leak(void) {
        for (int i = 0; i < 8; i++)
                sink = malloc(64 + (size_t)i);
        sink = NULL;
}

/* Overwrites the stack below the caller's frame, where a copy of a leaked pointer could
 * have stayed and been taken for a reference. */
static __attribute__((noinline)) void scrub_stack(void) {
        volatile char buf[16384];
        memset((char *)buf, 0, sizeof buf);
}

static __attribute__((noinline)) void heap_overflow(void) {
        char *p = malloc(8);
        sink = p;
        ((char *volatile)sink)[8] = 1;
        free(p);
}

static __attribute__((noinline)) void use_after_free(void) {
        char *p = malloc(8);
        sink = p;
        free(p);
        int_sink = ((char *volatile)sink)[0];
}

static __attribute__((noinline)) void signed_overflow(void) {
        int_sink = INT_MAX;
        int_sink = int_sink + 1;
}

/* Runs bad() in a child that then exits normally; its stderr, and whether it failed. */
static char *child_report(void (*bad)(void), int *failed) {
        int p[2];
        cr_assert_eq(pipe(p), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(p[1], 2);
                close(p[0]);
                close(p[1]);
                bad();
                scrub_stack();
                exit(0); /* exit, not _exit: LeakSanitizer's check runs at exit */
        }
        close(p[1]);
        size_t len = 0, cap = 65536;
        char *out = malloc(cap);
        cr_assert_not_null(out);
        for (ssize_t n; (n = read(p[0], out + len, cap - 1 - len)) > 0;)
                if ((len += (size_t)n) == cap - 1)
                        break;
        out[len] = '\0';
        close(p[0]);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        *failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        return out;
}

static void caught(void (*bad)(void), const char *report) {
        int failed;
        char *out = child_report(bad, &failed);
        cr_expect(failed, "the child exited 0 (output: %.400s)", out);
        cr_expect(strstr(out, report) != NULL, "no '%s' in the child's stderr: %.400s", report,
                  out);
        free(out);
}

static void need_asan(void) {
#ifndef RTN_TEST_ASAN
        cr_skip_test("not an AddressSanitizer build");
#endif
}

Test(sanitizers, leak_reported) {
        need_asan();
        caught(leak, "ERROR: LeakSanitizer: detected memory leaks");
}

Test(sanitizers, heap_overflow_reported) {
        need_asan();
        caught(heap_overflow, "ERROR: AddressSanitizer: heap-buffer-overflow");
}

Test(sanitizers, use_after_free_reported) {
        need_asan();
        caught(use_after_free, "ERROR: AddressSanitizer: heap-use-after-free");
}

Test(sanitizers, signed_overflow_halts) {
        if (!__ubsan_handle_add_overflow_abort)
                cr_skip_test("not an UndefinedBehaviorSanitizer build");
        caught(signed_overflow, "runtime error: signed integer overflow");
}

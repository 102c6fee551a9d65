/* Room for a commit (store/room.c): the filesystem's reserve and the store's budget, counted
 * as the data dir's whole use on disk. */
#include <errno.h>

#include "helpers.h"

TestSuite(store_room, .init = t_setup, .fini = t_teardown);

Test(store_room, reserve_is_five_percent_between_a_gib_and_a_quarter) {
        cr_assert_eq(store_reserve_bytes(1000ULL << 30), 50ULL << 30);
        cr_assert_eq(store_reserve_bytes(10ULL << 30), 1ULL << 30);
        cr_assert_eq(store_reserve_bytes(64ULL << 20), 16ULL << 20);
}

/* Files anywhere in the data dir count, a file of two names once; the budget refuses what
 * would pass it with the numbers, and no budget refuses nothing the filesystem has room for. */
Test(store_room, budget_counts_the_whole_data_dir) {
        struct store *s;
        struct rtn_error err = {0};
        cr_assert_eq(store_open(t_path("data"), &s, &err), 0, "%s", err.msg);
        uint64_t before, after;
        cr_assert_eq(store_usage(s, &before), 0);
        int fd = open(t_path("data/layers/blob"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        const size_t mib = 1 << 20;
        char *buf = malloc(mib); /* not static: LeakSanitizer reads every static page at exit */
        cr_assert_not_null(buf);
        memset(buf, 'x', mib);
        for (int i = 0; i < 4; i++)
                cr_assert_eq(write(fd, buf, mib), (ssize_t)mib);
        free(buf);
        close(fd);
        cr_assert_eq(link(t_path("data/layers/blob"), t_path("data/tmp/blob2")), 0);
        cr_assert_eq(store_usage(s, &after), 0);
        cr_assert(after - before >= (4u << 20) && after - before < (5u << 20), "grew by %llu",
                  (unsigned long long)(after - before));
        cr_assert_eq(store_room(s, 1 << 20, &err), 0, "%s", err.msg);
        store_set_max(s, after + (2u << 20));
        cr_assert_eq(store_room(s, 1 << 20, &err), 0, "%s", err.msg);
        cr_assert_eq(store_room(s, 3u << 20, &err), -ENOSPC);
        cr_assert(strstr(err.msg, "past --store-max") && strstr(err.msg, "changes are kept"), "%s",
                  err.msg);
        store_close(s);
}

/* One epoll event loop per process: fds with callbacks, one-shot or periodic timers
 * (no fd of their own: epoll_wait waits until the first is due), and signals delivered through a
 * signalfd. The MCP server reads stdin on it, and the sandbox sessions register their control
 * sockets, pidfds and output pipes on the same loop, so a long command never blocks ping or
 * cancellation.
 *
 * Callbacks may add or remove any source, including their own, at any time: removed sources
 * are unlinked at once and freed only after the current dispatch round, so a stale event in
 * the same epoll_wait batch is skipped, never dispatched to freed memory.
 *
 * Signals given to rtn_loop_add_signal() are blocked with sigprocmask (signalfd(2) requires
 * it); a child the caller forks inherits that mask and must reset it before execve. */
#pragma once

#include <stdint.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

struct rtn_loop;
struct rtn_loop_source;

typedef void (*rtn_loop_io_fn)(struct rtn_loop *l, int fd, uint32_t revents, void *userdata);
typedef void (*rtn_loop_timer_fn)(struct rtn_loop *l, struct rtn_loop_source *t, void *userdata);
typedef void (*rtn_loop_signal_fn)(struct rtn_loop *l, const struct signalfd_siginfo *si,
                                   void *userdata);

int rtn_loop_new(struct rtn_loop **ret);
/* Frees every source (closing the loop's own signalfd, not the caller's fds)
 * and restores the signal mask it changed. */
void rtn_loop_free(struct rtn_loop *l);

/* Watches fd (owned by the caller) for events (EPOLLIN, EPOLLOUT ...). -EEXIST when fd is
 * already watched, -EPERM for files epoll cannot watch (regular files). */
int rtn_loop_add_fd(struct rtn_loop *l, int fd, uint32_t events, rtn_loop_io_fn fn, void *userdata);
int rtn_loop_mod_fd(struct rtn_loop *l, int fd, uint32_t events);
/* Stops watching fd; -ENOENT when it was not watched. Call before closing the fd. */
int rtn_loop_del_fd(struct rtn_loop *l, int fd);

/* A timer firing after usec microseconds (CLOCK_MONOTONIC), then every interval_usec when
 * that is non-zero (once for the periods missed when it falls behind). Due timers fire after
 * the round's fd events, the earliest deadline first; one armed from a timer's callback
 * fires in a later round. *ret stays valid until rtn_loop_timer_cancel or, for a one-shot
 * timer, until its callback returns. */
int rtn_loop_add_timer(struct rtn_loop *l, uint64_t usec, uint64_t interval_usec,
                       rtn_loop_timer_fn fn, void *userdata, struct rtn_loop_source **ret);
void rtn_loop_timer_cancel(struct rtn_loop *l, struct rtn_loop_source *t);

/* Delivers signo to fn (one handler per signal; a second call replaces it). SIGPIPE may be
 * added with fn NULL to only block it, so writes to a closed pipe fail with EPIPE. */
int rtn_loop_add_signal(struct rtn_loop *l, int signo, rtn_loop_signal_fn fn, void *userdata);

/* Dispatches one round: waits up to timeout_ms (-1 forever) for events. Returns the number
 * of events dispatched (0 on timeout) or -errno. */
int rtn_loop_run_once(struct rtn_loop *l, int timeout_ms);
/* Runs until rtn_loop_stop; returns the code given there. */
int rtn_loop_run(struct rtn_loop *l);
void rtn_loop_stop(struct rtn_loop *l, int code);
int rtn_loop_stopped(const struct rtn_loop *l);

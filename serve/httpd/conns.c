/* The connections of `rtn serve --http` that have not carried the token yet
 * (docs/security-invariants.md, invariant 27): they are listed oldest first, dropped when
 * they do not finish a request with the token in time, and capped apart from the room of
 * the token holder's connections. Those receiving a body are listed too, and closed once
 * their client is gone. */
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "common/clock.h"
#include "serve/httpd/httpd.h"
#include "serve/httpd/mhd.h"

static void conns_unlink(struct httpd_conn *k) {
        struct httpd_conns *l = k->on;
        if (!l)
                return;
        if (k->prev)
                k->prev->next = k->next;
        else
                l->head = k->next;
        if (k->next)
                k->next->prev = k->prev;
        else
                l->tail = k->prev;
        k->prev = k->next = NULL;
        k->on = NULL;
        l->n--;
}

static void conns_add(struct httpd_conns *l, struct httpd_conn *k) {
        conns_unlink(k);
        k->prev = l->tail;
        if (l->tail)
                l->tail->next = k;
        else
                l->head = k;
        l->tail = k;
        k->on = l;
        l->n++;
}

/* Drops a connection: libmicrohttpd sees end of file on its next read and closes it. */
static void conn_drop(struct httpd_conn *k) {
        conns_unlink(k);
        (void)shutdown(k->fd, SHUT_RDWR);
}

/* Bytes the client sent that we have not read yet: a busy server's lag, not the client's. */
static bool unread(const struct httpd_conn *k) {
        int n = 0;
        return ioctl(k->fd, FIONREAD, &n) == 0 && n > 0;
}

/* The kernel's TCP_INFO of the connection, as much of it as this kernel fills (*len); false
 * when it cannot be read. */
static bool tcp_info_of(const struct httpd_conn *k, struct tcp_info *ti, socklen_t *len) {
        *len = sizeof *ti;
        memset(ti, 0, sizeof *ti);
        return getsockopt(k->fd, IPPROTO_TCP, TCP_INFO, ti, len) == 0;
}

/* The client sent at least a byte on the connection, read by us or not (the kernel's
 * count; true when it cannot tell, so that the deadline applies). */
static bool spoke(const struct httpd_conn *k) {
        struct tcp_info ti;
        socklen_t len;
        if (!tcp_info_of(k, &ti, &len) ||
            len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof ti.tcpi_bytes_received)
                return true;
        return ti.tcpi_bytes_received > 0;
}

/* The client closed its side (TCP's CLOSE_WAIT: its FIN came). */
#define TCP_STATE_CLOSE_WAIT 8 /* the kernel's TCP_CLOSE_WAIT (netinet/tcp.h clashes here) */
static bool peer_closed(const struct httpd_conn *k) {
        struct tcp_info ti;
        socklen_t len;
        return tcp_info_of(k, &ti, &len) && ti.tcpi_state == TCP_STATE_CLOSE_WAIT;
}

void httpd_conn_receiving(struct httpd_req *q, bool on) {
        const union MHD_ConnectionInfo *i =
                M.conn_info(q->conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        struct httpd_conn *k = i ? i->socket_context : NULL;
        if (!k || (k->on == &q->h->receiving) == on)
                return;
        if (on)
                conns_add(&q->h->receiving, k);
        else
                conns_unlink(k);
}

/* The connections that did not send a whole request with the token within HTTPD_HEAD_USEC
 * of their first byte are dropped (half a head, or one trickled a byte at a time), unless
 * what they sent is still waiting for us to read it. One that has sent nothing yet is not
 * timed: on the wire it is a client its machine has not run yet (a loaded one can take
 * longer than the deadline between its connect and its write, which it then makes on a
 * closed connection and loses the request), and the cap in on_connection bounds them. */
void httpd_mhd_tick(struct httpd *h) {
        uint64_t now = rtn_now_usec();
        for (struct httpd_conn *k = h->unauth.head, *next; k; k = next) {
                next = k->next;
                if (!k->first_usec && spoke(k))
                        k->first_usec = now;
                if (k->first_usec && now - k->first_usec >= HTTPD_HEAD_USEC && !unread(k))
                        conn_drop(k);
        }
        /* A client gone in the middle of a body: libmicrohttpd, edge-triggered, can miss the
         * end of file that came with the last bytes and would hold the connection (its fd and
         * its room) for the authenticated idle timeout, minutes; a burst of them locked token
         * holders out. Once everything sent is read, the connection is closed. */
        for (struct httpd_conn *k = h->receiving.head, *next; k; k = next) {
                next = k->next;
                if (peer_closed(k) && !unread(k))
                        conn_drop(k);
        }
}

void httpd_conn_notify(void *cls, struct MHD_Connection *c, void **ctx,
                       enum MHD_ConnectionNotificationCode why) {
        struct httpd *h = cls;
        struct httpd_conn *k = *ctx;
        if (why == MHD_CONNECTION_NOTIFY_CLOSED) {
                if (k) {
                        conns_unlink(k);
                        free(k);
                }
                *ctx = NULL;
                return;
        }
        const union MHD_ConnectionInfo *i = M.conn_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!i || !(k = calloc(1, sizeof *k))) {
                if (i)
                        (void)shutdown(i->connect_fd, SHUT_RDWR);
                return;
        }
        k->fd = i->connect_fd;
        k->first_usec = spoke(k) ? rtn_now_usec() : 0;
        conns_add(&h->unauth, k);
        *ctx = k;
        /* Past the cap the oldest goes (one whose request waits unread is left to be read):
         * a flood of connections without the token cannot fill the room a token holder's
         * new connection needs. */
        for (struct httpd_conn *o = h->unauth.head, *next; o && h->unauth.n > h->max_unauth;
             o = next) {
                next = o->next;
                if (!unread(o))
                        conn_drop(o);
        }
}

/* The connection carried a request with the token: off the list, and kept alive while idle
 * as long as a client's session may be. */
void httpd_conn_authed(struct httpd_req *q) {
        const union MHD_ConnectionInfo *i =
                M.conn_info(q->conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        struct httpd_conn *k = i ? i->socket_context : NULL;
        if (!k || k->authed)
                return;
        k->authed = true;
        conns_unlink(k);
        (void)M.conn_set(q->conn, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)HTTPD_AUTHED_IDLE_SECS);
}

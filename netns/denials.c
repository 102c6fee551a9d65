/* The gate's record of refused requests (netns/gate.c makes them): the last message, a ring
 * of the latest for the reports of the command that made them (network_denied, rtn exec's
 * stderr), and totals by (host, port, reason) for env_status. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "netns/internal.h"
#include "netns/netns.h"

static void denial_set(struct netns_denial *d, const char *host, uint16_t port, const char *why) {
        snprintf(d->host, sizeof d->host, "%s", host);
        d->port = port;
        snprintf(d->reason, sizeof d->reason, "%s", why);
}

void netns_gate_refuse(struct netns_gate *g, const char *host, uint16_t port, const char *why) {
        pthread_mutex_lock(&g->mu);
        g->refused++;
        snprintf(g->last, sizeof g->last, "rtn gate refused: %s", why);
        struct netns_denial *d = &g->log[g->seq % NETNS_GATE_LOG_MAX];
        denial_set(d, host, port, why);
        d->count = 1;
        g->seq++;
        size_t i = 0;
        for (; i < g->ntotals; i++)
                if (g->totals[i].port == port && !strcmp(g->totals[i].host, host) &&
                    !strcmp(g->totals[i].reason, d->reason))
                        break;
        if (i == g->ntotals && g->ntotals < NETNS_GATE_TOTALS_MAX)
                denial_set(&g->totals[g->ntotals++], host, port, why);
        if (i < g->ntotals)
                g->totals[i].count++;
        pthread_mutex_unlock(&g->mu);
}

unsigned netns_gate_refusals(struct netns_gate *g, char *buf, size_t len) {
        pthread_mutex_lock(&g->mu);
        unsigned n = g->refused;
        if (len)
                snprintf(buf, len, "%s", g->last);
        pthread_mutex_unlock(&g->mu);
        return n;
}

uint64_t netns_gate_seq(struct netns_gate *g) {
        pthread_mutex_lock(&g->mu);
        uint64_t s = g->seq;
        pthread_mutex_unlock(&g->mu);
        return s;
}

static size_t merge(struct netns_denial *out, size_t n, size_t max, const struct netns_denial *d,
                    uint64_t add, uint64_t *ret_more) {
        for (size_t i = 0; i < n; i++)
                if (out[i].port == d->port && !strcmp(out[i].host, d->host) &&
                    !strcmp(out[i].reason, d->reason)) {
                        out[i].count += add;
                        return n;
                }
        if (n == max) {
                *ret_more += add;
                return n;
        }
        out[n] = *d;
        out[n].count = add;
        return n + 1;
}

size_t netns_gate_denials(struct netns_gate *g, uint64_t since, uint64_t until,
                          struct netns_denial *out, size_t max, uint64_t *ret_more) {
        size_t n = 0;
        *ret_more = 0;
        pthread_mutex_lock(&g->mu);
        if (since == NETNS_GATE_ALL) {
                for (size_t i = 0; i < g->ntotals; i++)
                        n = merge(out, n, max, &g->totals[i], g->totals[i].count, ret_more);
                uint64_t listed = 0;
                for (size_t i = 0; i < g->ntotals; i++)
                        listed += g->totals[i].count;
                *ret_more += g->seq - listed; /* past NETNS_GATE_TOTALS_MAX distinct ones */
        } else {
                if (until > g->seq)
                        until = g->seq;
                if (g->seq - since > NETNS_GATE_LOG_MAX && since < until) { /* overwritten since */
                        uint64_t first = g->seq - NETNS_GATE_LOG_MAX;
                        *ret_more += (first < until ? first : until) - since;
                        since = first;
                }
                for (uint64_t s = since; s < until; s++)
                        n = merge(out, n, max, &g->log[s % NETNS_GATE_LOG_MAX], 1, ret_more);
        }
        pthread_mutex_unlock(&g->mu);
        return n;
}

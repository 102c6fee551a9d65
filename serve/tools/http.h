/* http_get / http_post for `rtn serve --http-tools` (docs/tools.md): requests made on the
 * trusted side with libcurl, loaded with dlopen on first use so `rtn exec` and a server
 * without --http-tools never map it. Every hop (redirects are followed here, not by curl)
 * resolves its host with netns_resolve (public unicast only, and no address of this machine
 * unless a rule ADDR:PORT of the server's --allow-net names it), pins curl to that address
 * (CURLOPT_RESOLVE) and refuses any other in curl's open-socket hook, so neither a redirect
 * nor a DNS answer that changes between lookups can reach the host, its LAN or a metadata
 * service. Each request runs in a thread of its own; its result is handed back to the event
 * loop through a pipe, where the MCP call is finished. */
#pragma once

#include <stdbool.h>

struct rt_http;
struct netns_policy;
struct rtn_loop;
struct mcp_call;
struct mcp_args;

/* Starts a request for call; the call is finished later on loop (or now, on a bad request).
 * *h is created on first use, with a copy of net, the server's network policy (--allow-net,
 * --net-policy), whose rules ADDR:PORT are the one thing that admits an address of this
 * machine (netns_resolve). Returns 0, or -errno when nothing could be started (the caller
 * reports it). */
int rt_http_start(struct rt_http **h, struct rtn_loop *loop, const struct netns_policy *net,
                  struct mcp_call *call, bool post, const struct mcp_args *args);
/* notifications/cancelled: aborts the transfer; true when call was one of ours. */
bool rt_http_cancel(struct rt_http *h, struct mcp_call *call);
/* Finishes every call still running with an error (the server is going away). */
void rt_http_shutdown(struct rt_http *h);
void rt_http_free(struct rt_http *h);

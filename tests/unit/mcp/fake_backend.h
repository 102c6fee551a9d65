/* A fake MCP backend for the unit tests and the dispatch fuzzer: it answers shell_run with
 * canned results, immediately or after a delay on a loop timer, so tests can hold calls in
 * flight and check that ping, cancellation and progress work meanwhile. The command string
 * picks the behaviour:
 *   "sleep MS"   finish after MS milliseconds       "fail"      finish_error
 *   "progress"   three progress notifications, then finish
 *   "errno"      return -EIO without finishing       "badjson"   finish with invalid JSON
 *   "sleepbad MS"  finish with invalid JSON after MS milliseconds
 *   "slowstart MS" block MS milliseconds before the call returns (as rtn serve's start of a
 *                sandbox does), then finish MS milliseconds later
 *   "big"        a result larger than any sane limit
 *   "log"        a log message of the call at debug ("low") and at warning ("high"), then finish
 *   anything else: finish at once with stdout = the command.
 * Other tools finish at once with {"ok":true}. */
#pragma once

#include <stdbool.h>

#include "mcp/mcp.h"

struct fake_pending;

struct fake_backend {
        struct mcp_server *server;
        int calls, cancels, shutdowns, attached;
        char last_tool[64];
        char last_cancelled[64];
        struct fake_pending *pending;
};

extern const struct mcp_backend_ops fake_backend_ops;

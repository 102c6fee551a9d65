/* rtn's version: printed by `rtn --version` and given to MCP clients in initialize. */
#pragma once

#define RTN_VERSION "0.1.0"

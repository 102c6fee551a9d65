/* The exit codes rtn gives when the command's own is not the answer (docs/rtn.1, EXIT
 * STATUS): one home for rtn, `rtn serve` and rtn-init, which all mean the same by them. 125 is
 * docker's code for its own failures; it keeps 126, 127 and 128+N for the command. */
#pragma once

#define RTN_EXIT_FAILURE 125 /* rtn itself failed, a usage error included */
#define RTN_EXIT_NOEXEC 126 /* the command was found but cannot be executed */
#define RTN_EXIT_NOTFOUND 127 /* the command was not found */

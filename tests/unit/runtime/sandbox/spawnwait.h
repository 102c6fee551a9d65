/* What the sandbox unit tests do to run one command in a started sandbox and learn how it
 * ended (tests/unit/runtime/sandbox/spawnwait.c). */
#ifndef RTN_TESTS_SPAWNWAIT_H
#define RTN_TESTS_SPAWNWAIT_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/runtime.h"

/* Spawns argv (with PATH=/usr/bin:/bin) as command id under policy, stdin and stdout
 * /dev/null and stderr errfd (/dev/null when -1); asserts rtn-init took the request. */
void t_spawn(struct rt_sandbox *sb, uint64_t id, uint32_t policy, char *const argv[], int errfd);

/* Waits for command id's end: its exit code, or -(errno) of a spawn rtn-init refused with
 * its message in msg (len bytes, always terminated). Other commands' events are passed by. */
int t_wait_exit(struct rt_sandbox *sb, uint64_t id, char *msg, size_t len);

#endif

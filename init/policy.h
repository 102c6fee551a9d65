#pragma once
#include <stdint.h>
#include "common/err.h"
#include "init/init.h"
int  init_landlock_abi(void);
int  init_landlock_prepare(enum init_policy policy, const char *const writable[], size_t n,
                           uint16_t proxy_port, int *ret_ruleset_fd, struct rtn_error *err);
int  init_landlock_enforce(int ruleset_fd, struct rtn_error *err);
int  init_seccomp_install(enum init_policy policy, struct rtn_error *err);
void init_limits_default(struct init_limits *ret);
int  init_rlimits_apply(const struct init_limits *l, struct rtn_error *err);
int  init_caps_drop_all(struct rtn_error *err);

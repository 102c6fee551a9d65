#pragma once
#include "common/err.h"
int netns_lo_up(struct rtn_error *err);

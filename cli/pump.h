/* Non-blocking byte pumps (cli/pump.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct rt_pump {
        int from, to;
        bool eof, done, close_to;
        size_t len, off;
        char buf[65536];
};

void rt_pump_init(struct rt_pump *p, int from, int to, bool close_to_on_eof);
/* poll(2) events the pump waits for, on *ret_fd; 0 when finished. */
short rt_pump_events(const struct rt_pump *p, int *ret_fd);
/* Moves as many bytes as possible without blocking. */
void rt_pump_run(struct rt_pump *p);

/* The libFuzzer entry point every fuzz/fuzz_*.c defines, declared once so the strict
 * -Wmissing-prototypes build accepts it; fuzz/replay.c calls it without libFuzzer. */
#pragma once

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

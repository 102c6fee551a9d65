/* `rtn probe` (placeholder until the real probe lands). */
#include <stdio.h>
#include "runtime/cmd.h"
int rt_cmd_probe(int argc, char **argv) {
        fprintf(stderr, "rtn probe: not implemented yet\n");
        return 1;
}

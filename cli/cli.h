/* The rtn verbs implemented in runtime/ (argv[0] is the verb; each returns an exit code). */
#pragma once

#define RTN_VERSION "0.1.0"

int rt_cmd_exec(int argc, char **argv);
int rt_cmd_probe(int argc, char **argv);
int rt_cmd_serve(int argc, char **argv);

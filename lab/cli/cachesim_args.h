/*
 * cli/cachesim_args.h — libCacheSim's cachesim command line
 * (TRACE TYPE ALGO SIZE [flags]) read as `hotset sim` flags.
 */
#ifndef HOTSET_CLI_CACHESIM_ARGS_H
#define HOTSET_CLI_CACHESIM_ARGS_H

#include "common/args.h"

#include <stdbool.h>

/* True if argv (argv[0] the subcommand) starts with two positional
 * arguments: cachesim's form (one is hotset's own form, the trace given as
 * its one argument). */
bool cachesim_form(int argc, char **argv);
/* The same command as hotset sim's flags, ending with --cachesim-lines;
 * NULL if out of memory. Usage errors exit with status 2 (args.h). Free
 * with cachesim_free. */
char **cachesim_translate(const args_cmd *cmd, int argc, char **argv, int *out_argc);
void cachesim_free(char **argv);

#endif

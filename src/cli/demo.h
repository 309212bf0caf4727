/*
 * cli/demo.h — `hotset demo`: a short multi-threaded read/write run that shows
 * the pool at work and prints its statistics.
 */
#ifndef HOTSET_CLI_DEMO_H
#define HOTSET_CLI_DEMO_H

/* The subcommand's entry point: argv[0] is "demo". Returns the exit status
 * (0, or 1 on a run-time error; usage errors exit 2 from the parser). */
int demo_main(int argc, char **argv);

#endif

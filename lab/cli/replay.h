/*
 * cli/replay.h — `hotset replay`: a trace driven through the real buffer
 * pool, over real relation files sized from the trace.
 */
#ifndef HOTSET_CLI_REPLAY_H
#define HOTSET_CLI_REPLAY_H

/* The subcommand's entry point: argv[0] is "replay". Returns the exit
 * status (0, or 1 on a run-time error; usage errors exit 2 from the parser). */
int replay_main(int argc, char **argv);

#endif

/* cli/sim_cmd.h — `hotset sim`, `hotset gen-trace`, `hotset trace-stats`. */
#ifndef HOTSET_CLI_SIM_CMD_H
#define HOTSET_CLI_SIM_CMD_H

int sim_main(int argc, char **argv);
int gen_trace_main(int argc, char **argv);
int trace_stats_main(int argc, char **argv);

#endif

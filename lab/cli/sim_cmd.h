/* cli/sim_cmd.h — `hotset sim`, `hotset gen-trace`, `hotset trace-stats`. */
#ifndef HOTSET_CLI_SIM_CMD_H
#define HOTSET_CLI_SIM_CMD_H

#include "common/args.h"
#include "sim/trace.h"

#include <stdbool.h>

int sim_main(int argc, char **argv);
int gen_trace_main(int argc, char **argv);
int trace_stats_main(int argc, char **argv);

/* Whether every policy of the list can run on a clock that counts requests
 * (none has a nonzero duration in milliseconds); false with the refusal
 * as hs_last_error(). */
bool policies_run_on_request_clock(char specs[][ARGS_SPEC_LEN], int nspecs);

/* --ring-rule's value: true for "pg", false for "none"; anything else is a
 * usage error of `cmd`. */
bool parse_ring_rule(const args_cmd *cmd, const char *arg);

/* The reader options from --format, --csv, --skip-bad and --time-unit (NULL:
 * seconds); a bad value is a usage error of `cmd`. */
hs_trace_options trace_options_from_flags(const args_cmd *cmd, const char *format_name,
                                          const char *csv_spec, bool skip_bad,
                                          const char *time_unit);

/* The trace a subcommand reads: --trace's value (`flag`, or NULL) or the one
 * positional argument args_parse left (`npos` of them, in argv[1]), never
 * both; neither is a usage error of `cmd`. */
const char *trace_path_from_args(const args_cmd *cmd, const char *flag, int npos, char **argv);

/* The flags every trace-reading subcommand spells alike: --trace FILE (its
 * help says what else the command takes) and --format FORMAT. */
#define TRACE_OPT_FILE(dest_, help_)                                                               \
  { .name = "trace", .kind = ARGS_STRING, .dest = (dest_), .arg = "FILE", .help = (help_) }
#define TRACE_OPT_FORMAT(dest_)                                                                    \
  {                                                                                                \
    .name = "format", .kind = ARGS_STRING, .dest = (dest_), .arg = "FORMAT", .def = "auto",        \
    .help = "auto, oraclegeneral, vscsi, csv or txt"                                               \
  }

#endif

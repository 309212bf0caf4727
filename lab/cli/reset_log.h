/* cli/reset_log.h — `hotset reset-log`: start a new log for a data
 * directory whose log cannot prove where recovery must start. */
#ifndef HOTSET_CLI_RESET_LOG_H
#define HOTSET_CLI_RESET_LOG_H

/* argv[0] is "reset-log". Returns 0 after a reset, 1 without --force or on
 * an error. */
int reset_log_main(int argc, char **argv);

#endif

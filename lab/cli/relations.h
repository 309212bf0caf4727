/* cli/relations.h — `hotset relations`: the list of the relation files a
 * data directory must hold, against what is on disk, and the ways out when
 * a listed file or the list is lost. */
#ifndef HOTSET_CLI_RELATIONS_H
#define HOTSET_CLI_RELATIONS_H

/* argv[0] is "relations". Returns 0, or 1 if a listed file is missing or
 * short, the list is lost, without --force, or on an error. */
int relations_main(int argc, char **argv);

#include <stdbool.h>
#include <stdint.h>

/* For `hotset verify`: prints a line (or, with `json`, an object) for each
 * listed file of `dir` that is missing or short, and for a list that is
 * damaged, or missing where `required` (the control file says there is
 * one); returns how many. */
uint64_t relations_verify(const char *dir, bool required, bool json);

#endif

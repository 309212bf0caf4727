/*
 * core/version.c — the library's own version, as compiled into it.
 */
#include "hotset/version.h"

const char *hs_version(void) {
  return HOTSET_VERSION_STRING;
}

int hs_version_number(void) {
  return HOTSET_VERSION_NUMBER;
}

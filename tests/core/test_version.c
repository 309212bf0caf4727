/*
 * test_version — one version everywhere: CMakeLists.txt's project(VERSION)
 * (passed in by the build), include/hotset/version.h's macros, and what the
 * library answers (hs_version, hs_version_number); and the shared library's
 * soname carries major.minor before 1.0, major after.
 *
 *   test_version <project version> <shared library's soname file name>
 */
#include "check.h"
#include "hotset/version.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  REQUIRE(argc == 3);
  const char *project = argv[1], *soname = argv[2];
  char from_parts[32];
  snprintf(from_parts, sizeof from_parts, "%d.%d.%d", HOTSET_VERSION_MAJOR, HOTSET_VERSION_MINOR,
           HOTSET_VERSION_PATCH);
  if (strcmp(project, HOTSET_VERSION_STRING) != 0)
    fprintf(stderr, "CMakeLists.txt says %s, include/hotset/version.h says %s\n", project,
            HOTSET_VERSION_STRING);
  CHECK(strcmp(project, HOTSET_VERSION_STRING) == 0);
  CHECK(strcmp(from_parts, HOTSET_VERSION_STRING) == 0);
  CHECK(strcmp(hs_version(), HOTSET_VERSION_STRING) == 0);
  CHECK_EQ(hs_version_number(), HOTSET_VERSION_NUMBER);
  CHECK_EQ(HOTSET_VERSION_NUMBER,
           HOTSET_VERSION_MAJOR * 10000 + HOTSET_VERSION_MINOR * 100 + HOTSET_VERSION_PATCH);
  char want[64];
  if (HOTSET_VERSION_MAJOR == 0)
    snprintf(want, sizeof want, "libhotset.so.%d.%d", HOTSET_VERSION_MAJOR, HOTSET_VERSION_MINOR);
  else
    snprintf(want, sizeof want, "libhotset.so.%d", HOTSET_VERSION_MAJOR);
  if (strcmp(soname, want) != 0) fprintf(stderr, "soname %s, want %s\n", soname, want);
  CHECK(strcmp(soname, want) == 0);
  return check_finish();
}

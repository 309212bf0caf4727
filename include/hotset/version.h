/*
 * hotset/version.h — which hotset this program was compiled against, and
 * which library it runs with.
 *
 * The macros are the headers' version; hs_version() and
 * hs_version_number() are the loaded library's. A program that wants to be
 * sure the two agree compares them at start-up:
 *
 *   if (hs_version_number() / 100 != HOTSET_VERSION_NUMBER / 100)
 *     fail("built for hotset " HOTSET_VERSION_STRING ", running with %s", hs_version());
 *
 * Before 1.0 every minor release may change the ABI (0.3 is not 0.2), so
 * major and minor must both match; the patch level may differ. The shared
 * library's soname says the same: libhotset.so.0.3 (CHANGELOG.md, 0.2.0).
 *
 * These numbers and CMakeLists.txt's project(VERSION) are checked against
 * each other when the build is configured and by tests/test_version.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_VERSION_H
#define HOTSET_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define HOTSET_VERSION_MAJOR  0
#define HOTSET_VERSION_MINOR  3
#define HOTSET_VERSION_PATCH  0
#define HOTSET_VERSION_STRING "0.3.0"
/* major * 10000 + minor * 100 + patch: 300 for 0.3.0. */
#define HOTSET_VERSION_NUMBER                                                                      \
  (HOTSET_VERSION_MAJOR * 10000 + HOTSET_VERSION_MINOR * 100 + HOTSET_VERSION_PATCH)

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

/* The loaded library's version, e.g. "0.3.0" (static storage). */
const char *hs_version(void);
/* The loaded library's HOTSET_VERSION_NUMBER. */
int hs_version_number(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif

/*
 * core/debug.h — the rules the library checks, and what happens when one is
 * broken.
 *
 * Two kinds of broken rule:
 *  - misuse by the caller (a double release, an unlock of a lock not held, a
 *    lock on an unpinned buffer): a release build refuses the call, leaves
 *    the state as it was, counts it and says what happened in
 *    hs_last_error(); a debug build stops at once so the first broken rule is
 *    the one reported, with a stack in the sanitizer's or the debugger's
 *    hands;
 *  - a broken internal invariant (what a file's opening essay promises): a
 *    debug build stops; a release build does not check, because these
 *    checks sit on paths that must stay cheap.
 *
 * Debug builds are configured with -DHOTSET_DEBUG=ON (CMake), which defines
 * HOTSET_DEBUG for every file.
 */
#ifndef HOTSET_CORE_DEBUG_H
#define HOTSET_CORE_DEBUG_H

#include <stdbool.h>

#ifdef HOTSET_DEBUG
#define HS_DEBUG_CHECKS 1
#else
#define HS_DEBUG_CHECKS 0
#endif

/* Prints "hotset: broken rule (file:line): message" to stderr and aborts.
 * Only debug builds call it. */
_Noreturn void hs_debug_stop(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Checks an internal invariant in debug builds; nothing in release builds. */
#define HS_INVARIANT(cond, ...)                                                                    \
  do {                                                                                             \
    if (HS_DEBUG_CHECKS && !(cond)) hs_debug_stop(__FILE__, __LINE__, __VA_ARGS__);                \
  } while (0)

#endif

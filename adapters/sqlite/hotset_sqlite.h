/*
 * hotset_sqlite.h — hotset as SQLite's page cache (libhotset-sqlite.so).
 *
 * Two ways in:
 * - a program linking -lhotset-sqlite calls hotset_sqlite_install() before
 *   sqlite3_initialize() (or before its first SQLite call, which
 *   initializes);
 * - an unmodified program gets it with LD_PRELOAD=libhotset-sqlite.so: the
 *   library's constructor installs it before the program's main, from the
 *   environment:
 *     HOTSET_SQLITE_POLICY  a hotset policy spec (default: see docs/sqlite.md)
 *     HOTSET_SQLITE_SCAN    consecutive pages that make a scan; 0 or "off":
 *                           no scan detection (default 32)
 *     HOTSET_SQLITE_STATS=1 print the caches' statistics on stderr at exit
 *   If SQLite was initialized already, it says so on stderr once and leaves
 *   SQLite's own cache in place.
 */
#ifndef HOTSET_SQLITE_H
#define HOTSET_SQLITE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hotset_sqlite_options {
  const char *policy; /* a hotset policy spec; NULL: the default */
  uint32_t scan_run;  /* consecutive page numbers that make a scan; 0: off */
  bool stats_at_exit; /* print the statistics on stderr when the process exits */
} hotset_sqlite_options;

/* The defaults, then HOTSET_SQLITE_POLICY / _SCAN / _STATS where set. */
void hotset_sqlite_options_init(hotset_sqlite_options *o);

/* Installs hotset as SQLite's page cache (sqlite3_config
 * SQLITE_CONFIG_PCACHE2) with `policy` (NULL: the default) and the other
 * options from the environment. Returns SQLITE_OK, SQLITE_MISUSE when
 * SQLite is initialized already (call sqlite3_shutdown first), or
 * SQLITE_ERROR for a policy spec hotset does not know (the message on
 * stderr). */
int hotset_sqlite_install(const char *policy);
int hotset_sqlite_install_ex(const hotset_sqlite_options *o);
/* Puts SQLite's own page cache back (SQLite must be shut down). */
int hotset_sqlite_uninstall(void);

/* Every cache's counts added up, since the process started (or the last
 * reset). */
typedef struct hotset_sqlite_stats {
  uint64_t caches; /* caches created (one per connection and database) */
  uint64_t fetches, hits, misses, creates, refusals, evictions, overflows, discards;
  uint64_t scan_fetches; /* fetches in detected scans */
} hotset_sqlite_stats;
void hotset_sqlite_stats_get(hotset_sqlite_stats *out);
void hotset_sqlite_stats_reset(void);

#ifdef __cplusplus
}
#endif

#endif

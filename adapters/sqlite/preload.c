/*
 * adapters/sqlite/preload.c — the constructor that makes
 * LD_PRELOAD=libhotset-sqlite.so work in an unmodified program: it runs
 * before the program's main, so before its first SQLite call, and installs
 * hotset's cache from the environment (HOTSET_SQLITE_*). Only the shared
 * library has it: a program linking the static library calls
 * hotset_sqlite_install itself, and gets nothing it did not ask for.
 */
#include "hotset_sqlite_internal.h"

static void __attribute__((constructor)) hotset_sqlite_preload(void) {
  /* Whatever happens, the host goes on: a failure leaves SQLite's own
   * cache and one line on stderr. */
  (void)hotset_sqlite_preload_install();
}

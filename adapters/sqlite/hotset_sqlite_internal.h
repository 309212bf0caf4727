/*
 * adapters/sqlite/hotset_sqlite_internal.h — what the LD_PRELOAD
 * constructor (preload.c) and the tests share with hotset_sqlite.c, beyond
 * the public header.
 */
#ifndef HOTSET_SQLITE_INTERNAL_H
#define HOTSET_SQLITE_INTERNAL_H

/* Installs from the environment, as the constructor does, and says on
 * stderr (one line) why hotset's cache was not installed when it was not.
 * Returns what hotset_sqlite_install_ex returned. */
__attribute__((visibility("hidden"))) int hotset_sqlite_preload_install(void);

#endif

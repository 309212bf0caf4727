/*
 * tests/direct_mode.h — runs a test's pools and storage managers with
 * direct I/O when HOTSET_TEST_DIRECT=1 (ctest's "<test>_direct" entries),
 * so every pool and storage test runs both ways without a second copy; and
 * its pools with the direct translation when HOTSET_TEST_TRANSLATION=direct.
 *
 * The test's own hs_pool_open calls are redirected here by a macro, after
 * the real declarations, and its storage managers are opened with
 * test_smgr_open: a test written for buffered I/O
 * then runs every path (point reads, streams with and without I/O workers,
 * writes, flushes, faults) through O_DIRECT, and its page buffers must be
 * aligned (test_page_alloc) as an engine's would.
 */
#ifndef HOTSET_TESTS_DIRECT_MODE_H
#define HOTSET_TESTS_DIRECT_MODE_H

#include "hotset/pool.h"
#include "hotset/storage.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline bool test_direct_io(void) {
  const char *e = getenv("HOTSET_TEST_DIRECT");
  return e && e[0] == '1';
}

/* Where the temporary directories' file system refuses direct I/O (ramfs,
 * or tmpfs before Linux 6.6) a direct run cannot happen: it says so in one
 * line and counts as skipped, rather than failing every open. */
static inline hs_status test_direct_refused(hs_status st) {
  if (st == HS_ERR_INVALID && strstr(hs_last_error(), "refuses")) {
    printf("SKIPPED: direct I/O is not possible here: %s\n", hs_last_error());
    exit(77);
  }
  return st;
}

/* HOTSET_TEST_TRANSLATION=direct (ctest's "<test>_translation" entries):
 * every pool the test opens with the default translation uses the direct
 * one (hs_pool_options.translation), so the pool tests run their hits
 * through its index too. */
static inline bool test_direct_translation(void) {
  const char *e = getenv("HOTSET_TEST_TRANSLATION");
  return e && strcmp(e, "direct") == 0;
}

static inline hs_status test_pool_open(const hs_pool_options *o, hs_pool **out) {
  if (!o || (!test_direct_io() && !test_direct_translation())) return hs_pool_open(o, out);
  hs_pool_options copy = *o;
  if (test_direct_translation() && copy.translation == HS_TRANSLATION_HASH)
    copy.translation = HS_TRANSLATION_DIRECT;
  if (!test_direct_io()) return hs_pool_open(&copy, out);
  copy.direct_io = true;
  return test_direct_refused(hs_pool_open(&copy, out));
}

static inline hs_status test_smgr_open(const char *dir, uint32_t page_size, hs_smgr **out) {
  hs_smgr_options o;
  hs_smgr_options_init(&o);
  o.page_size = page_size;
  o.direct_io = test_direct_io();
  hs_status st = hs_smgr_open(dir, &o, out);
  return o.direct_io ? test_direct_refused(st) : st;
}

/* A zeroed page buffer aligned for direct I/O (4096 covers every file
 * system this runs on); free() it. */
static inline void *test_page_alloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 4096, bytes) != 0) return NULL;
  memset(p, 0, bytes);
  return p;
}

#define hs_pool_open(o, out) test_pool_open((o), (out))

#endif

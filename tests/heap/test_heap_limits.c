/*
 * tests/test_heap_limits.c — a heap call that fails changes nothing, and no
 * call fails because its record is too large for the log.
 *
 * Sizes: for every log segment size from 64 KiB to 4 MiB (and the default
 * 16 MiB) and pages of 4 to 32 KiB, and every other allowed size up to
 * 1 GiB with 8 KiB pages, either hs_heap_open refuses (the log
 * cannot carry two page images and the largest tuple: the rule is
 * recomputed here from hs_wal_max_record, never assumed), or insert, update
 * in place, update to another page, delete and vacuum at the largest tuple
 * succeed and one byte more is refused — and every call that fails leaves
 * every page of the heap and its visibility map byte-identical, in the pool
 * and, after a close and reopen, on disk. A crash after it all recovers.
 *
 * Faults in the middle of a call: the log failing (EIO, ENOSPC) when the
 * heap's record or the visibility map's is inserted, the relation failing
 * to extend, a page failing to read: the pages stay as they were, and after
 * a crash recovery replays to the state before the failed call.
 *
 * Two guards: a change whose full-page-image decision went stale (a
 * checkpoint moved the redo point before the insert) carries the image
 * anyway; a delete clears its page's all-visible flag and map bit, in the
 * pool and after recovery, so vacuum does not skip the dead version.
 */
#include "check.h"
#include "core/seams.h"
#include "heap/fsm.h"
#include "heap/heap.h"
#include "heap/heap_page.h"
#include "heap/vm.h"
#include "hotset/durability.h"
#include "hotset/fault.h"
#include "hotset/heap.h"
#include "hotset/vacuum.h"
#include "pool/pool_internal.h"
#include "testdir.h"
#include "wal/wal_durable.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REL   30u
#define POOL  64u
#define SMALL 100u

static char dir[4096];

typedef struct env {
  hs_wal *wal;
  hs_pool *pool;
  hs_xact_mgr *x;
  hs_heap *h;
  uint64_t segment;
  uint32_t page;
} env;

static void wal_dir(char *out, size_t len) {
  snprintf(out, len, "%s/wal", dir);
}

/* Log, pool, transactions, heap over `dir`; what hs_heap_open said is
 * returned (the rest must open), or what hs_pool_open said, e->pool NULL
 * and the log closed. */
static hs_status env_open(env *e, uint64_t segment, uint32_t page) {
  *e = (env){.segment = segment, .page = page};
  char wd[4200];
  wal_dir(wd, sizeof wd);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wd;
  wo.segment_bytes = segment;
  if (wo.buffer_bytes > segment) wo.buffer_bytes = segment;
  wo.writer_delay_ms = 0;
  REQUIRE(hs_wal_open(&wo, &e->wal) == HS_OK);
  REQUIRE(hs_heap_register_redo(e->wal) == HS_OK);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.page_size = page;
  po.pool_pages = POOL;
  po.wal = e->wal;
  po.checksums = true;
  hs_status st = hs_pool_open(&po, &e->pool);
  if (st != HS_OK) { /* the pool's own rule: the log must carry one page image */
    e->pool = NULL;
    CHECK_OK(hs_wal_close(e->wal));
    return st;
  }
  REQUIRE(hs_xact_open(e->pool, &e->x) == HS_OK);
  return hs_heap_open(e->pool, e->x, REL, &e->h);
}

static void env_close(env *e) {
  hs_heap_close(e->h);
  hs_xact_close(e->x);
  CHECK_OK(hs_pool_close(e->pool));
  CHECK_OK(hs_wal_close(e->wal));
}

/* A crash: nothing of the pool is written; the log keeps what reached it
 * (its close may fail when a fault was injected). */
static void env_crash(env *e) {
  hs_heap_close(e->h);
  hs_xact_close(e->x);
  hs_pool_abandon(e->pool);
  (void)hs_wal_close(e->wal);
}

/* ---- page images ---- */

typedef struct image {
  hs_blockno n[2]; /* main fork, visibility map */
  unsigned char *bytes[2];
} image;

static const hs_fork forks[2] = {HS_FORK_MAIN, HS_FORK_VM};

static void take(env *e, image *im) {
  for (int f = 0; f < 2; f++) {
    REQUIRE(hs_smgr_nblocks(hs_pool_smgr(e->pool), REL, forks[f], &im->n[f]) == HS_OK);
    im->bytes[f] = malloc((size_t)im->n[f] * e->page + 1);
    REQUIRE(im->bytes[f]);
    for (hs_blockno b = 0; b < im->n[f]; b++) {
      hs_buf buf;
      REQUIRE(hs_pool_read(e->pool, REL, forks[f], b, HS_READ_NORMAL, NULL, &buf, NULL) == HS_OK);
      hs_buf_lock(e->pool, buf, HS_LOCK_SHARE);
      memcpy(im->bytes[f] + (size_t)b * e->page, hs_buf_page(e->pool, buf), e->page);
      hs_buf_unlock(e->pool, buf);
      hs_buf_release(e->pool, buf);
    }
  }
}

static void drop(image *im) {
  free(im->bytes[0]);
  free(im->bytes[1]);
}

/* Whether every page of `a` is in `b` byte for byte. Blocks `b` has past
 * `a`'s end may only be new (all zeros past the pool's header): an
 * extension is not taken back. `forks_n` 1: the main fork only. */
static bool same_from(const env *e, const image *a, const image *b, int forks_n, uint32_t from,
                      const char *what) {
  for (int f = 0; f < forks_n; f++) {
    if (b->n[f] < a->n[f]) {
      fprintf(stderr, "%s: fork %d has %u blocks, had %u\n", what, (int)forks[f], b->n[f], a->n[f]);
      return false;
    }
    for (hs_blockno blk = 0; blk < a->n[f]; blk++) {
      const unsigned char *pa = a->bytes[f] + (size_t)blk * e->page;
      const unsigned char *pb = b->bytes[f] + (size_t)blk * e->page;
      for (uint32_t i = from; i < e->page; i++)
        if (pa[i] != pb[i]) {
          fprintf(stderr, "%s: fork %d block %u differs at byte %u (%u, was %u)\n", what,
                  (int)forks[f], blk, i, pb[i], pa[i]);
          return false;
        }
    }
    for (hs_blockno blk = a->n[f]; blk < b->n[f]; blk++) {
      const unsigned char *pb = b->bytes[f] + (size_t)blk * e->page;
      for (uint32_t i = HS_PAGE_HEADER_SIZE; i < e->page; i++)
        if (pb[i]) {
          fprintf(stderr, "%s: fork %d block %u was added and holds data at byte %u\n", what,
                  (int)forks[f], blk, i);
          return false;
        }
    }
  }
  return true;
}

static bool same(const env *e, const image *a, const image *b, int forks_n, const char *what) {
  return same_from(e, a, b, forks_n, 0, what);
}

/* The same, but for the pool's page header: a page's LSN and checksum are
 * stamped into it when the page is written, so a page read back from disk
 * and the pool's copy of it differ there. */
static bool same_on_disk(const env *e, const image *mem, const image *disk, const char *what) {
  return same_from(e, mem, disk, 2, HS_PAGE_HEADER_SIZE, what);
}

/* ---- data ---- */

/* `len` bytes of a deterministic pattern for `seed`. */
static unsigned char *pattern(uint32_t len, uint32_t seed) {
  unsigned char *p = malloc(len + 1);
  REQUIRE(p);
  uint32_t s = seed * 2654435761u + 1;
  for (uint32_t i = 0; i < len; i++) {
    s = s * 1103515245u + 12345u;
    p[i] = (unsigned char)(s >> 16);
  }
  return p;
}

/* Whether the version at tid holds `want` for a fresh snapshot. */
static bool holds(env *e, hs_tid tid, const unsigned char *want, uint32_t len) {
  hs_snapshot *s = malloc(sizeof *s);
  unsigned char *got = malloc(HS_HEAP_MAX_DATA + 1);
  REQUIRE(s && got);
  REQUIRE(hs_xact_take_snapshot(e->x, s) == HS_OK);
  uint32_t n = 0;
  bool visible = false;
  hs_status st = hs_heap_fetch(e->h, tid, s, 0, got, HS_HEAP_MAX_DATA, &n, &visible);
  hs_xact_release_snapshot(e->x, s);
  bool ok = st == HS_OK && visible && n == len && memcmp(got, want, len) == 0;
  if (!ok)
    fprintf(stderr, "block %u slot %u: st %d visible %d len %u (want %u)\n", tid.block, tid.slot,
            (int)st, (int)visible, n, len);
  free(got);
  free(s);
  return ok;
}

/* The documented rule, computed here from the public numbers. */
static uint32_t rule_max_data(uint32_t page) {
  uint32_t room = page - HS_PAGE_HEADER_SIZE - 24 - 4 - 24;
  return room < HS_HEAP_MAX_DATA ? room : HS_HEAP_MAX_DATA;
}
static uint64_t rule_largest_record(uint32_t page) {
  return 2ull * page + 12 + 24 + rule_max_data(page);
}

/* A call's outcome at a size limit: success, or HS_ERR_INVALID with every
 * page as it was. Returns whether it succeeded. */
static bool outcome(env *e, const image *before, hs_status st, const char *what) {
  if (st == HS_OK) return true;
  if (st != HS_ERR_INVALID) fprintf(stderr, "%s: %s\n", what, hs_last_error());
  CHECK_EQ(st, HS_ERR_INVALID);
  image after;
  take(e, &after);
  CHECK(same(e, before, &after, 2, what));
  drop(&after);
  return false;
}

/* ---- sizes ---- */

/* What a page size and segment size come to (docs/heap.md's table). */
static const char *const outcome_names[] = {"opens", "heap refuses", "pool refuses"};
enum { OPENS, HEAP_REFUSES, POOL_REFUSES };

static int limits_case(uint64_t segment, uint32_t page) {
  testdir_make(dir, sizeof dir, "heap-limits");
  env e;
  hs_status st = env_open(&e, segment, page);
  if (!e.pool) {
    printf("  segment %7" PRIu64 " KiB, page %2u KiB: hs_pool_open refuses (%s)\n", segment >> 10,
           page >> 10, hs_last_error());
    CHECK_CONTAINS(hs_last_error(), "full image");
    testdir_remove(dir);
    return POOL_REFUSES;
  }
  uint32_t max_record = hs_wal_max_record(e.wal);
  uint32_t max = rule_max_data(page);
  bool refuse = rule_largest_record(page) > max_record;
  printf("  segment %7" PRIu64 " KiB, page %2u KiB: largest record %6u, heap needs %6" PRIu64
         ": %s\n",
         segment >> 10, page >> 10, max_record, rule_largest_record(page),
         refuse ? "hs_heap_open refuses" : "opens");
  if (refuse) {
    CHECK_ST(st, HS_ERR_INVALID);
    if (st == HS_OK) {
      fprintf(stderr, "hs_heap_open accepted a log too small for its records\n");
    } else {
      CHECK_CONTAINS(hs_last_error(), "buffer_bytes");
      CHECK_CONTAINS(hs_last_error(), "smaller pages");
      char num[32];
      snprintf(num, sizeof num, "%u-byte pages", page);
      CHECK_CONTAINS(hs_last_error(), num);
      snprintf(num, sizeof num, "%u", max_record);
      CHECK_CONTAINS(hs_last_error(), num);
      env_close(&e);
      testdir_remove(dir);
      return HEAP_REFUSES;
    }
  }
  REQUIRE(st == HS_OK);
  CHECK_EQ(hs_heap_max_data(e.h), max);

  unsigned char *big = pattern(max + 1, 1), *big2 = pattern(max, 2), *small = pattern(SMALL, 3);
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  image before;
  hs_tid ts, tb = {0, 0}, tmp;
  bool have_big = false;

  /* Insert: one byte too many is refused, the largest goes in. */
  take(&e, &before);
  CHECK_ST(hs_heap_insert(e.h, x, big, max + 1, &tmp), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "hs_heap_insert");
  outcome(&e, &before, HS_ERR_INVALID, "insert max+1");
  drop(&before);
  CHECK_OK(hs_heap_insert(e.h, x, small, SMALL, &ts));
  take(&e, &before);
  have_big = outcome(&e, &before, hs_heap_insert(e.h, x, big, max, &tb), "insert max");
  drop(&before);
  CHECK(have_big);

  /* Update in place: a smaller version on the same page; one byte too many
   * refused. */
  hs_tid ts2;
  take(&e, &before);
  if (outcome(&e, &before, hs_heap_update(e.h, x, ts, small, SMALL / 2, &ts2), "update in place"))
    CHECK_EQ(ts2.block, ts.block);
  else
    ts2 = ts;
  drop(&before);
  take(&e, &before);
  CHECK_ST(hs_heap_update(e.h, x, ts2, big, max + 1, &tmp), HS_ERR_INVALID);
  outcome(&e, &before, HS_ERR_INVALID, "update max+1");
  drop(&before);

  /* Update to another page: the largest tuple's page has no room for a
   * second one. */
  hs_tid tb2 = tb;
  if (have_big) {
    take(&e, &before);
    if (outcome(&e, &before, hs_heap_update(e.h, x, tb, big2, max, &tb2), "update to another page"))
      CHECK(tb2.block != tb.block);
    else
      tb2 = tb;
    drop(&before);
  }

  /* Delete. */
  take(&e, &before);
  outcome(&e, &before, hs_heap_delete(e.h, x, ts2), "delete");
  drop(&before);
  CHECK_OK(hs_xact_commit(e.x, x));

  /* Vacuum: the dead versions go (prune and all-visible records). */
  hs_vacuum_stats vs;
  take(&e, &before);
  if (outcome(&e, &before, hs_vacuum(e.h, NULL, NULL, &vs), "vacuum")) CHECK(vs.removed >= 2);
  drop(&before);

  /* The transactions still work. */
  hs_xid y;
  hs_tid ty;
  REQUIRE(hs_xact_begin(e.x, &y) == HS_OK);
  CHECK_OK(hs_heap_insert(e.h, y, small, SMALL, &ty));
  CHECK_OK(hs_xact_commit(e.x, y));
  CHECK(holds(&e, tb2, tb2.block == tb.block && tb2.slot == tb.slot ? big : big2, max));
  CHECK(holds(&e, ty, small, SMALL));

  /* On disk as in the pool. */
  image mem, disk;
  take(&e, &mem);
  env_close(&e);
  REQUIRE(env_open(&e, segment, page) == HS_OK);
  take(&e, &disk);
  CHECK(same_on_disk(&e, &mem, &disk, "after close and reopen"));
  drop(&mem);
  drop(&disk);

  /* A crash after more of the same: recovery replays it. */
  hs_xid z;
  hs_tid tz, tz2;
  REQUIRE(hs_xact_begin(e.x, &z) == HS_OK);
  CHECK_OK(hs_heap_insert(e.h, z, big, max, &tz));
  CHECK_OK(hs_heap_update(e.h, z, tz, big2, max, &tz2));
  CHECK_OK(hs_xact_commit(e.x, z));
  env_crash(&e);
  st = env_open(&e, segment, page);
  if (st != HS_OK) fprintf(stderr, "reopen after the crash: %s\n", hs_last_error());
  REQUIRE(st == HS_OK);
  CHECK(holds(&e, tz2, big2, max));
  CHECK(holds(&e, ty, small, SMALL));
  env_close(&e);
  free(big);
  free(big2);
  free(small);
  testdir_remove(dir);
  return OPENS;
}

/* docs/heap.md's size table, as the cells just computed give it: one row a
 * page size, columns 64, 128, 256 KiB and "512 KiB .. 16 MiB" (every size
 * there must agree). The test fails if the document does not hold these
 * rows to the letter, printing them. */
static void check_heap_doc(int cells[4][7], const uint32_t *pages) {
  char path[4200];
  snprintf(path, sizeof path, "%s/docs/heap.md", HOTSET_SOURCE_DIR);
  FILE *f = fopen(path, "r");
  REQUIRE(f != NULL);
  static char doc[1 << 17];
  size_t n = fread(doc, 1, sizeof doc - 1, f);
  fclose(f);
  doc[n] = 0;
  static const uint32_t max_data[] = {4028, 8124, 16316, 16359};
  for (int p = 0; p < 4; p++) {
    for (int k = 4; k < 7; k++) {
      if (cells[p][k] != cells[p][3])
        fprintf(stderr,
                "page %u: 512 KiB and a larger segment differ: the table's last column "
                "no longer holds\n",
                pages[p]);
      CHECK_EQ(cells[p][k], cells[p][3]);
    }
    char row[160];
    snprintf(row, sizeof row, "| %u KiB (max %u B)%*s| %s | %s | %s | %s |", pages[p] >> 10,
             max_data[p], pages[p] >= 16384 ? 1 : 3, "", outcome_names[cells[p][0]],
             outcome_names[cells[p][1]], outcome_names[cells[p][2]], outcome_names[cells[p][3]]);
    if (!strstr(doc, row)) fprintf(stderr, "docs/heap.md lacks the row\n%s\n", row);
    CHECK(strstr(doc, row) != NULL);
  }
}

static void test_sizes(void) {
  static const uint32_t pages[] = {4096, 8192, 16384, 32768};
  /* Columns: 64, 128, 256, 512 KiB, 1, 4, 16 MiB. */
  static const uint64_t segments[] = {64u << 10, 128u << 10, 256u << 10, 512u << 10,
                                      1u << 20,  4u << 20,   16u << 20};
  int cells[4][7];
  for (size_t p = 0; p < sizeof pages / sizeof *pages; p++) {
    for (int k = 0; k < 7; k++) cells[p][k] = limits_case(segments[k], pages[p]);
    limits_case(2u << 20, pages[p]);
  }
  check_heap_doc(cells, pages);
  /* Every other size the log allows, with the default page: past 8 MiB the
   * record limit (half the 4 MiB buffer) no longer changes, but where a
   * segment ends does. */
  limits_case(8u << 20, 8192);
  uint64_t max = check_max_segment("test_heap_limits", HS_WAL_MAX_SEGMENT);
  for (uint64_t seg = 32u << 20; seg <= max; seg *= 2) limits_case(seg, 8192);
}

/* ---- faults in the middle of a call ---- */

typedef struct fault_setup {
  env e;
  hs_tid a, b, full; /* a small row, another, and the largest on its own page */
  hs_tid gone;       /* a row deleted and committed */
  bool visible;      /* vacuumed: the pages are all-visible, nothing to prune */
  unsigned char *va, *vb, *vfull;
  uint32_t max;
} fault_setup;

/* Three committed rows; `visible`: vacuum then marks their pages
 * all-visible. Closed and reopened, so everything is on disk. */
static void fault_prepare(fault_setup *f, bool visible) {
  testdir_make(dir, sizeof dir, "heap-faults");
  f->visible = visible;
  REQUIRE(env_open(&f->e, 16u << 20, 8192) == HS_OK);
  f->max = hs_heap_max_data(f->e.h);
  f->va = pattern(SMALL, 10);
  f->vb = pattern(SMALL, 11);
  f->vfull = pattern(f->max, 12);
  hs_xid x;
  REQUIRE(hs_xact_begin(f->e.x, &x) == HS_OK);
  REQUIRE(hs_heap_insert(f->e.h, x, f->va, SMALL, &f->a) == HS_OK);
  REQUIRE(hs_heap_insert(f->e.h, x, f->vb, SMALL, &f->b) == HS_OK);
  REQUIRE(hs_heap_insert(f->e.h, x, f->vfull, f->max, &f->full) == HS_OK);
  REQUIRE(hs_heap_insert(f->e.h, x, f->va, SMALL, &f->gone) == HS_OK);
  REQUIRE(hs_xact_commit(f->e.x, x) == HS_OK);
  /* A dead version, for vacuum to prune (here if `visible`, else later). */
  REQUIRE(hs_xact_begin(f->e.x, &x) == HS_OK);
  REQUIRE(hs_heap_delete(f->e.h, x, f->gone) == HS_OK);
  REQUIRE(hs_xact_commit(f->e.x, x) == HS_OK);
  if (visible) {
    hs_vacuum_stats vs;
    REQUIRE(hs_vacuum(f->e.h, NULL, NULL, &vs) == HS_OK);
    CHECK_EQ(vs.pages_marked_visible, 2u);
  }
  env_close(&f->e);
  REQUIRE(env_open(&f->e, 16u << 20, 8192) == HS_OK);
}

static void fault_finish(fault_setup *f) {
  free(f->va);
  free(f->vb);
  free(f->vfull);
  testdir_remove(dir);
}

/* Each change, tried while the log refuses every insert: it fails with the
 * log's error and leaves the pages (and the map) as they were. */
static void try_every_change(fault_setup *f, hs_xid x, const image *before, const char *why) {
  env *e = &f->e;
  hs_tid t;
  unsigned char *row = pattern(SMALL, 20), *huge = pattern(f->max, 21);
  struct {
    const char *name;
    hs_status st;
  } calls[7];
  calls[0].name = "insert (same page)";
  calls[0].st = hs_heap_insert(e->h, x, row, SMALL, &t);
  calls[1].name = "insert (new page)";
  calls[1].st = hs_heap_insert(e->h, x, huge, f->max, &t);
  calls[2].name = "update in place";
  calls[2].st = hs_heap_update(e->h, x, f->a, row, SMALL, &t);
  calls[3].name = "update to another page";
  calls[3].st = hs_heap_update(e->h, x, f->full, huge, f->max, &t);
  calls[4].name = "delete";
  calls[4].st = hs_heap_delete(e->h, x, f->b);
  /* Again: the first attempt's extension stays, an empty page that is now
   * the insert target, so this one looks at a new page and must leave it
   * new (not initialized on the look). */
  calls[5].name = "update to another page, again";
  calls[5].st = hs_heap_update(e->h, x, f->full, huge, f->max, &t);
  image after;
  take(e, &after);
  CHECK(same(e, before, &after, 2, why));
  drop(&after);
  /* Vacuum: a prune of the dead version, or, where vacuum ran before and
   * marked the pages, setting the map's bits again — compared on its own:
   * its change of a bit could undo one a call above left behind. */
  hs_vacuum_stats vs;
  calls[6].name = "vacuum";
  calls[6].st = hs_vacuum(e->h, NULL, NULL, &vs);
  int n = f->visible && calls[6].st == HS_OK ? 6 : 7;
  for (int i = 0; i < n; i++) {
    if (calls[i].st == HS_OK) fprintf(stderr, "%s (%s) succeeded\n", calls[i].name, why);
    CHECK(calls[i].st == HS_ERR_IO || calls[i].st == HS_ERR_NOSPACE);
  }
  take(e, &after);
  CHECK(same(e, before, &after, 2, why));
  drop(&after);
  free(row);
  free(huge);
}

/* After a crash, the committed rows hold what they held. */
static void crash_and_check(fault_setup *f, const char *why) {
  env_crash(&f->e);
  hs_status st = env_open(&f->e, 16u << 20, 8192);
  if (st != HS_OK) fprintf(stderr, "%s: reopen after the crash: %s\n", why, hs_last_error());
  REQUIRE(st == HS_OK);
  CHECK(holds(&f->e, f->a, f->va, SMALL));
  CHECK(holds(&f->e, f->b, f->vb, SMALL));
  CHECK(holds(&f->e, f->full, f->vfull, f->max));
  hs_vacuum_stats vs;
  CHECK_OK(hs_vacuum(f->e.h, NULL, NULL, &vs)); /* and the heap is usable */
  env_close(&f->e);
}

/* The log fails (a write of the log fails with `err`; every insert after
 * that is refused): the first record each call inserts — the heap's own
 * on pages that are not all-visible, the visibility map's on pages that
 * are — is refused. */
static void test_log_fault(bool visible, int err) {
  const char *why = visible
                        ? (err == EIO ? "log EIO, all-visible pages" : "log ENOSPC, all-visible")
                        : (err == EIO ? "log EIO" : "log ENOSPC");
  fault_setup f;
  fault_prepare(&f, visible);
  env *e = &f.e;
  hs_xid x;
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  /* Something to write, so the flush below reaches the fault. */
  hs_tid t;
  REQUIRE(hs_heap_insert(e->h, x, f.va, SMALL, &t) == HS_OK);
  /* An index entry for key 1, for the index's own changes below. */
  hs_pk_index *ix;
  REQUIRE(hs_pk_index_open(e->pool, REL + 1, &ix) == HS_OK);
  REQUIRE(hs_pk_index_insert(ix, 1, f.a) == HS_OK);
  image before;
  take(e, &before);
  REQUIRE(hs_wal_inject_fault(e->wal, HS_WAL_FAULT_WRITE, 1, err, 1000) == HS_OK);
  CHECK(hs_wal_flush(e->wal, hs_wal_insert_lsn(e->wal), HS_WAL_CAUSE_COMMIT, NULL) != HS_OK);
  try_every_change(&f, x, &before, why);
  drop(&before);
  /* The index's changes are refused and leave its entries as they were. */
  CHECK(hs_pk_index_insert(ix, 2, f.b) != HS_OK);
  CHECK(hs_pk_index_move(ix, 1, f.a, f.b) != HS_OK);
  hs_tid got;
  bool found;
  CHECK_OK(hs_pk_index_get(ix, 2, &got, &found));
  CHECK(!found);
  CHECK_OK(hs_pk_index_get(ix, 1, &got, &found));
  CHECK(found && got.block == f.a.block && got.slot == f.a.slot);
  hs_pk_index_close(ix);
  /* The commit cannot be logged: the transaction still runs, and the
   * commit log does not say otherwise. */
  CHECK(hs_xact_commit(e->x, x) != HS_OK);
  hs_xact_status xs;
  CHECK_OK(hs_xact_status_of(e->x, x, &xs));
  CHECK_EQ(xs, HS_XACT_IN_PROGRESS);
  crash_and_check(&f, why);
  fault_finish(&f);
}

/* The relation cannot grow: an insert or update that needs a new page
 * fails before any page changes. */
static void test_extend_fault(void) {
  fault_setup f;
  fault_prepare(&f, false);
  env *e = &f.e;
  hs_xid x;
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  image before;
  take(e, &before);
  unsigned char *huge = pattern(f.max, 30);
  hs_tid t;
  REQUIRE(hs_smgr_inject_fault(hs_pool_smgr(e->pool), HS_IO_EXTEND, 1, ENOSPC, 1000) == HS_OK);
  hs_status s1 = hs_heap_insert(e->h, x, huge, f.max, &t);
  hs_status s2 = hs_heap_update(e->h, x, f.full, huge, f.max, &t);
  hs_smgr_clear_faults(hs_pool_smgr(e->pool));
  CHECK(s1 != HS_OK);
  CHECK(s2 != HS_OK);
  image after;
  take(e, &after);
  CHECK(same(e, &before, &after, 2, "extend fault"));
  drop(&after);
  drop(&before);
  /* The same calls work once the relation can grow. */
  hs_tid t2;
  CHECK_OK(hs_heap_insert(e->h, x, huge, f.max, &t));
  CHECK_OK(hs_heap_update(e->h, x, f.full, huge, f.max, &t2));
  CHECK_OK(hs_xact_abort(e->x, x));
  free(huge);
  crash_and_check(&f, "extend fault");
  fault_finish(&f);
}

/* A page cannot be read (it is not in the pool after the reopen). */
static void test_read_fault(void) {
  fault_setup f;
  fault_prepare(&f, false);
  env *e = &f.e;
  hs_xid x;
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  unsigned char *row = pattern(SMALL, 40);
  hs_tid t;
  REQUIRE(hs_smgr_inject_fault(hs_pool_smgr(e->pool), HS_IO_READ, 1, EIO, 1000) == HS_OK);
  hs_status s1 = hs_heap_delete(e->h, x, f.b);
  hs_status s2 = hs_heap_update(e->h, x, f.a, row, SMALL, &t);
  hs_smgr_clear_faults(hs_pool_smgr(e->pool));
  CHECK(s1 != HS_OK);
  CHECK(s2 != HS_OK);
  CHECK_OK(hs_xact_abort(e->x, x));
  free(row);
  crash_and_check(&f, "read fault");
  fault_finish(&f);
}

/* No buffer to be had: every buffer pinned but one, so an update reads
 * its page into the last and then finds none for the page it would move
 * the tuple to. */
static void test_no_buffer(void) {
  fault_setup f;
  fault_prepare(&f, false);
  env *e = &f.e;
  hs_xid x;
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  image before;
  take(e, &before);
  hs_smgr *smgr = hs_pool_smgr(e->pool);
  REQUIRE(hs_smgr_create_if_missing(smgr, REL + 2, HS_FORK_MAIN, NULL) == HS_OK);
  hs_buf pinned[POOL + 1];
  unsigned n = 0;
  hs_blockno blk;
  while (n <= POOL &&
         hs_pool_extend(e->pool, REL + 2, HS_FORK_MAIN, NULL, false, &pinned[n], &blk) == HS_OK)
    n++;
  CHECK(n < POOL + 1);
  REQUIRE(n > 0);
  hs_buf_release(e->pool, pinned[--n]); /* one left */
  unsigned char *huge = pattern(f.max, 70);
  hs_tid t;
  CHECK_ST(hs_heap_update(e->h, x, f.full, huge, f.max, &t), HS_ERR_NO_BUFFERS);
  while (n) hs_buf_release(e->pool, pinned[--n]);
  image after;
  take(e, &after);
  CHECK(same(e, &before, &after, 2, "no buffer"));
  drop(&after);
  drop(&before);
  CHECK_OK(hs_xact_abort(e->x, x));
  free(huge);
  crash_and_check(&f, "no buffer");
  fault_finish(&f);
}

/* ---- a stale full-page-image decision ---- */

static void move_redo(hs_pool *pool, void *ctx) {
  (void)ctx;
  seams.pool_decided = NULL; /* once */
  (void)wal_checkpoint_begin(pool->wal);
}

/* A page changed since the last checkpoint is logged without its image —
 * unless a checkpoint moves the redo point between that decision and the
 * insert: then recovery starts past the page's last image, and the record
 * must carry one (a torn write of the page would otherwise be replayed on).
 * The hook moves the redo point exactly there. */
static void test_stale_redo(void) {
  testdir_make(dir, sizeof dir, "heap-stale");
  env e;
  REQUIRE(env_open(&e, 16u << 20, 8192) == HS_OK);
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  unsigned char *row = pattern(SMALL, 50);
  hs_tid t1, t2;
  CHECK_OK(hs_pool_checkpoint(e.pool));
  CHECK_OK(hs_heap_insert(e.h, x, row, SMALL, &t1)); /* the page's image, after the checkpoint */
  seams.pool_decided = move_redo;
  CHECK_OK(hs_heap_insert(e.h, x, row, SMALL, &t2)); /* no image needed ... until the hook */
  CHECK(seams.pool_decided == NULL);
  CHECK_EQ(t2.block, t1.block);
  CHECK_OK(hs_xact_commit(e.x, x));
  CHECK_OK(hs_wal_flush(e.wal, hs_wal_insert_lsn(e.wal), HS_WAL_CAUSE_COMMIT, NULL));
  /* The last insert record of the heap: it names the page and carries it. */
  char wd[4200];
  wal_dir(wd, sizeof wd);
  hs_wal_reader *r;
  REQUIRE(hs_wal_reader_open(wd, e.segment, 0, &r) == HS_OK);
  hs_wal_read_record rec;
  bool got, found = false, carried = false;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got)
    if (rec.rmgr == HS_WAL_RMGR_HEAP && rec.type == 1 && rec.npages == 1 &&
        rec.pages[0].rel == REL && rec.pages[0].block == t2.block) {
      found = true;
      carried = rec.images[0] != NULL;
    }
  hs_wal_reader_close(r);
  CHECK(found);
  CHECK(carried);
  env_crash(&e);
  REQUIRE(env_open(&e, 16u << 20, 8192) == HS_OK);
  CHECK(holds(&e, t1, row, SMALL));
  CHECK(holds(&e, t2, row, SMALL));
  env_close(&e);
  free(row);
  testdir_remove(dir);
}

/* ---- a new page someone else filled first ---- */

/* The window hs_pool_extend leaves open: the file has grown and the new
 * block is not in the page table yet. A vacuum that reads the block there
 * finds an all-zero page and offers it as free space; inserts fill it; the
 * extender gets its buffer after them. The hook plays the vacuum and the
 * inserts at that moment; the extending call must take another new page
 * (before the fix it failed: "heap page: no room for a tuple of 124 bytes",
 * once in about 2,000 runs of crash-test --power-loss). */
typedef struct fill_ctx {
  env *e;
  hs_blockno arm; /* the extension of this block triggers the fill */
  bool done;
  hs_xid xid;
  const unsigned char *row;
  uint32_t n;       /* rows that fill a page */
  hs_tid tids[128]; /* where they went */
} fill_ctx;

static void fill_new_block(hs_pool *pool, uint32_t rel, int fork, uint32_t block, void *ctx) {
  (void)pool;
  fill_ctx *f = ctx;
  if (f->done || rel != REL || fork != HS_FORK_MAIN || block != f->arm) return;
  f->done = true;
  CHECK_OK(fsm_set(heap_fsm(f->e->h), block, 8192 - HEAP_PAGE_FIRST_LP)); /* the vacuum */
  for (uint32_t i = 0; i < f->n; i++) {
    CHECK_OK(hs_heap_insert(f->e->h, f->xid, f->row, SMALL, &f->tids[i]));
    CHECK_EQ(f->tids[i].block, block);
  }
}

static void test_extension_filled(bool update) {
  testdir_make(dir, sizeof dir, "heap-extend-filled");
  env e;
  REQUIRE(env_open(&e, 16u << 20, 8192) == HS_OK);
  unsigned char *row = pattern(SMALL, 60);
  uint32_t per = HEAP_TUPLE_HEADER + SMALL + HEAP_LINE_POINTER;
  fill_ctx f = {.e = &e, .arm = 2, .row = row, .n = (8192 - HEAP_PAGE_FIRST_LP) / per};
  REQUIRE(f.n <= 128);
  /* Blocks 0 and 1 full of committed rows. */
  hs_xid x0;
  REQUIRE(hs_xact_begin(e.x, &x0) == HS_OK);
  hs_tid first[256];
  for (uint32_t i = 0; i < 2 * f.n; i++) {
    CHECK_OK(hs_heap_insert(e.h, x0, row, SMALL, &first[i]));
    CHECK_EQ(first[i].block, i / f.n);
  }
  CHECK_OK(hs_xact_commit(e.x, x0));
  REQUIRE(hs_xact_begin(e.x, &f.xid) == HS_OK);
  seams.pool_extended_ctx = &f;
  seams.pool_extended = fill_new_block;
  hs_tid got;
  hs_status st;
  if (update)
    st = hs_heap_update(e.h, f.xid, first[0], row, SMALL, &got); /* must move: block 0 is full */
  else
    st = hs_heap_insert(e.h, f.xid, row, SMALL, &got);
  if (st != HS_OK) fprintf(stderr, "%s: %s\n", update ? "update" : "insert", hs_last_error());
  CHECK_OK(st);
  seams.pool_extended = NULL;
  CHECK(f.done);
  CHECK_EQ(got.block, 3); /* block 2 was filled by the others */
  CHECK_OK(hs_xact_commit(e.x, f.xid));
  CHECK_OK(hs_wal_flush(e.wal, hs_wal_insert_lsn(e.wal), HS_WAL_CAUSE_COMMIT, NULL));
  for (int pass = 0; pass < 2; pass++) {
    CHECK(holds(&e, got, row, SMALL));
    for (uint32_t i = 0; i < f.n; i++) CHECK(holds(&e, f.tids[i], row, SMALL));
    for (uint32_t i = update ? 1 : 0; i < 2 * f.n; i++) CHECK(holds(&e, first[i], row, SMALL));
    if (pass == 0) { /* and after a crash */
      env_crash(&e);
      REQUIRE(env_open(&e, 16u << 20, 8192) == HS_OK);
    }
  }
  env_close(&e);
  free(row);
  testdir_remove(dir);
}

/* ---- a delete clears all-visible ---- */

static void visibility(env *e, hs_blockno block, bool *flag, bool *bit) {
  hs_buf b;
  REQUIRE(hs_pool_read(e->pool, REL, HS_FORK_MAIN, block, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
  hs_buf_lock(e->pool, b, HS_LOCK_SHARE);
  *flag = (heap_page_flags(hs_buf_page(e->pool, b)) & HEAP_PAGE_ALL_VISIBLE) != 0;
  hs_buf_unlock(e->pool, b);
  hs_buf_release(e->pool, b);
  REQUIRE(vm_get(heap_vm(e->h), block, bit) == HS_OK);
}

static void test_delete_clears_visible(void) {
  testdir_make(dir, sizeof dir, "heap-visible");
  env e;
  REQUIRE(env_open(&e, 16u << 20, 8192) == HS_OK);
  unsigned char *row = pattern(SMALL, 60);
  hs_xid x;
  hs_tid t[3];
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (int i = 0; i < 3; i++) CHECK_OK(hs_heap_insert(e.h, x, row, SMALL, &t[i]));
  CHECK_OK(hs_xact_commit(e.x, x));
  hs_vacuum_stats vs;
  CHECK_OK(hs_vacuum(e.h, NULL, NULL, &vs));
  bool flag, bit;
  visibility(&e, t[1].block, &flag, &bit);
  CHECK(flag);
  CHECK(bit);
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  CHECK_OK(hs_heap_delete(e.h, x, t[1]));
  visibility(&e, t[1].block, &flag, &bit);
  CHECK(!flag);
  CHECK(!bit);
  CHECK_OK(hs_xact_commit(e.x, x));
  env_crash(&e);
  REQUIRE(env_open(&e, 16u << 20, 8192) == HS_OK);
  visibility(&e, t[1].block, &flag, &bit);
  CHECK(!flag);
  CHECK(!bit);
  /* Vacuum trusting the map reads the page and removes the dead version. */
  hs_vacuum_options o;
  hs_vacuum_options_init(&o);
  o.skip_all_visible = true;
  CHECK_OK(hs_vacuum(e.h, NULL, &o, &vs));
  CHECK_EQ(vs.removed, 1u);
  visibility(&e, t[1].block, &flag, &bit);
  CHECK(flag);
  CHECK(bit);
  env_close(&e);
  free(row);
  testdir_remove(dir);
}

/* The visibility map's record goes in, then the log fails before the
 * change's own record: the heap page is put back (still flagged
 * all-visible), the map's bit stays cleared — the one change a failed call
 * may leave, and a safe one — and vacuum sets it again. */
static void fail_the_log(hs_pool *pool, void *ctx) {
  (void)ctx;
  seams.pool_logged = NULL; /* once: after the map's record */
  /* The map's record made durable, so recovery replays the cleared bit;
   * then a record (of no resource manager: it never reaches the disk) whose
   * write fails, which stops the log. */
  CHECK_OK(hs_wal_flush(pool->wal, hs_wal_insert_lsn(pool->wal), HS_WAL_CAUSE_COMMIT, NULL));
  CHECK_OK(hs_wal_inject_fault(pool->wal, HS_WAL_FAULT_WRITE, 1, EIO, 1000));
  static const char junk[8] = "unused";
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_FIRST_USER, .data = junk, .len = sizeof junk};
  hs_lsn end;
  CHECK_OK(hs_wal_insert(pool->wal, &rec, &end));
  CHECK(hs_wal_flush(pool->wal, end, HS_WAL_CAUSE_COMMIT, NULL) != HS_OK);
}

static void test_map_then_log_fails(void) {
  fault_setup f;
  fault_prepare(&f, true);
  env *e = &f.e;
  hs_xid x;
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  bool flag, bit;
  visibility(e, f.b.block, &flag, &bit);
  CHECK(flag && bit);
  image before;
  take(e, &before);
  seams.pool_logged = fail_the_log;
  CHECK_ST(hs_heap_delete(e->h, x, f.b), HS_ERR_IO);
  CHECK(seams.pool_logged == NULL); /* the map's record was logged */
  image after;
  take(e, &after);
  CHECK(same(e, &before, &after, 1, "map logged, then the log failed"));
  drop(&after);
  drop(&before);
  visibility(e, f.b.block, &flag, &bit);
  CHECK(flag);
  CHECK(!bit);
  env_crash(e);
  REQUIRE(env_open(e, 16u << 20, 8192) == HS_OK);
  CHECK(holds(e, f.b, f.vb, SMALL));
  visibility(e, f.b.block, &flag, &bit);
  CHECK(flag);
  CHECK(!bit); /* the map's record was replayed */
  hs_vacuum_stats vs;
  CHECK_OK(hs_vacuum(e->h, NULL, NULL, &vs));
  visibility(e, f.b.block, &flag, &bit);
  CHECK(flag);
  CHECK(bit);
  env_close(e);
  fault_finish(&f);
}

int main(void) {
  test_sizes();
  test_log_fault(false, EIO);
  test_log_fault(true, ENOSPC);
  test_extend_fault();
  test_read_fault();
  test_no_buffer();
  test_stale_redo();
  test_extension_filled(false);
  test_extension_filled(true);
  test_delete_clears_visible();
  test_map_then_log_fails();
  return check_finish();
}

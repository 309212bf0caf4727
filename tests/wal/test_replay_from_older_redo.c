/*
 * tests/test_replay_from_older_redo.c — replay that starts before the last
 * checkpoint's redo point gives what replay from that redo point gives
 * (issue 37; pool/recovery.c).
 *
 * Replay is redo-only with page LSNs: a record is applied to a page only if
 * the page's LSN is older than the record's end, and a full page image
 * replaces the page. Started earlier than it needs to — the control file
 * removed, or an older copy of it put back — it meets records every page on
 * disk already has, and must skip them, then apply the rest.
 *
 * The defect this guards: an image restored over a page already in the
 * pool kept the buffer's LSN when that was newer (marking a buffer dirty
 * only raises its LSN). Replay started at a point that is not the page's
 * redo point (the control file names no checkpoint, so replay starts at
 * the oldest segment the log still has) reads a page from disk for a
 * record before the checkpoint — its LSN as of its last write, after the
 * checkpoint — then restores the image the first change after the
 * checkpoint logged: the page goes back to that image but keeps the newer
 * LSN, and every record between the image and that LSN is skipped as
 * "already there". Acknowledged changes were lost while the open returned
 * HS_OK (the damage matrix: crashed, control file removed or an older copy
 * put back: "6 of 320 rows lost or wrong").
 *
 * The cases:
 *  - a counter page, the smallest sequence that loses a change: a change
 *    before the checkpoint in the segment the log now starts with, the
 *    image after it, two more changes, the page written, a crash; opened
 *    without the control file and with the one from before the checkpoint;
 *  - a heap with its primary-key index and the commit log (as the damage
 *    matrix works them), crashed after one checkpoint (the matrix's state)
 *    and after two; each case on its own copy of the crashed directory,
 *    every acknowledged row checked at its version: opened as it is;
 *    without the control file; with the control file from before the
 *    first checkpoint; (two checkpoints) with the one saved after the first
 *    and the log segments the second recycled put back — replay from a
 *    real older redo point; and without the control file, every segment
 *    put back (replay from LSN 0). The last two never met the defect —
 *    from a real redo point each page's first record carries its image,
 *    so no page is read before its image — but guard the same rule:
 *    replay from an older start ends where replay from the newest one
 *    does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "hotset/control.h"
#include "hotset/durability.h"
#include "hotset/heap.h"
#include "hotset/storage.h"
#include "hotset/wal.h"
#include "testdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE       4096u
#define SEGMENT    (64u << 10)
#define POOL_PAGES 48u /* fewer than the heap and index pages: evictions write pages */
#define PATH_CAP   4400

static char root[4096];

static void path_join(char *out, const char *a, const char *b) {
  int n = snprintf(out, PATH_CAP, "%s/%s", a, b);
  REQUIRE(n > 0 && n < PATH_CAP);
}

/* ---- files ----------------------------------------------------------------- */

static void copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(in >= 0 && out >= 0);
  static char buf[1 << 16];
  for (ssize_t got; (got = read(in, buf, sizeof buf)) != 0;) {
    REQUIRE(got > 0);
    REQUIRE(write(out, buf, (size_t)got) == got);
  }
  close(in);
  close(out);
}

/* Copies the regular files of `from` into `to` (made if missing), and of
 * its wal/ directory when `with_wal`; lock files stay behind. */
static void copy_dir(const char *from, const char *to, bool with_wal) {
  REQUIRE(mkdir(to, 0700) == 0 || errno == EEXIST);
  DIR *d = opendir(from);
  REQUIRE(d != NULL);
  for (struct dirent *x; (x = readdir(d));) {
    char a[PATH_CAP], b[PATH_CAP];
    path_join(a, from, x->d_name);
    path_join(b, to, x->d_name);
    struct stat sb;
    REQUIRE(lstat(a, &sb) == 0);
    if (S_ISDIR(sb.st_mode) && with_wal && !strcmp(x->d_name, "wal")) copy_dir(a, b, false);
    if (S_ISREG(sb.st_mode) && !strstr(x->d_name, ".lock")) copy_file(a, b);
  }
  closedir(d);
}

static bool exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

static void segment_path(const char *dir, uint64_t start, char *out) {
  char name[64];
  snprintf(name, sizeof name, "wal/%016" PRIX64, start);
  path_join(out, dir, name);
}

/* The start of the oldest segment in dir/wal. */
static uint64_t oldest_segment(const char *dir) {
  char p[PATH_CAP];
  for (uint64_t s = 0; s < 1024u * SEGMENT; s += SEGMENT) {
    segment_path(dir, s, p);
    if (exists(p)) return s;
  }
  REQUIRE(false);
  return 0;
}

/* Puts back, from the saved log directory `saved`, every segment below
 * the oldest one `dir` still has (the ones checkpoints recycled). */
static void put_back_segments(const char *dir, const char *saved) {
  uint64_t oldest = oldest_segment(dir);
  for (uint64_t s = 0; s < oldest; s += SEGMENT) {
    char from[PATH_CAP], to[PATH_CAP];
    segment_path(saved, s, from);
    segment_path(dir, s, to);
    if (exists(from) && !exists(to)) copy_file(from, to);
  }
}

static void control_path(const char *dir, char *out) {
  path_join(out, dir, "hotset.control");
}

/* ---- the minimal case: one counter page ------------------------------------ */

#define REL        7u
#define P          0u /* the counter page */
#define FILLER     1u /* a page whose changes fill the log */
#define COUNTER_AT 64u

typedef struct pool_env {
  hs_wal *wal;
  hs_pool *pool;
} pool_env;

static hs_status pool_env_open(pool_env *e, const char *dir) {
  *e = (pool_env){0};
  char wd[PATH_CAP];
  path_join(wd, dir, "wal");
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wd;
  wo.segment_bytes = SEGMENT;
  wo.writer_delay_ms = 0;
  hs_status st = hs_wal_open(&wo, &e->wal);
  if (st != HS_OK) return st;
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.page_size = PAGE; /* explicit: a directory without a control file opens with it */
  po.pool_pages = 16;
  po.wal = e->wal;
  po.checksums = true;
  st = hs_pool_open(&po, &e->pool);
  if (st != HS_OK) {
    fprintf(stderr, "hs_pool_open: %s\n", hs_last_error());
    hs_wal_close(e->wal);
  }
  return st;
}

/* Changes `len` bytes of block blk at COUNTER_AT: the counter goes up by
 * one, the rest is filler. Logged and flushed: acknowledged. */
static hs_lsn change(pool_env *e, hs_blockno blk, uint32_t len) {
  hs_buf b;
  REQUIRE(hs_pool_read(e->pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
  REQUIRE(hs_buf_lock(e->pool, b, HS_LOCK_EXCLUSIVE) == HS_OK);
  unsigned char *p = hs_buf_page(e->pool, b);
  uint64_t v;
  memcpy(&v, p + COUNTER_AT, 8);
  v++;
  memcpy(p + COUNTER_AT, &v, 8);
  for (uint32_t i = 8; i < len; i++) p[COUNTER_AT + i] = (unsigned char)(v + i);
  hs_wal_range r = {COUNTER_AT, len};
  hs_lsn end;
  REQUIRE(hs_buf_log_change(e->pool, b, &r, 1, &end) == HS_OK);
  hs_buf_unlock(e->pool, b);
  hs_buf_release(e->pool, b);
  REQUIRE(hs_wal_flush(e->wal, end, HS_WAL_CAUSE_COMMIT, NULL) == HS_OK);
  return end;
}

static uint64_t counter(pool_env *e, hs_blockno blk) {
  hs_buf b;
  REQUIRE(hs_pool_read(e->pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
  uint64_t v;
  memcpy(&v, (unsigned char *)hs_buf_page(e->pool, b) + COUNTER_AT, 8);
  hs_buf_release(e->pool, b);
  return v;
}

typedef enum start_from { NO_CONTROL_FILE, CONTROL_BEFORE_CHECKPOINT } start_from;

static void test_counter_page(start_from how) {
  char dir[PATH_CAP], control[PATH_CAP], saved[PATH_CAP];
  path_join(dir, root, how == NO_CONTROL_FILE ? "counter-no-control" : "counter-older-control");
  REQUIRE(mkdir(dir, 0700) == 0);
  control_path(dir, control);
  path_join(saved, root, "counter-control-at-open");
  pool_env e;
  REQUIRE(pool_env_open(&e, dir) == HS_OK);
  copy_file(control, saved); /* names no checkpoint yet */
  REQUIRE(hs_smgr_create_if_missing(hs_pool_smgr(e.pool), REL, HS_FORK_MAIN, NULL) == HS_OK);
  for (hs_blockno b = 0; b < 2; b++) {
    hs_buf buf;
    REQUIRE(hs_pool_extend(e.pool, REL, HS_FORK_MAIN, NULL, false, &buf, NULL) == HS_OK);
    hs_buf_release(e.pool, buf);
  }
  change(&e, P, 8); /* 1: P's first change, with its image */
  /* Two segments of filler: the checkpoint below recycles the segments
   * holding P's first image. */
  while (hs_wal_insert_lsn(e.wal) < 2 * SEGMENT + SEGMENT / 2) change(&e, FILLER, 2000);
  hs_lsn second = change(&e, P, 8);     /* 2: no image (P changed since the redo point, 0) */
  CHECK_OK(hs_pool_checkpoint(e.pool)); /* writes P at 2 */
  hs_control c;
  REQUIRE(hs_control_read(dir, &c) == HS_OK && c.has_checkpoint);
  /* The setting the defect needs: the log now starts in the segment of
   * change 2, which replay from "no checkpoint" starts with. */
  REQUIRE(second / SEGMENT == c.redo / SEGMENT);
  REQUIRE(oldest_segment(dir) == c.redo - c.redo % SEGMENT);
  change(&e, P, 8); /* 3: the first change since the redo point: its image */
  change(&e, P, 8); /* 4 */
  change(&e, P, 8); /* 5 */
  CHECK_OK(hs_pool_flush_relation(e.pool, REL)); /* P on disk at 5, LSN past the image */
  hs_pool_abandon(e.pool);
  CHECK_OK(hs_wal_close(e.wal));

  if (how == NO_CONTROL_FILE)
    REQUIRE(unlink(control) == 0);
  else
    copy_file(saved, control);
  REQUIRE(pool_env_open(&e, dir) == HS_OK);
  hs_pool_recovery_stats rep;
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK(rep.start < c.redo); /* what this case is about: replay from before the redo point */
  CHECK(rep.skipped > 0);    /* change 2 is on disk already */
  CHECK_EQ(counter(&e, P), 5);
  CHECK_OK(hs_pool_close(e.pool));
  CHECK_OK(hs_wal_close(e.wal));
}

/* ---- a heap, its index and the commit log ---------------------------------- */

#define HEAP_REL  16384u
#define INDEX_REL 16385u
#define PHASE1    120u /* transactions before the first checkpoint */
#define PHASE2    200u /* then before the second */
#define PHASE3    120u /* then before the crash */
#define KEYS      (PHASE1 + PHASE2 + PHASE3)

typedef struct env {
  hs_wal *wal;
  hs_pool *pool;
  hs_xact_mgr *x;
  hs_heap *h;
  hs_pk_index *ix;
} env;

static hs_status env_open(env *e, const char *dir) {
  *e = (env){0};
  char wd[PATH_CAP];
  path_join(wd, dir, "wal");
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wd;
  wo.segment_bytes = SEGMENT;
  wo.writer_delay_ms = 0;
  hs_status st = hs_wal_open(&wo, &e->wal);
  if (st == HS_OK) st = hs_heap_register_redo(e->wal);
  if (st != HS_OK) return st;
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.page_size = PAGE;
  po.pool_pages = POOL_PAGES;
  po.wal = e->wal;
  po.checksums = true;
  st = hs_pool_open(&po, &e->pool);
  if (st == HS_OK) st = hs_xact_open(e->pool, &e->x);
  if (st == HS_OK) st = hs_heap_open(e->pool, e->x, HEAP_REL, &e->h);
  if (st == HS_OK) st = hs_pk_index_open(e->pool, INDEX_REL, &e->ix);
  return st;
}

static void env_crash(env *e) {
  hs_pk_index_close(e->ix);
  hs_heap_close(e->h);
  hs_xact_close(e->x);
  hs_pool_abandon(e->pool);
  CHECK_OK(hs_wal_close(e->wal));
}

static void env_close(env *e) {
  hs_pk_index_close(e->ix);
  hs_heap_close(e->h);
  hs_xact_close(e->x);
  CHECK_OK(hs_pool_close(e->pool));
  CHECK_OK(hs_wal_close(e->wal));
}

static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* A row: its key and version, then filler only they make; 48..947 bytes. */
static uint32_t row_len(uint64_t key, uint64_t version) {
  return 48u + (uint32_t)(mix(key * 1000003u + version * 7919u) % 900u);
}

static void row_make(uint8_t *buf, uint64_t key, uint64_t version) {
  uint32_t len = row_len(key, version);
  memcpy(buf, &key, 8);
  memcpy(buf + 8, &version, 8);
  for (uint32_t i = 16; i < len; i++) buf[i] = (uint8_t)mix(key ^ (version << 32) ^ i);
}

/* The acknowledged version of each key (0: none). */
static uint64_t acked[KEYS + 1];

/* Transaction i: inserts row i; every other one also updates an older row. */
static void transaction(env *e, uint64_t i) {
  static uint8_t buf[PAGE], old[PAGE];
  static hs_snapshot snap;
  hs_xid x;
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  row_make(buf, i, 1);
  hs_tid tid;
  REQUIRE(hs_heap_insert(e->h, x, buf, row_len(i, 1), &tid) == HS_OK);
  REQUIRE(hs_pk_index_insert(e->ix, i, tid) == HS_OK);
  uint64_t target = 0;
  if (i >= 4 && i % 2 == 0) {
    target = 1 + mix(i) % (i - 1);
    REQUIRE(hs_xact_take_snapshot(e->x, &snap) == HS_OK);
    uint32_t len;
    bool found;
    hs_tid at, moved;
    REQUIRE(hs_pk_index_lookup(e->ix, e->h, target, &snap, x, &at, old, sizeof old, &len, &found) ==
                HS_OK &&
            found);
    hs_xact_release_snapshot(e->x, &snap);
    row_make(buf, target, acked[target] + 1);
    REQUIRE(hs_heap_update(e->h, x, at, buf, row_len(target, acked[target] + 1), &moved) == HS_OK);
  }
  REQUIRE(hs_xact_commit(e->x, x) == HS_OK);
  acked[i] = 1;
  if (target) acked[target]++;
}

/* How many acknowledged rows are missing or not at their version (or
 * rows never inserted found); the first few are named. */
static unsigned rows_wrong(env *e, const char *what) {
  static hs_snapshot snap;
  REQUIRE(hs_xact_take_snapshot(e->x, &snap) == HS_OK);
  unsigned wrong = 0;
  for (uint64_t k = 1; k <= KEYS; k++) {
    static uint8_t out[PAGE], want[PAGE];
    uint32_t len = 0;
    bool found = false;
    hs_tid at;
    hs_status st = hs_pk_index_lookup(e->ix, e->h, k, &snap, 0, &at, out, sizeof out, &len, &found);
    uint64_t v = 0;
    if (st == HS_OK && found && len >= 16) memcpy(&v, out + 8, 8);
    if (!acked[k] && st == HS_OK && !found) continue; /* never inserted */
    if (acked[k]) row_make(want, k, acked[k]);
    if (acked[k] && st == HS_OK && found && v == acked[k] && len == row_len(k, v) &&
        !memcmp(out, want, len))
      continue;
    if (wrong++ < 3)
      fprintf(stderr,
              "%s: row %" PRIu64 ": %s, %s, version %" PRIu64 " (%" PRIu64 " acknowledged)\n", what,
              k, hs_status_name(st), found ? "found" : "not found", v, acked[k]);
  }
  hs_xact_release_snapshot(e->x, &snap);
  return wrong;
}

typedef struct heap_state {
  const char *name;
  unsigned checkpoints; /* 1: after PHASE1; 2: also after PHASE2 */
  char dir[PATH_CAP];
  char control_at_open[PATH_CAP], control_after_first[PATH_CAP];
  char wal_before_first[PATH_CAP], wal_before_second[PATH_CAP];
  hs_control first, last; /* the control file after the first and the last checkpoint */
} heap_state;

/* Works a heap in `s->dir` — PHASE1 transactions, a checkpoint, PHASE2,
 * with two checkpoints another one and PHASE3 — and crashes. Keeps the
 * control file as the open left it and after the first checkpoint, and
 * the log directory before each checkpoint (which recycles segments). */
static void make_heap_state(heap_state *s) {
  char base[PATH_CAP], saved[PATH_CAP];
  path_join(base, root, s->name);
  REQUIRE(mkdir(base, 0700) == 0);
  path_join(s->dir, base, "crashed");
  path_join(saved, base, "saved");
  REQUIRE(mkdir(s->dir, 0700) == 0 && mkdir(saved, 0700) == 0);
  path_join(s->control_at_open, saved, "control-at-open");
  path_join(s->control_after_first, saved, "control-after-first-checkpoint");
  path_join(s->wal_before_first, saved, "before-first");
  path_join(s->wal_before_second, saved, "before-second");
  char control[PATH_CAP];
  control_path(s->dir, control);
  memset(acked, 0, sizeof acked);
  env e;
  REQUIRE(env_open(&e, s->dir) == HS_OK);
  copy_file(control, s->control_at_open);
  uint64_t i = 1;
  for (; i <= PHASE1; i++) transaction(&e, i);
  copy_dir(s->dir, s->wal_before_first, true);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  REQUIRE(hs_control_read(s->dir, &s->first) == HS_OK && s->first.has_checkpoint);
  copy_file(control, s->control_after_first);
  for (; i <= PHASE1 + PHASE2; i++) transaction(&e, i);
  if (s->checkpoints == 2) {
    copy_dir(s->dir, s->wal_before_second, true);
    CHECK_OK(hs_pool_checkpoint(e.pool));
    for (; i <= KEYS; i++) transaction(&e, i);
  }
  REQUIRE(hs_control_read(s->dir, &s->last) == HS_OK && s->last.has_checkpoint);
  env_crash(&e);
  /* The checkpoints recycled segments: LSN 0, and with two the first
   * one's redo point, are back only where a case puts their segments back. */
  REQUIRE(oldest_segment(s->dir) > 0);
  if (s->checkpoints == 2) REQUIRE(oldest_segment(s->dir) > s->first.redo);
  printf("%s: %" PRIu64 " acknowledged transactions; redo points %" PRIX64 " and %" PRIX64
         "; the log starts at %" PRIX64 "\n",
         s->name, i - 1, s->first.redo, s->last.redo, oldest_segment(s->dir));
}

typedef enum heap_case {
  AS_IT_IS,
  CONTROL_REMOVED,
  CONTROL_FROM_OPEN,
  CONTROL_FROM_FIRST_CHECKPOINT,
  CONTROL_REMOVED_WHOLE_LOG,
  HEAP_CASES
} heap_case;
static const char *const heap_case_names[HEAP_CASES] = {
    "as it is", "control file removed", "control file from before any checkpoint",
    "control file from the first checkpoint, its segments put back",
    "control file removed, every segment put back"};

static void test_heap_case(const heap_state *s, heap_case k) {
  char dir[PATH_CAP], control[PATH_CAP], name[128];
  snprintf(name, sizeof name, "%s-case-%d", s->name, (int)k);
  path_join(dir, root, name);
  copy_dir(s->dir, dir, true);
  control_path(dir, control);
  hs_lsn want_start = s->last.redo;
  switch (k) {
  case AS_IT_IS:
    break;
  case CONTROL_REMOVED:
    REQUIRE(unlink(control) == 0);
    want_start = 0; /* read from the oldest segment there is */
    break;
  case CONTROL_FROM_OPEN:
    copy_file(s->control_at_open, control);
    want_start = 0;
    break;
  case CONTROL_FROM_FIRST_CHECKPOINT:
    copy_file(s->control_after_first, control);
    put_back_segments(dir, s->wal_before_second);
    want_start = s->first.redo;
    break;
  case CONTROL_REMOVED_WHOLE_LOG:
    REQUIRE(unlink(control) == 0);
    if (s->checkpoints == 2) put_back_segments(dir, s->wal_before_second);
    put_back_segments(dir, s->wal_before_first);
    REQUIRE(oldest_segment(dir) == 0);
    want_start = 0;
    break;
  default:
    REQUIRE(false);
  }
  env e;
  hs_status st = env_open(&e, dir);
  CHECK_OK(st);
  if (st != HS_OK) return; /* the stack is left open: the test has failed */
  hs_pool_recovery_stats rep;
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK_EQ(rep.start, want_start);
  char what[256];
  snprintf(what, sizeof what, "%s, %s", s->name, heap_case_names[k]);
  unsigned wrong = rows_wrong(&e, what);
  printf("  %-63s replay %6" PRIX64 "..%6" PRIX64 ": %4" PRIu64 " records, %3" PRIu64
         " images, %4" PRIu64 " applied, %3" PRIu64 " skipped; %u rows wrong\n",
         heap_case_names[k], rep.start, rep.end, rep.records, rep.images, rep.applied, rep.skipped,
         wrong);
  CHECK_EQ(wrong, 0);
  env_close(&e);
}

int main(void) {
  testdir_make(root, sizeof root, "replay-older-redo");
  test_counter_page(NO_CONTROL_FILE);
  test_counter_page(CONTROL_BEFORE_CHECKPOINT);
  /* As the damage matrix's crashed state: one checkpoint, then 200
   * transactions. The control file from the first checkpoint is the
   * current one there: that case needs the second state. */
  heap_state one = {.name = "one-checkpoint", .checkpoints = 1};
  make_heap_state(&one);
  for (int k = 0; k < HEAP_CASES; k++)
    if (k != CONTROL_FROM_FIRST_CHECKPOINT) test_heap_case(&one, (heap_case)k);
  heap_state two = {.name = "two-checkpoints", .checkpoints = 2};
  make_heap_state(&two);
  for (int k = 0; k < HEAP_CASES; k++) test_heap_case(&two, (heap_case)k);
  testdir_remove(root);
  return check_finish();
}

/*
 * tests/test_recovery_refusals.c — opening refuses what it cannot prove
 * (hotset/control.h, docs/wal.md "What recovery refuses"), at every segment
 * size the log allows.
 *
 * Each case is an operator's bad day done through the public API and the
 * files: a flipped byte in the checkpoint record, an old control file put
 * back, a log of another directory, a log lost, an older log put back
 * beside newer data files, a directory opened with the wrong page size.
 * Each must be refused with a message naming what and where, with nothing
 * on disk changed by the refusal, and — once the damage is undone — open
 * with every acknowledged change there.
 *
 * Two cases need what no file operation gives: a control file that passes
 * its CRC but names another redo point than its checkpoint record
 * (control_write, as another program or a bug would), and a change logged
 * while a checkpoint runs (the pool's collected_hook, as in
 * test_checkpoint_race.c).
 */
#include "check.h"
#include "core/error.h"
#include "core/seams.h"
#include "hotset/control.h"
#include "hotset/durability.h"
#include "hotset/page.h"
#include "hotset/pool.h"
#include "hotset/wal.h"
#include "pool/pool_internal.h"
#include "storage/control_file.h"
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
#define REL        7u
#define BLOCKS     8u
#define COUNTER_AT 64u

static char root[4096];

typedef struct env {
  char dir[4200], waldir[4300];
  uint64_t segment;
  hs_wal *wal;
  hs_pool *pool;
} env;

static void env_init(env *e, const char *name, uint64_t segment) {
  snprintf(e->dir, sizeof e->dir, "%s/%s-%" PRIu64, root, name, segment);
  snprintf(e->waldir, sizeof e->waldir, "%s/wal", e->dir);
  e->segment = segment;
  e->wal = NULL;
  e->pool = NULL;
  mkdir(e->dir, 0700);
}

/* Opens the log in waldir and a pool over dir (recovery runs in
 * hs_pool_open); on failure nothing stays open and the error is the
 * thread's. */
static hs_status env_open_with(env *e, const char *waldir, uint32_t page_size) {
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = waldir;
  wo.segment_bytes = e->segment;
  wo.writer_delay_ms = 0;
  hs_status st = hs_wal_open(&wo, &e->wal);
  if (st != HS_OK) return st;
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = e->dir;
  po.page_size = page_size;
  po.pool_pages = 32;
  po.wal = e->wal;
  po.checksums = true;
  st = hs_pool_open(&po, &e->pool);
  if (st != HS_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", hs_last_error());
    int err = hs_last_errno();
    hs_wal_close(e->wal);
    e->wal = NULL;
    hs_fail(st, err, "%s", why);
  }
  return st;
}

static hs_status env_open(env *e) {
  return env_open_with(e, e->waldir, PAGE);
}

static void env_close(env *e) {
  CHECK_OK(hs_pool_close(e->pool));
  CHECK_OK(hs_wal_close(e->wal));
  e->pool = NULL;
  e->wal = NULL;
}

/* A crash: the pool's dirty pages are lost, the log's durable part stays. */
static void env_crash(env *e) {
  hs_pool_abandon(e->pool);
  CHECK_OK(hs_wal_close(e->wal));
  e->pool = NULL;
  e->wal = NULL;
}

static void make_relation(env *e) {
  hs_smgr *smgr = hs_pool_smgr(e->pool);
  REQUIRE(hs_smgr_create_if_missing(smgr, REL, HS_FORK_MAIN, NULL) == HS_OK);
  hs_blockno n;
  REQUIRE(hs_smgr_nblocks(smgr, REL, HS_FORK_MAIN, &n) == HS_OK);
  for (; n < BLOCKS; n++) {
    hs_buf b;
    REQUIRE(hs_pool_extend(e->pool, REL, HS_FORK_MAIN, NULL, false, &b, NULL) == HS_OK);
    hs_buf_release(e->pool, b);
  }
}

/* Adds 1 to block blk's counter, logged and flushed: acknowledged. */
static void bump(env *e, hs_blockno blk) {
  hs_buf b;
  REQUIRE(hs_pool_read(e->pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
  hs_buf_lock(e->pool, b, HS_LOCK_EXCLUSIVE);
  unsigned char *p = hs_buf_page(e->pool, b);
  uint64_t v;
  memcpy(&v, p + COUNTER_AT, 8);
  v++;
  memcpy(p + COUNTER_AT, &v, 8);
  hs_wal_range r = {COUNTER_AT, 8};
  hs_lsn end;
  REQUIRE(hs_buf_log_change(e->pool, b, &r, 1, &end) == HS_OK);
  hs_buf_unlock(e->pool, b);
  hs_buf_release(e->pool, b);
  REQUIRE(hs_wal_flush(e->wal, end, HS_WAL_CAUSE_COMMIT, NULL) == HS_OK);
}

static void bump_all(env *e, unsigned times) {
  for (unsigned t = 0; t < times; t++)
    for (hs_blockno i = 0; i < BLOCKS; i++) bump(e, i);
}

/* Every block's counter is `want`. */
static void check_counters(env *e, uint64_t want) {
  for (hs_blockno i = 0; i < BLOCKS; i++) {
    hs_buf b;
    if (hs_pool_read(e->pool, REL, HS_FORK_MAIN, i, HS_READ_NORMAL, NULL, &b, NULL) != HS_OK) {
      fprintf(stderr, "reading block %u: %s\n", i, hs_last_error());
      CHECK(false);
      continue;
    }
    uint64_t v;
    memcpy(&v, (unsigned char *)hs_buf_page(e->pool, b) + COUNTER_AT, 8);
    CHECK_EQ(v, want);
    hs_buf_release(e->pool, b);
  }
}

/* ---- files ----------------------------------------------------------------- */

/* A hash of every file under `path` (names, bytes and modification times;
 * lock files, whose pid changes with each opener, left out): what "nothing
 * changed" compares. */
static uint64_t tree_hash(const char *path, uint64_t h) {
  DIR *d = opendir(path);
  if (!d) return h;
  char *names[512];
  size_t n = 0;
  for (struct dirent *x; (x = readdir(d)) && n < 512;)
    if (strcmp(x->d_name, ".") && strcmp(x->d_name, "..") && !strstr(x->d_name, ".lock"))
      names[n++] = strdup(x->d_name);
  closedir(d);
  for (size_t i = 0; i < n; i++) /* readdir's order is not stable: sort */
    for (size_t j = i + 1; j < n; j++)
      if (strcmp(names[j], names[i]) < 0) {
        char *t = names[i];
        names[i] = names[j];
        names[j] = t;
      }
  static unsigned char buf[1 << 16];
  for (size_t i = 0; i < n; i++) {
    char p[4600];
    snprintf(p, sizeof p, "%s/%s", path, names[i]);
    for (const char *c = names[i]; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    struct stat sb;
    if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      h = tree_hash(p, h);
    } else {
      /* Its modification time too: a refusal must not even rewrite a file
       * with the bytes it had. */
      h = (h ^ (uint64_t)sb.st_mtim.tv_sec) * 1099511628211ull;
      h = (h ^ (uint64_t)sb.st_mtim.tv_nsec) * 1099511628211ull;
      /* Eight bytes at a time: the log's segments reach 1 GiB. */
      int fd = open(p, O_RDONLY);
      for (ssize_t got; fd >= 0 && (got = read(fd, buf, sizeof buf)) > 0;) {
        h = (h ^ (uint64_t)got) * 1099511628211ull;
        for (ssize_t k = 0; k + 8 <= got; k += 8) {
          uint64_t word;
          memcpy(&word, buf + k, 8);
          h = (h ^ word) * 1099511628211ull;
        }
        for (ssize_t k = got & ~(ssize_t)7; k < got; k++) h = (h ^ buf[k]) * 1099511628211ull;
      }
      if (fd >= 0) close(fd);
    }
    free(names[i]);
  }
  return h;
}

static void copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(in >= 0 && out >= 0);
  /* In the kernel (a 1 GiB segment need not pass through here). */
  for (ssize_t got; (got = copy_file_range(in, NULL, out, NULL, 1u << 30, 0)) != 0;)
    REQUIRE(got > 0);
  close(in);
  close(out);
}

/* Copies every regular file of directory `from` into `to` (created). */
static void copy_dir(const char *from, const char *to) {
  mkdir(to, 0700);
  DIR *d = opendir(from);
  REQUIRE(d != NULL);
  for (struct dirent *x; (x = readdir(d));) {
    char a[4600], b[4600];
    snprintf(a, sizeof a, "%s/%s", from, x->d_name);
    snprintf(b, sizeof b, "%s/%s", to, x->d_name);
    struct stat sb;
    if (stat(a, &sb) == 0 && S_ISREG(sb.st_mode)) copy_file(a, b);
  }
  closedir(d);
}

static void remove_dir(const char *path) {
  nftw(path, testdir_unlink_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* Flips one byte of the log at `lsn`. */
static void flip_log_byte(env *e, uint64_t lsn) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%016" PRIX64, e->waldir, lsn - lsn % e->segment);
  int fd = open(path, O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char c;
  REQUIRE(pread(fd, &c, 1, (off_t)(lsn % e->segment)) == 1);
  c ^= 0x40;
  REQUIRE(pwrite(fd, &c, 1, (off_t)(lsn % e->segment)) == 1);
  close(fd);
}

static hs_control control_of_dir(const char *dir) {
  hs_control c;
  REQUIRE(hs_control_read(dir, &c) == HS_OK);
  return c;
}

static hs_control control_of(env *e) {
  hs_control c;
  REQUIRE(hs_control_read(e->dir, &c) == HS_OK);
  return c;
}

/* ---- the cases ----------------------------------------------------------- */

/* Finding 1: one flipped byte in the checkpoint record the control file
 * names. Opening used to take that spot for the end of the log, zero what
 * followed and open without an error. */
static void test_damaged_checkpoint(uint64_t segment) {
  env e;
  env_init(&e, "ckpt", segment);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  bump_all(&e, 3);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  bump_all(&e, 2);
  env_crash(&e);
  hs_control c = control_of(&e);
  CHECK(c.has_checkpoint);
  CHECK_EQ(c.state, HS_DB_IN_PRODUCTION);
  flip_log_byte(&e, c.checkpoint + 36); /* inside the record, covered by its CRC */
  uint64_t before = tree_hash(e.dir, 14695981039346656037ull);
  CHECK_ST(env_open(&e), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "checkpoint");
  CHECK_CONTAINS(hs_last_error(), "reset-log");
  CHECK_EQ(tree_hash(e.dir, 14695981039346656037ull), before); /* the refusal changed nothing */
  flip_log_byte(&e, c.checkpoint + 36);
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, 5);
  env_close(&e);
  CHECK_EQ(control_of(&e).state, HS_DB_SHUT_DOWN);
}

/* Finding 2: an older control file put back (a restored backup). Where its
 * redo segment is gone, opening must refuse (it used to report "no more
 * log", delete every later segment and open). Where it is still there,
 * replay from the older redo point is correct and loses nothing. */
static void test_stale_control(uint64_t segment) {
  env e;
  env_init(&e, "stale", segment);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  bump_all(&e, 2);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  char control[4400], saved[4400];
  snprintf(control, sizeof control, "%s/%s", e.dir, HS_CONTROL_FILE);
  snprintf(saved, sizeof saved, "%s.saved", e.dir);
  copy_file(control, saved);
  hs_control old = control_of(&e);
  /* Enough log for the old redo segment to be recycled, where that is
   * cheap: a few segments of changes and checkpoints. */
  bool recycles = segment <= (1u << 20);
  unsigned rounds = 2;
  if (recycles)
    while (true) {
      bump_all(&e, 4);
      rounds += 4;
      CHECK_OK(hs_pool_checkpoint(e.pool));
      char path[4400];
      snprintf(path, sizeof path, "%s/%016" PRIX64, e.waldir, old.redo - old.redo % segment);
      hs_control now = control_of(&e);
      if (now.redo - now.redo % segment > old.redo - old.redo % segment && access(path, F_OK) != 0)
        break;
      REQUIRE(rounds < 100000);
    }
  bump_all(&e, 2);
  rounds += 2;
  env_crash(&e);
  copy_file(saved, control);
  unlink(saved);
  if (recycles) {
    uint64_t before = tree_hash(e.dir, 14695981039346656037ull);
    CHECK_ST(env_open(&e), HS_ERR_CORRUPT);
    CHECK_CONTAINS(hs_last_error(), "checkpoint");
    CHECK_EQ(tree_hash(e.dir, 14695981039346656037ull), before);
    return;
  }
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, rounds);
  env_close(&e);
}

/* A log of another directory: each directory's log carries its system
 * identifier, so swapping them is refused. */
static void test_other_system(uint64_t segment) {
  env a, b;
  env_init(&a, "sysa", segment);
  env_init(&b, "sysb", segment);
  REQUIRE(env_open(&a) == HS_OK);
  make_relation(&a);
  bump_all(&a, 1);
  env_close(&a);
  REQUIRE(env_open(&b) == HS_OK);
  make_relation(&b);
  bump_all(&b, 1);
  env_close(&b);
  CHECK(control_of(&a).system_id != control_of(&b).system_id);
  CHECK_ST(env_open_with(&a, b.waldir, PAGE), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "system");
  /* The pages tell which one is the stranger: here the log. */
  CHECK_CONTAINS(hs_last_error(), "the log is another directory's");
  /* b's control file in a: the pages and the log are a's, so the control
   * file is the stranger, and the way out moves it aside. */
  char own[4400], theirs[4400], saved[4400];
  snprintf(own, sizeof own, "%s/%s", a.dir, HS_CONTROL_FILE);
  snprintf(theirs, sizeof theirs, "%s/%s", b.dir, HS_CONTROL_FILE);
  snprintf(saved, sizeof saved, "%s/control.saved", root);
  copy_file(own, saved);
  copy_file(theirs, own);
  CHECK_ST(env_open(&a), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "the control file is another directory's");
  char way_out[9000];
  snprintf(way_out, sizeof way_out, "`mv %s %s.system-%016" PRIX64 "`", own, own,
           control_of(&b).system_id);
  CHECK_CONTAINS(hs_last_error(), way_out);
  copy_file(saved, own);
  /* The log lost: an empty log directory where the control file names a
   * checkpoint. */
  char empty[4400];
  snprintf(empty, sizeof empty, "%s/empty-wal", a.dir);
  CHECK_ST(env_open_with(&a, empty, PAGE), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "empty");
  /* A log of another segment size. */
  a.segment = segment < HS_WAL_MAX_SEGMENT ? segment * 2 : segment / 2;
  CHECK_ST(env_open_with(&a, empty, PAGE), HS_ERR_INVALID);
  char says[64];
  snprintf(says, sizeof says, "its log has %" PRIu64 "-byte segments", segment);
  CHECK_CONTAINS(hs_last_error(), says);
  a.segment = segment;
  /* Opened without any log at all. */
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = a.dir;
  po.pool_pages = 16;
  po.checksums = true;
  hs_pool *pool;
  CHECK_ST(hs_pool_open(&po, &pool), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "option wal");
  REQUIRE(env_open(&a) == HS_OK);
  check_counters(&a, 1);
  env_close(&a);
}

/* An older log put back (with its control file) beside newer data files:
 * pages carry LSNs past the end of that log, which proves it lost records;
 * reading such a page is refused. */
static void test_page_past_log(uint64_t segment) {
  env e;
  env_init(&e, "past", segment);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  bump_all(&e, 1);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  char oldwal[4400], control[4400], saved[4400];
  snprintf(oldwal, sizeof oldwal, "%s.oldwal", e.dir);
  snprintf(control, sizeof control, "%s/%s", e.dir, HS_CONTROL_FILE);
  snprintf(saved, sizeof saved, "%s.control", e.dir);
  copy_dir(e.waldir, oldwal);
  copy_file(control, saved);
  bump_all(&e, 3);
  env_close(&e); /* every page written, with LSNs of the newer log */
  remove_dir(e.waldir);
  copy_dir(oldwal, e.waldir);
  copy_file(saved, control);
  remove_dir(oldwal);
  unlink(saved);
  uint64_t before = tree_hash(e.dir, 14695981039346656037ull);
  hs_status st = env_open(&e);
  if (st != HS_OK) /* a refusal at open changes nothing, the control file included */
    CHECK_EQ(tree_hash(e.dir, 14695981039346656037ull), before);
  if (st == HS_OK) { /* recovery touched no page: the first read refuses */
    hs_buf b;
    CHECK_ST(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &b, NULL),
             HS_ERR_CORRUPT);
    CHECK_CONTAINS(hs_last_error(), "past the end of the log");
    hs_pool_abandon(e.pool);
    hs_wal_close(e.wal);
  } else {
    CHECK_EQ(st, HS_ERR_CORRUPT);
    CHECK_CONTAINS(hs_last_error(), "past the end of the log");
  }
}

/* ---- the log's own damage (findings of the second round) --------------- */

/* The start of the segment holding `lsn`, and its path. */
static void segment_path(env *e, uint64_t lsn, char *out, size_t len) {
  snprintf(out, len, "%s/%016" PRIX64, e->waldir, lsn - lsn % e->segment);
}

/* The start of a record of the log in the segment starting at `seg` (read
 * from `from`), or 0 if none is read there. */
static uint64_t record_in_segment(env *e, uint64_t from, uint64_t seg) {
  hs_wal_reader *r;
  REQUIRE(hs_wal_reader_open(e->waldir, e->segment, from, &r) == HS_OK);
  hs_wal_read_record rec;
  bool got;
  uint64_t at = 0;
  while (!at && hs_wal_reader_next(r, &rec, &got) == HS_OK && got)
    if (rec.lsn > seg + 64 && rec.lsn < seg + e->segment) at = rec.lsn;
  hs_wal_reader_close(r);
  return at;
}

/* Bumps every counter until the log has grown past `segments` more
 * segments; returns the rounds done. */
static unsigned bump_segments(env *e, unsigned segments) {
  uint64_t until = hs_wal_insert_lsn(e->wal) + segments * e->segment;
  unsigned rounds = 0;
  while (hs_wal_insert_lsn(e->wal) < until) {
    bump_all(e, 1);
    rounds++;
  }
  return rounds;
}

/* Finding 2: damage in the middle of the log — a segment removed, a byte
 * flipped in a segment's header or in one of its records — where a later
 * segment holds valid records, which proves the damaged one had been
 * synced. Opening used to take the damage for the end of the log and
 * return HS_OK with the records after it gone. Refused, naming the
 * segment, changing nothing; once undone, everything is there. */
static void test_mid_log_damage(uint64_t segment) {
  env e;
  env_init(&e, "midlog", segment);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  bump_all(&e, 1);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  unsigned rounds = 1 + bump_segments(&e, 3);
  hs_control c = control_of(&e);
  uint64_t mid = c.redo - c.redo % segment + segment; /* a segment after the redo point's */
  env_crash(&e);
  char path[4400], aside[4500];
  segment_path(&e, mid, path, sizeof path);
  snprintf(aside, sizeof aside, "%s.aside", e.dir);
  uint64_t rec = record_in_segment(&e, c.redo, mid);
  REQUIRE(rec != 0);
  for (int damage = 0; damage < 3; damage++) {
    if (damage == 0) REQUIRE(rename(path, aside) == 0); /* removed */
    if (damage == 1) flip_log_byte(&e, mid + 20);       /* its header: the system id */
    if (damage == 2) flip_log_byte(&e, rec + 36);       /* one record */
    uint64_t before = tree_hash(e.dir, 14695981039346656037ull);
    CHECK_ST(env_open(&e), HS_ERR_CORRUPT);
    CHECK_CONTAINS(hs_last_error(), path);
    CHECK_CONTAINS(hs_last_error(), "reset-log");
    CHECK_EQ(tree_hash(e.dir, 14695981039346656037ull), before);
    if (damage == 0) REQUIRE(rename(aside, path) == 0);
    if (damage == 1) flip_log_byte(&e, mid + 20);
    if (damage == 2) flip_log_byte(&e, rec + 36);
  }
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, rounds);
  env_close(&e);
}

/* Finding 5: damage that replay never needs — a flipped byte in a record
 * before the redo point, an old segment of the same log put back — blocks
 * nothing: recovery reads the log from the redo point. Opening used to
 * read from the oldest segment, stop there and refuse, and the only way
 * out offered lost most rows. */
static void test_damage_before_redo(uint64_t segment) {
  env e;
  env_init(&e, "beforeredo", segment);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  unsigned rounds = bump_segments(&e, 1);
  char first[4400], saved[4500];
  segment_path(&e, 0, first, sizeof first);
  snprintf(saved, sizeof saved, "%s.seg0", e.dir);
  copy_file(first, saved); /* the log's first segment, as it is now */
  rounds += bump_segments(&e, 2);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  rounds += bump_segments(&e, 2);
  CHECK_OK(hs_pool_checkpoint(e.pool)); /* the first segments are recycled now */
  hs_control c = control_of(&e);
  uint64_t redo_seg = c.redo - c.redo % segment;
  uint64_t before_redo = record_in_segment(&e, redo_seg + 48, redo_seg);
  unsigned more = 0;
  while (!before_redo ||
         before_redo >= c.redo) { /* the redo segment must have a record before it */
    bump_all(&e, 1);
    more++;
    CHECK_OK(hs_pool_checkpoint(e.pool));
    c = control_of(&e);
    redo_seg = c.redo - c.redo % segment;
    before_redo = record_in_segment(&e, redo_seg + 48, redo_seg);
    REQUIRE(more < 10000);
  }
  rounds += more;
  bump_all(&e, 2);
  rounds += 2;
  env_crash(&e);
  struct stat sb;
  REQUIRE(stat(first, &sb) != 0); /* recycled: its name is free */
  flip_log_byte(&e, before_redo + 36);
  copy_file(saved, first);
  unlink(saved);
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, rounds);
  /* The old segment is before the redo point: the next checkpoint recycles
   * or removes it like any other. */
  CHECK_OK(hs_pool_checkpoint(e.pool));
  CHECK(stat(first, &sb) != 0);
  env_close(&e);
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, rounds);
  env_close(&e);
}

/* Finding 1: one segment file under two names — what a crash left when
 * recycling linked an old segment to its future name and had not yet
 * unlinked the old name. The next checkpoint then gave the old name a
 * second future name, two future segments were one file, and the log
 * overwrote its own records when it reached the second. Now the extra name
 * is removed before anything writes, and a file with two names is never
 * given a future one: nothing is lost. */
static void test_two_names(uint64_t segment) {
  env e;
  env_init(&e, "twonames", segment);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  unsigned rounds = bump_segments(&e, 3);
  CHECK_OK(hs_pool_checkpoint(e.pool)); /* old segments become spares */
  uint64_t current = hs_wal_insert_lsn(e.wal);
  current -= current % segment;
  env_crash(&e);
  /* A spare: its header still names the segment it was. Give it that name
   * back too: the state of a link kept and its unlink lost. */
  uint64_t spare = 0, old = 0;
  for (uint64_t s = current + segment; s < current + 64 * segment && !spare; s += segment) {
    char p[4400];
    segment_path(&e, s, p, sizeof p);
    int fd = open(p, O_RDONLY);
    if (fd < 0) continue;
    unsigned char h[48];
    REQUIRE(pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
    close(fd);
    uint64_t named;
    memcpy(&named, h + 24, 8);
    if (named != s) {
      spare = s;
      old = named;
    }
  }
  REQUIRE(spare != 0);
  char spare_path[4400], old_path[4400];
  segment_path(&e, spare, spare_path, sizeof spare_path);
  segment_path(&e, old, old_path, sizeof old_path);
  REQUIRE(link(spare_path, old_path) == 0);
  /* The only spare: the next checkpoint, short of spares, gives the old
   * name a future name of its own if it may. */
  for (uint64_t s = current + segment; s < current + 64 * segment; s += segment) {
    char p[4400];
    segment_path(&e, s, p, sizeof p);
    if (s != spare) unlink(p);
  }
  /* Opening alone changes nothing; work with checkpoints (which recycle the
   * old name) and then enough log to pass through every spare. */
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, rounds);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  rounds += bump_segments(&e, 6);
  env_crash(&e);
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, rounds);
  /* No file of the log has two names. */
  DIR *d = opendir(e.waldir);
  REQUIRE(d != NULL);
  for (struct dirent *x; (x = readdir(d));) {
    char p[4600];
    snprintf(p, sizeof p, "%s/%s", e.waldir, x->d_name);
    struct stat sb;
    if (strlen(x->d_name) == 16 && stat(p, &sb) == 0) CHECK_EQ(sb.st_nlink, 1);
  }
  closedir(d);
  env_close(&e);
}

/* The same state one checkpoint later (finding 1 as an older hotset left
 * it): one file under two *future* names, its header naming neither. The
 * log, ending cleanly before both, would write through the first and then
 * overwrite it through the second. The extra name goes before the first
 * write even when nothing else past the end needs clearing. */
static void test_two_future_names(uint64_t segment) {
  env e;
  env_init(&e, "twofuture", segment);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  unsigned rounds = bump_segments(&e, 3);
  CHECK_OK(hs_pool_checkpoint(e.pool)); /* old segments become spares */
  uint64_t current = hs_wal_insert_lsn(e.wal);
  current -= current % segment;
  env_close(&e); /* a clean end: nothing past it to clear */
  uint64_t spare = 0;
  for (uint64_t s = current + segment; s < current + 64 * segment; s += segment) {
    char p[4400];
    segment_path(&e, s, p, sizeof p);
    if (access(p, F_OK) != 0) continue;
    if (!spare)
      spare = s;
    else
      unlink(p); /* the only spare */
  }
  REQUIRE(spare != 0);
  char spare_path[4400], second[4400];
  segment_path(&e, spare, spare_path, sizeof spare_path);
  segment_path(&e, spare + segment, second, sizeof second);
  REQUIRE(link(spare_path, second) == 0);
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, rounds);
  rounds += bump_segments(&e, 4); /* through both names, no checkpoint */
  env_crash(&e);
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, rounds);
  env_close(&e);
}

/* A refusal during replay — here a record of a resource manager nobody
 * registered — changes nothing either: the control file is written only
 * once recovery is through (it used to be rewritten, state "in recovery",
 * before replay began). */
static void test_refused_in_replay(uint64_t segment) {
  env e;
  env_init(&e, "inreplay", segment);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  bump_all(&e, 1);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  hs_wal_page page = {.rel = REL, .fork = HS_FORK_MAIN, .block = 0};
  unsigned char payload[8] = {1};
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_FIRST_USER + 7,
                       .type = 1,
                       .npages = 1,
                       .pages = &page,
                       .data = payload,
                       .len = sizeof payload};
  hs_lsn end;
  REQUIRE(hs_wal_insert(e.wal, &rec, &end) == HS_OK);
  REQUIRE(hs_wal_flush(e.wal, end, HS_WAL_CAUSE_COMMIT, NULL) == HS_OK);
  env_crash(&e);
  uint64_t before = tree_hash(e.dir, 14695981039346656037ull);
  CHECK_ST(env_open(&e), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "not registered");
  CHECK_EQ(tree_hash(e.dir, 14695981039346656037ull), before);
}

/* Finding 5: a directory knows its page size. */
static void test_page_size(void) {
  env e;
  env_init(&e, "pagesize", 1u << 20);
  REQUIRE(env_open_with(&e, e.waldir, 8192) == HS_OK);
  CHECK_EQ(hs_control_read(e.dir, &(hs_control){0}), HS_OK);
  hs_smgr *smgr = hs_pool_smgr(e.pool);
  REQUIRE(hs_smgr_create_if_missing(smgr, REL, HS_FORK_MAIN, NULL) == HS_OK);
  env_close(&e);
  CHECK_ST(env_open_with(&e, e.waldir, 16384), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "8192");
  CHECK_CONTAINS(hs_last_error(), "16384");
  REQUIRE(env_open_with(&e, e.waldir, 0) == HS_OK); /* 0: the directory's */
  CHECK_EQ(hs_pool_page_size(e.pool), 8192);
  env_close(&e);
  hs_control c = control_of(&e);
  CHECK_EQ(c.page_size, 8192);
  CHECK(c.checksums);
  CHECK_EQ(c.format, HS_CONTROL_FORMAT);
  /* A damaged control file is refused, naming it. */
  char control[4400];
  snprintf(control, sizeof control, "%s/%s", e.dir, HS_CONTROL_FILE);
  int fd = open(control, O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char x = 0xFF;
  REQUIRE(pwrite(fd, &x, 1, 14) == 1);
  close(fd);
  CHECK_ST(env_open_with(&e, e.waldir, 0), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), HS_CONTROL_FILE);
}

/* Called by a checkpoint right after it collected the dirty buffers: a
 * change logged (and flushed) now lies between the checkpoint's redo point
 * and its record, on a page the checkpoint does not write. */
static env *changed_during_checkpoint;
static void change_after_collect(hs_pool *pool, void *ctx) {
  (void)pool;
  (void)ctx;
  seams.pool_collected = NULL; /* once */
  bump(changed_during_checkpoint, BLOCKS - 1);
}

/* A control file that passes its CRC but names a redo point other than the
 * one its checkpoint record carries (another program wrote it, or a bug):
 * one of the two is wrong, and opening cannot tell which. Trusting a later
 * one skips what was logged while that checkpoint ran — here the last
 * block's change, acknowledged, on a page the checkpoint had not collected
 * — and the open used to return HS_OK without it. Refused, changing
 * nothing; with the control file put right, everything is there. */
static void test_redo_disagrees(void) {
  env e;
  env_init(&e, "redo", 1u << 20);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  bump_all(&e, 2);
  CHECK_OK(hs_pool_checkpoint(e.pool)); /* every block clean */
  for (hs_blockno i = 0; i + 1 < BLOCKS; i++) bump(&e, i);
  changed_during_checkpoint = &e;
  seams.pool_collected = change_after_collect;
  CHECK_OK(hs_pool_checkpoint(e.pool));
  REQUIRE(seams.pool_collected == NULL); /* the last block was changed inside it */
  env_crash(&e);
  hs_control c = control_of(&e);
  REQUIRE(c.has_checkpoint && c.redo < c.checkpoint); /* that change lies between */
  char control[4400], saved[4400];
  snprintf(control, sizeof control, "%s/%s", e.dir, HS_CONTROL_FILE);
  snprintf(saved, sizeof saved, "%s.saved", e.dir);
  copy_file(control, saved);
  hs_control later = c;
  later.redo = c.checkpoint; /* a record's start: replay could begin there */
  REQUIRE(control_write(e.dir, &later) == HS_OK);
  uint64_t before = tree_hash(e.dir, 14695981039346656037ull);
  hs_status st = env_open(&e);
  CHECK_ST(st, HS_ERR_CORRUPT);
  if (st == HS_OK) { /* what trusting it costs: the last block's change */
    check_counters(&e, 3);
    env_close(&e);
  } else {
    CHECK_CONTAINS(hs_last_error(), "redo point");
    CHECK_CONTAINS(hs_last_error(), "reset-log");
    CHECK_EQ(tree_hash(e.dir, 14695981039346656037ull), before);
  }
  copy_file(saved, control);
  unlink(saved);
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, 3);
  env_close(&e);
}

/* Opens a pool over `dir` without a log. */
static hs_status open_without_log(const char *dir, uint32_t page_size, bool checksums,
                                  hs_pool **pool) {
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.page_size = page_size;
  po.pool_pages = 16;
  po.checksums = checksums;
  return hs_pool_open(&po, pool);
}

#define WRITTEN_AT 100u
static const char written[] = "block one, as written";

/* A directory never opened with a log keeps its page size and checksums
 * once it holds a relation file: adopting the option's instead would read
 * 8 KiB pages as 16 KiB ones (the wrong blocks' bytes), or pages with
 * checksums as pages without. Refused, changing nothing. A directory where
 * nothing depends on them yet takes the option's. */
static void test_page_size_without_log(void) {
  char dir[4200], fresh[4200];
  snprintf(dir, sizeof dir, "%s/nolog", root);
  snprintf(fresh, sizeof fresh, "%s/nolog-empty", root);
  mkdir(dir, 0700);
  mkdir(fresh, 0700);
  hs_pool *pool;
  REQUIRE(open_without_log(dir, 8192, true, &pool) == HS_OK);
  REQUIRE(hs_smgr_create_if_missing(hs_pool_smgr(pool), REL, HS_FORK_MAIN, NULL) == HS_OK);
  for (hs_blockno n = 0; n < 2; n++) {
    hs_buf b;
    REQUIRE(hs_pool_extend(pool, REL, HS_FORK_MAIN, NULL, true, &b, NULL) == HS_OK);
    if (n == 1) {
      memcpy((char *)hs_buf_page(pool, b) + WRITTEN_AT, written, sizeof written);
      CHECK_OK(hs_buf_mark_dirty(pool, b, 0, NULL));
    }
    hs_buf_unlock(pool, b);
    hs_buf_release(pool, b);
  }
  CHECK_OK(hs_pool_close(pool));
  hs_control c;
  REQUIRE(hs_control_read(dir, &c) == HS_OK);
  REQUIRE(c.segment_bytes == 0 && c.page_size == 8192 && c.checksums);

  uint64_t before = tree_hash(dir, 14695981039346656037ull);
  hs_status st = open_without_log(dir, 16384, true, &pool);
  CHECK_ST(st, HS_ERR_INVALID);
  if (st == HS_OK) CHECK_OK(hs_pool_close(pool));
  CHECK_CONTAINS(hs_last_error(), "8192");
  CHECK_CONTAINS(hs_last_error(), "16384");
  CHECK_CONTAINS(hs_last_error(), "option page_size"); /* the control file's refusal */
  st = open_without_log(dir, 8192, false, &pool);
  CHECK_ST(st, HS_ERR_INVALID);
  if (st == HS_OK) CHECK_OK(hs_pool_close(pool));
  CHECK_CONTAINS(hs_last_error(), "checksums");
  CHECK_EQ(tree_hash(dir, 14695981039346656037ull), before);

  REQUIRE(open_without_log(dir, 0, true, &pool) == HS_OK);
  CHECK_EQ(hs_pool_page_size(pool), 8192);
  hs_buf b;
  REQUIRE(hs_pool_read(pool, REL, HS_FORK_MAIN, 1, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
  CHECK(memcmp((char *)hs_buf_page(pool, b) + WRITTEN_AT, written, sizeof written) == 0);
  hs_buf_release(pool, b);
  CHECK_OK(hs_pool_close(pool));

  /* The control file lost: opened with its page size, the directory gets a
   * new one whose system keeps the mark its pages carry, so they are still
   * its own (not "written by another data directory"). */
  char control[4400];
  snprintf(control, sizeof control, "%s/%s", dir, HS_CONTROL_FILE);
  REQUIRE(unlink(control) == 0);
  REQUIRE(open_without_log(dir, 8192, true, &pool) == HS_OK);
  st = hs_pool_read(pool, REL, HS_FORK_MAIN, 1, HS_READ_NORMAL, NULL, &b, NULL);
  CHECK_OK(st);
  if (st == HS_OK) {
    CHECK(memcmp((char *)hs_buf_page(pool, b) + WRITTEN_AT, written, sizeof written) == 0);
    hs_buf_release(pool, b);
  }
  CHECK_OK(hs_pool_close(pool));
  CHECK_EQ(hs_page_system_tag(control_of_dir(dir).system_id), hs_page_system_tag(c.system_id));

  /* Nothing stored yet: the options win, and the control file says so. */
  REQUIRE(open_without_log(fresh, 8192, true, &pool) == HS_OK);
  CHECK_OK(hs_pool_close(pool));
  REQUIRE(open_without_log(fresh, 16384, false, &pool) == HS_OK);
  CHECK_EQ(hs_pool_page_size(pool), 16384);
  CHECK_OK(hs_pool_close(pool));
  REQUIRE(hs_control_read(fresh, &c) == HS_OK);
  CHECK_EQ(c.page_size, 16384);
  CHECK(!c.checksums);
}

/* A relation file replaced by an older or zeroed copy of itself, of the
 * same size, in a directory shut down cleanly: every page passes its
 * checksum and carries this directory's mark, but the page the last
 * checkpoint wrote newest is older than it wrote it — every read of the
 * file is refused, naming it and the way out. Shut down and opened again
 * many times with nothing replaced, nothing is refused; and once the file
 * is right again, everything is there. */
static void test_older_copy(void) {
  env e;
  env_init(&e, "older", 1u << 20);
  REQUIRE(env_open(&e) == HS_OK);
  make_relation(&e);
  bump_all(&e, 1);
  env_close(&e);
  char rel[4400], saved[4400], zeroed[4400];
  snprintf(rel, sizeof rel, "%s/%u", e.dir, REL);
  snprintf(saved, sizeof saved, "%s/older.saved", root);
  snprintf(zeroed, sizeof zeroed, "%s/zeroed.saved", root);
  copy_file(rel, saved);
  for (int round = 0; round < 5; round++) { /* marks move on; never a false refusal */
    REQUIRE(env_open(&e) == HS_OK);
    bump_all(&e, 1);
    if (round % 2) CHECK_OK(hs_pool_checkpoint(e.pool));
    env_close(&e);
  }
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, 6);
  env_close(&e);
  char current[4400];
  snprintf(current, sizeof current, "%s/current.saved", root);
  copy_file(rel, current);
  copy_file(saved, rel);
  REQUIRE(env_open(&e) == HS_OK); /* the open reads no page of it */
  hs_buf b;
  CHECK_ST(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &b, NULL),
           HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "is an older or zeroed copy of itself");
  char way_out[4600];
  snprintf(way_out, sizeof way_out, "`hotset relations --dir %s --forget %u --force`", e.dir, REL);
  CHECK_CONTAINS(hs_last_error(), way_out);
  env_crash(&e);
  /* After a crash the open replays, and cannot tell an old page from one a
   * cut-short recovery wrote back; the list remembers the file is stale. */
  REQUIRE(env_open(&e) == HS_OK);
  CHECK_ST(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 5, HS_READ_NORMAL, NULL, &b, NULL),
           HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "older or zeroed copy");
  env_close(&e);
  /* Zeroed, the same size. */
  struct stat sb;
  REQUIRE(stat(rel, &sb) == 0);
  int fd = open(rel, O_WRONLY | O_TRUNC);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, sb.st_size) == 0);
  close(fd);
  REQUIRE(env_open(&e) == HS_OK);
  CHECK_ST(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 3, HS_READ_NORMAL, NULL, &b, NULL),
           HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "older or zeroed copy");
  env_crash(&e);
  /* The file put back: found as new as its mark, at any open. */
  copy_file(current, rel);
  REQUIRE(env_open(&e) == HS_OK);
  check_counters(&e, 6);
  env_close(&e);
}

int main(void) {
  testdir_make(root, sizeof root, "refusals");
  test_older_copy();
  test_page_size();
  test_page_size_without_log();
  test_redo_disagrees();
  uint64_t max = check_max_segment("test_recovery_refusals", HS_WAL_MAX_SEGMENT);
  for (uint64_t seg = HS_WAL_MIN_SEGMENT; seg <= max; seg *= 2) {
    test_damaged_checkpoint(seg);
    test_stale_control(seg);
    /* The other refusals do not depend on where segments end: every size
     * up to 16 MiB (the default) and the largest. */
    if (seg <= (16u << 20) || seg == max) {
      test_other_system(seg);
      test_page_past_log(seg);
    }
    /* The log's own damage: where records fall against segment ends
     * matters, not the segments' size (each case fills several of them
     * with small, each-flushed records). */
    if (seg <= (128u << 10)) {
      test_mid_log_damage(seg);
      test_damage_before_redo(seg);
      test_two_names(seg);
      test_two_future_names(seg);
      test_refused_in_replay(seg);
    }
    /* The big segments' directories go as soon as they are done. */
    remove_dir(root);
    mkdir(root, 0700);
  }
  testdir_remove(root);
  return check_finish();
}

/*
 * tests/test_relation_files.c — a data directory knows the relation files
 * it must hold (hotset/storage.h, HS_SMGR_RELATIONS_FILE; docs/buffer-pool.md
 * "The files a directory must hold").
 *
 * Issue 37's finding 3: on a cleanly closed directory, deleting or emptying
 * the commit log or the primary-key index made the open return HS_OK with
 * every row invisible. Here, for the commit log, the index and a heap's main
 * fork, each removed, emptied or cut by one block, on a directory shut down
 * cleanly and on one whose process was killed (SIGKILL) after a
 * checkpoint: hs_pool_open refuses with HS_ERR_CORRUPT naming the file,
 * changes nothing on disk (bytes, sizes and modification times), and both
 * ways out work — the file put back opens with every acknowledged row, and
 * the command the message prints (run as printed, by the hotset binary
 * given as argv[1]) lets the directory open.
 *
 * And no false refusals: a relation dropped and another truncated through
 * the API just before a crash open again. A lost or damaged list is refused
 * (the control file says there is one), and its printed way out runs; a
 * directory from before lists gets one at its first open.
 */
#include "check.h"
#include "core/error.h"
#include "crash/powercut.h"
#include "heap_env.h"
#include "hotset/control.h"
#include "killed_child.h"
#include "storage/catalog.h"
#include "storage/control_file.h"
#include "storage/smgr_catalog.h"
#include "testdir.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEAP_REL    20u
#define INDEX_REL   21u
#define DROPPED_REL 30u
#define CUT_REL     31u
#define ROWS        400u
#define DELETED     10u /* rows deleted after the crashed child's checkpoint */
#define KEY_STRIDE  61u /* spreads the keys over many index pages */
#define POOL_PAGES  64u

static char root[4096];
static const char *hotset;

/* ---- the directory's contents ------------------------------------------ */

static hs_status open_env(heap_env *e, const char *dir) {
  hs_status st = heap_env_open(e, dir, POOL_PAGES, HEAP_REL, INDEX_REL);
  if (st != HS_OK) {
    /* A refused open leaves the log open: close it, keep the message. */
    char why[1536];
    snprintf(why, sizeof why, "%s", hs_last_error());
    hs_pk_index_close(e->ix);
    hs_heap_close(e->h);
    hs_xact_close(e->x);
    if (e->pool) hs_pool_abandon(e->pool);
    if (e->wal) hs_wal_close(e->wal);
    hs_fail(st, 0, "%s", why);
  }
  return st;
}

/* Row k's key: spread over many index pages. */
static uint64_t key_of(uint32_t k) {
  return (uint64_t)(k + 1) * KEY_STRIDE;
}

/* Rows [from, to), each its own transaction; a row starts with its key. */
static bool fill(heap_env *e, uint32_t from, uint32_t to) {
  for (uint32_t k = from; k < to; k++) {
    char row[100];
    memset(row, 'r', sizeof row);
    uint64_t key = key_of(k);
    memcpy(row, &key, sizeof key);
    hs_xid x;
    hs_tid tid;
    if (hs_xact_begin(e->x, &x) != HS_OK ||
        hs_heap_insert(e->h, x, row, sizeof row, &tid) != HS_OK ||
        hs_pk_index_insert(e->ix, key_of(k), tid) != HS_OK || hs_xact_commit(e->x, x) != HS_OK)
      return false;
  }
  return true;
}

/* Deletes rows [0, n), each its own transaction. */
static bool delete_first(heap_env *e, uint32_t n) {
  for (uint32_t k = 0; k < n; k++) {
    hs_xid x;
    hs_tid tid;
    bool found;
    if (hs_xact_begin(e->x, &x) != HS_OK ||
        hs_pk_index_get(e->ix, key_of(k), &tid, &found) != HS_OK || !found ||
        hs_heap_delete(e->h, x, tid) != HS_OK || hs_xact_commit(e->x, x) != HS_OK)
      return false;
  }
  return true;
}

/* How many of rows [0, ROWS) a new snapshot sees. */
static uint32_t visible_rows(heap_env *e) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < ROWS; k++) {
    char buf[128];
    uint32_t len;
    bool found = false;
    hs_tid tid;
    if (heap_env_lookup(e, key_of(k), NULL, 0, &tid, buf, sizeof buf, &len, &found) == HS_OK &&
        found)
      n++;
  }
  return n;
}

/* The crashed state: every row committed, a checkpoint, DELETED rows
 * deleted and committed (replay has those to do), then SIGKILL. */
static void crashing_child(void *ctx, int out) {
  (void)out;
  heap_env e;
  if (open_env(&e, ctx) != HS_OK || !fill(&e, 0, ROWS) || hs_pool_checkpoint(e.pool) != HS_OK ||
      !delete_first(&e, DELETED))
    _exit(3);
}

/* A directory holding ROWS rows; returns how many must be visible. */
static uint32_t populate(const char *dir, bool crashed) {
  REQUIRE(mkdir(dir, 0700) == 0);
  if (crashed) {
    REQUIRE(run_killed_child(crashing_child, (void *)dir, NULL, 0));
    return ROWS - DELETED;
  }
  heap_env e;
  REQUIRE(open_env(&e, dir) == HS_OK);
  REQUIRE(fill(&e, 0, ROWS));
  heap_env_close(&e);
  return ROWS;
}

/* ---- files -------------------------------------------------------------- */

/* A hash of every file under `path`: names, sizes, modification times and
 * bytes (lock files, whose pid changes with each opener, left out) — what
 * "the refusal changed nothing" compares. */
static uint64_t tree_hash(const char *path, uint64_t h) {
  DIR *d = opendir(path);
  if (!d) return h;
  char *names[256];
  size_t n = 0;
  for (struct dirent *x; (x = readdir(d)) && n < 256;)
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
    REQUIRE(lstat(p, &sb) == 0);
    if (S_ISDIR(sb.st_mode)) {
      h = tree_hash(p, h);
    } else {
      h = (h ^ (uint64_t)sb.st_size) * 1099511628211ull;
      h = (h ^ (uint64_t)sb.st_mtim.tv_sec) * 1099511628211ull;
      h = (h ^ (uint64_t)sb.st_mtim.tv_nsec) * 1099511628211ull;
      int fd = open(p, O_RDONLY);
      for (ssize_t got; fd >= 0 && (got = read(fd, buf, sizeof buf)) > 0;)
        for (ssize_t k = 0; k < got; k++) h = (h ^ buf[k]) * 1099511628211ull;
      if (fd >= 0) close(fd);
    }
    free(names[i]);
  }
  return h;
}

static uint64_t dir_hash(const char *dir) {
  return tree_hash(dir, 14695981039346656037ull);
}

static void copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(in >= 0 && out >= 0);
  char buf[1 << 16];
  for (ssize_t got; (got = read(in, buf, sizeof buf)) != 0;) {
    REQUIRE(got > 0);
    REQUIRE(write(out, buf, (size_t)got) == got);
  }
  close(in);
  close(out);
}

static off_t file_size(const char *path) {
  struct stat sb;
  REQUIRE(stat(path, &sb) == 0);
  return sb.st_size;
}

typedef enum damage { REMOVED, EMPTIED, ONE_BLOCK_SHORT, DAMAGE_COUNT } damage;
static const char *const damage_names[DAMAGE_COUNT] = {"removed", "emptied", "one block short"};

static void apply(damage d, const char *path) {
  if (d == REMOVED) {
    REQUIRE(unlink(path) == 0);
    return;
  }
  off_t size = file_size(path);
  REQUIRE(size >= HS_PAGE_SIZE_DEFAULT);
  REQUIRE(truncate(path, d == EMPTIED ? 0 : size - HS_PAGE_SIZE_DEFAULT) == 0);
}

/* Runs the command between the backticks of `msg` that starts with
 * "hotset relations", as printed (the hotset under test in place of the
 * word "hotset"); returns its exit status, or -1 if there is none. */
static int run_hint(const char *msg) {
  const char *start = strstr(msg, "`hotset relations");
  if (!start) return -1;
  start += strlen("`hotset");
  const char *end = strchr(start, '`');
  if (!end) return -1;
  char command[8192];
  snprintf(command, sizeof command, "'%s'%.*s >/dev/null", hotset, (int)(end - start), start);
  int rc = system(command);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* ---- the cases ---------------------------------------------------------- */

typedef struct target {
  const char *name;
  hs_relid rel;
} target;
static const target targets[] = {
    {"commit log", HS_XACT_CLOG_REL}, {"index", INDEX_REL}, {"heap", HEAP_REL}};

/* One file, one damage, one state: refused naming the file with nothing
 * changed; the file put back, every row is there; damaged again, the
 * printed way out lets it open. */
static void test_case(const target *t, damage d, bool crashed) {
  char dir[4400], path[4600], saved[4600], name[32];
  /* Spaces in the directory's name: the hint must still run as printed. */
  snprintf(dir, sizeof dir, "%s/%s %s %s", root, t->name, damage_names[d],
           crashed ? "crashed" : "clean");
  uint32_t want = populate(dir, crashed);
  hs_smgr_fork_filename(t->rel, HS_FORK_MAIN, name, sizeof name);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(saved, sizeof saved, "%s.saved", dir);
  copy_file(path, saved);

  apply(d, path);
  uint64_t before = dir_hash(dir);
  heap_env e;
  hs_status st = open_env(&e, dir);
  CHECK_EQ(st, HS_ERR_CORRUPT);
  if (st == HS_OK) { /* the defect: opened, with the rows gone */
    fprintf(stderr, "%s %s (%s): opened with %u of %u rows visible\n", t->name, damage_names[d],
            crashed ? "crashed" : "clean", visible_rows(&e), want);
    heap_env_close(&e);
    return;
  }
  char msg[1536];
  snprintf(msg, sizeof msg, "%s", hs_last_error());
  CHECK_CONTAINS(msg, path);
  CHECK_CONTAINS(msg, d == REMOVED ? "is missing" : " bytes, but ");
  CHECK_CONTAINS(msg, "restore it");
  CHECK_EQ(dir_hash(dir), before); /* the refusal changed nothing */

  /* The file put back: everything acknowledged is there. */
  copy_file(saved, path);
  REQUIRE(open_env(&e, dir) == HS_OK);
  CHECK_EQ(visible_rows(&e), want);
  heap_env_close(&e);

  /* Damaged again, and the loss accepted with the command printed. */
  apply(d, path);
  CHECK_ST(open_env(&e, dir), HS_ERR_CORRUPT);
  snprintf(msg, sizeof msg, "%s", hs_last_error());
  CHECK_EQ(run_hint(msg), 0);
  CHECK_OK(open_env(&e, dir));
  if (e.pool) heap_env_close(&e);
  unlink(saved);
}

/* In the child: a heap dropped, and a relation cut, through the API after
 * the checkpoint that recorded their sizes; then one more row committed,
 * and SIGKILL before any other checkpoint. */
static void drop_then_crash_child(void *ctx, int out) {
  (void)out;
  heap_env e;
  hs_heap *other;
  if (open_env(&e, ctx) != HS_OK || !fill(&e, 0, ROWS / 2) ||
      hs_heap_open(e.pool, e.x, DROPPED_REL, &other) != HS_OK)
    _exit(3);
  for (int i = 0; i < 200; i++) {
    hs_xid x;
    hs_tid tid;
    char row[100] = "doomed: not an indexed heap";
    if (hs_xact_begin(e.x, &x) != HS_OK || hs_heap_insert(other, x, row, sizeof row, &tid) ||
        hs_xact_commit(e.x, x) != HS_OK)
      _exit(4);
  }
  hs_smgr *smgr = hs_pool_smgr(e.pool);
  if (hs_smgr_create(smgr, CUT_REL, HS_FORK_MAIN) != HS_OK) _exit(5);
  for (int i = 0; i < 6; i++) {
    hs_buf b;
    if (hs_pool_extend(e.pool, CUT_REL, HS_FORK_MAIN, NULL, false, &b, NULL) != HS_OK) _exit(6);
    hs_buf_release(e.pool, b);
  }
  if (hs_pool_checkpoint(e.pool) != HS_OK) _exit(7);
  hs_heap_close(other);
  if (hs_pool_drop_relation(e.pool, DROPPED_REL) != HS_OK) _exit(8);
  for (int f = HS_FORK_MAIN; f <= HS_FORK_VM; f++)
    if (hs_smgr_unlink(smgr, DROPPED_REL, (hs_fork)f) != HS_OK) _exit(9);
  if (hs_pool_drop_relation(e.pool, CUT_REL) != HS_OK ||
      hs_smgr_truncate(smgr, CUT_REL, HS_FORK_MAIN, 2) != HS_OK)
    _exit(10);
  if (!fill(&e, ROWS / 2, ROWS / 2 + 1)) _exit(11);
}

static void test_drop_then_crash(void) {
  char dir[4400];
  snprintf(dir, sizeof dir, "%s/dropped", root);
  REQUIRE(mkdir(dir, 0700) == 0);
  REQUIRE(run_killed_child(drop_then_crash_child, dir, NULL, 0));
  heap_env e;
  hs_status st = open_env(&e, dir);
  if (st != HS_OK) fprintf(stderr, "reopening after a drop and a crash: %s\n", hs_last_error());
  CHECK_OK(st);
  if (st != HS_OK) return;
  CHECK_EQ(visible_rows(&e), ROWS / 2 + 1);
  heap_env_close(&e);
}

/* The list itself removed, or damaged: refused naming it (the control file
 * says the directory keeps one), nothing changed; the printed way out
 * writes a new one and the directory opens with every row. */
static void test_list_lost(bool removed) {
  char dir[4400], list[4600];
  snprintf(dir, sizeof dir, "%s/list %s", root, removed ? "removed" : "damaged");
  populate(dir, false);
  snprintf(list, sizeof list, "%s/%s", dir, HS_SMGR_RELATIONS_FILE);
  if (removed) {
    REQUIRE(unlink(list) == 0);
  } else {
    int fd = open(list, O_RDWR);
    REQUIRE(fd >= 0);
    unsigned char c;
    REQUIRE(pread(fd, &c, 1, 22) == 1);
    c ^= 0x01;
    REQUIRE(pwrite(fd, &c, 1, 22) == 1);
    close(fd);
  }
  uint64_t before = dir_hash(dir);
  heap_env e;
  hs_status st = open_env(&e, dir);
  CHECK_EQ(st, HS_ERR_CORRUPT);
  if (st == HS_OK) {
    heap_env_close(&e);
    return;
  }
  char msg[1536];
  snprintf(msg, sizeof msg, "%s", hs_last_error());
  CHECK_CONTAINS(msg, list);
  CHECK_CONTAINS(msg, removed ? "is missing" : "is damaged");
  CHECK_EQ(dir_hash(dir), before);
  CHECK_EQ(run_hint(msg), 0);
  REQUIRE(open_env(&e, dir) == HS_OK);
  CHECK_EQ(visible_rows(&e), ROWS);
  heap_env_close(&e);
}

/* A directory from before lists (no list, no flag in its control file):
 * it opens, and leaves with a list and the flag; removing a file is then
 * refused. */
static void test_old_directory(void) {
  char dir[4400], list[4600], clog[4600], name[32];
  snprintf(dir, sizeof dir, "%s/old", root);
  populate(dir, false);
  snprintf(list, sizeof list, "%s/%s", dir, HS_SMGR_RELATIONS_FILE);
  REQUIRE(unlink(list) == 0);
  hs_control c;
  REQUIRE(hs_control_read(dir, &c) == HS_OK);
  CHECK(c.has_catalog);
  c.has_catalog = false;
  REQUIRE(control_write(dir, &c) == HS_OK);
  heap_env e;
  REQUIRE(open_env(&e, dir) == HS_OK);
  CHECK_EQ(visible_rows(&e), ROWS);
  REQUIRE(hs_control_read(dir, &c) == HS_OK);
  CHECK(c.has_catalog);
  CHECK(access(list, F_OK) == 0);
  heap_env_close(&e);
  hs_smgr_fork_filename(HS_XACT_CLOG_REL, HS_FORK_MAIN, name, sizeof name);
  snprintf(clog, sizeof clog, "%s/%s", dir, name);
  REQUIRE(unlink(clog) == 0);
  hs_status st = open_env(&e, dir);
  CHECK_EQ(st, HS_ERR_CORRUPT);
  if (st == HS_OK)
    heap_env_close(&e);
  else
    CHECK_CONTAINS(hs_last_error(), clog);
}

typedef struct first_problem_ctx {
  bool have;
  catalog_problem p;
} first_problem_ctx;

static void note_problem(void *ctx, const catalog_problem *p) {
  first_problem_ctx *f = ctx;
  if (!f->have) f->p = *p;
  f->have = true;
}

/* ---- creating beside checkpoints ----------------------------------------- */

#define CREATORS       3
#define CREATES_EACH   24
#define FIRST_NEW_REL  1000u
#define BLOCKS_PER_REL 3u

typedef struct creator {
  hs_pool *pool;
  int id;
  atomic_int *running;
  unsigned failures; /* counted here: check.h's counters are the main thread's */
} creator;

static hs_relid created_rel(int id, int i) {
  return FIRST_NEW_REL + (hs_relid)(id * CREATES_EACH + i);
}

static void *creator_main(void *arg) {
  creator *c = arg;
  hs_smgr *smgr = hs_pool_smgr(c->pool);
  for (int i = 0; i < CREATES_EACH; i++) {
    hs_relid rel = created_rel(c->id, i);
    bool created;
    if (hs_smgr_create_if_missing(smgr, rel, HS_FORK_MAIN, &created) != HS_OK || !created)
      c->failures++;
    for (unsigned b = 0; b < BLOCKS_PER_REL; b++) {
      hs_buf buf;
      if (hs_pool_extend(c->pool, rel, HS_FORK_MAIN, NULL, false, &buf, NULL) != HS_OK)
        c->failures++;
      else
        hs_buf_release(c->pool, buf);
    }
  }
  atomic_fetch_sub(c->running, 1);
  return NULL;
}

/* Relations created and grown from three threads while checkpoints record
 * sizes: the list ends up naming each with its size, and a crash (the pool
 * abandoned) right after opens again. */
static void test_create_beside_checkpoints(void) {
  char dir[4400];
  snprintf(dir, sizeof dir, "%s/creators", root);
  REQUIRE(mkdir(dir, 0700) == 0);
  heap_env e;
  REQUIRE(heap_env_open(&e, dir, POOL_PAGES, 0, 0) == HS_OK);
  atomic_int running = CREATORS;
  creator cs[CREATORS];
  pthread_t th[CREATORS];
  for (int i = 0; i < CREATORS; i++) {
    cs[i] = (creator){.pool = e.pool, .id = i, .running = &running};
    REQUIRE(pthread_create(&th[i], NULL, creator_main, &cs[i]) == 0);
  }
  unsigned checkpoints = 0;
  while (atomic_load(&running) > 0) {
    CHECK_OK(hs_pool_checkpoint(e.pool));
    checkpoints++;
  }
  for (int i = 0; i < CREATORS; i++) {
    REQUIRE(pthread_join(th[i], NULL) == 0);
    CHECK_EQ(cs[i].failures, 0);
  }
  CHECK_OK(hs_pool_checkpoint(e.pool));
  catalog list;
  REQUIRE(catalog_read(dir, &list) == HS_OK);
  for (int id = 0; id < CREATORS; id++)
    for (int i = 0; i < CREATES_EACH; i++) {
      catalog_entry *en = catalog_find(&list, created_rel(id, i), HS_FORK_MAIN);
      CHECK(en != NULL);
      if (en) CHECK_EQ(en->min_blocks, BLOCKS_PER_REL);
    }
  CHECK_EQ(catalog_check(dir, &list, NULL, NULL), 0);
  catalog_free(&list);
  hs_xact_close(e.x);
  hs_pool_abandon(e.pool);
  CHECK_OK(hs_wal_close(e.wal));
  REQUIRE(heap_env_open(&e, dir, POOL_PAGES, 0, 0) == HS_OK);
  heap_env_close(&e);
  printf("%d relations created by %d threads beside %u checkpoints, all listed\n",
         CREATORS * CREATES_EACH, CREATORS, checkpoints);
}

/* ---- power cuts: the list never asks for more than a cut leaves ----------- */

#define CUT_SEEDS 12u
static char cut_dir[4400], cut_journal[4500];

/* What a pool's storage manager does to the list, in the order a pool does
 * it: the list started, a relation created, grown, its size recorded (a
 * checkpoint), another created, the first cut, the second removed. */
static void list_changes(void) {
  hs_smgr *smgr;
  if (hs_smgr_open(cut_dir, &(hs_smgr_options){.page_size = 4096}, &smgr) != HS_OK ||
      hs_smgr_lock_dir(smgr) != HS_OK || smgr_catalog_adopt(smgr) != HS_OK ||
      hs_smgr_create(smgr, 5, HS_FORK_MAIN) != HS_OK)
    _exit(2);
  for (int i = 0; i < 4; i++)
    if (hs_smgr_extend(smgr, 5, HS_FORK_MAIN, NULL, NULL) != HS_OK) _exit(3);
  bool created;
  if (smgr_catalog_record_sizes(smgr) != HS_OK ||
      hs_smgr_create_if_missing(smgr, 6, HS_FORK_MAIN, &created) != HS_OK || !created ||
      hs_smgr_extend(smgr, 6, HS_FORK_MAIN, NULL, NULL) != HS_OK ||
      smgr_catalog_record_sizes(smgr) != HS_OK || hs_smgr_truncate(smgr, 5, HS_FORK_MAIN, 1) ||
      hs_smgr_unlink(smgr, 6, HS_FORK_MAIN) != HS_OK || smgr_catalog_record_sizes(smgr) != HS_OK)
    _exit(4);
  hs_smgr_close(smgr);
}

/* Runs list_changes in a fresh directory, in a child whose recorder cuts
 * at operation `cut_at` (0: never). */
static void changes_cut_at(uint64_t cut_at) {
  char cmd[9200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir '%s'", cut_dir, cut_dir);
  REQUIRE(system(cmd) == 0);
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    pc_arm arm = {.root = cut_dir, .journal = cut_journal, .cut_at = cut_at, .skip_syncs = true};
    if (pc_arm_recorder(&arm) != HS_OK) _exit(1);
    list_changes();
    _exit(0);
  }
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK_EQ(WEXITSTATUS(status), cut_at ? PC_CUT_EXIT : 0);
}

/* After a power cut at each operation, under each seed's choice of what
 * unsynced state survives: the list is readable (or not there yet) and
 * every file it names is there with at least the blocks it says. A list
 * written before the file (or its directory entry, or its growth) was
 * durable fails here. */
static void test_power_cuts(void) {
  snprintf(cut_dir, sizeof cut_dir, "%s/power cuts", root);
  snprintf(cut_journal, sizeof cut_journal, "%s/power cuts.journal", root);
  changes_cut_at(0);
  pc_result whole;
  REQUIRE(pc_apply(cut_dir, cut_journal, 1, false, &whole) == HS_OK);
  REQUIRE(whole.operations > 10);
  uint64_t cuts = 0, lists = 0;
  for (uint64_t at = 1; at <= whole.operations; at++)
    for (uint64_t seed = 1; seed <= CUT_SEEDS; seed++) {
      changes_cut_at(at);
      pc_result r;
      REQUIRE(pc_apply(cut_dir, cut_journal, seed, false, &r) == HS_OK);
      cuts++;
      catalog list;
      hs_status st = catalog_read(cut_dir, &list);
      if (st != HS_ERR_NOENT) CHECK_OK(st);
      if (st == HS_OK) {
        lists++;
        first_problem_ctx first = {0};
        if (catalog_check(cut_dir, &list, note_problem, &first) != 0) {
          char what[9000];
          catalog_describe(cut_dir, &list, &first.p, what, sizeof what);
          fprintf(stderr, "cut at operation %" PRIu64 " of %" PRIu64 ", seed %" PRIu64 ": %s\n", at,
                  whole.operations, seed, what);
          CHECK(false);
        }
      }
      catalog_free(&list);
    }
  printf("power cuts: %" PRIu64 " (%" PRIu64 " operations x %u seeds), %" PRIu64
         " with a list, no list asking for what the cut took\n",
         cuts, whole.operations, CUT_SEEDS, lists);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_relation_files PATH/TO/hotset\n");
    return 2;
  }
  hotset = argv[1];
  testdir_make(root, sizeof root, "relfiles");
  for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++)
    for (int d = 0; d < DAMAGE_COUNT; d++)
      for (int crashed = 0; crashed < 2; crashed++) test_case(&targets[t], (damage)d, crashed);
  test_drop_then_crash();
  test_list_lost(true);
  test_list_lost(false);
  test_old_directory();
  test_create_beside_checkpoints();
  test_power_cuts();
  testdir_remove(root);
  return check_finish();
}

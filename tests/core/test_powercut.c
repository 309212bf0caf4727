/*
 * test_powercut — the power-cut recorder and applier (crash/powercut.h):
 *
 *  - a write made durable by fsync is never lost; an unsynced one is, over
 *    the seeds, sometimes kept, sometimes dropped, sometimes torn (some of
 *    its 512-byte sectors old, others new), and each sector holds one
 *    whole version;
 *  - a rename followed by a directory fsync always survives; one not
 *    followed by it is sometimes undone (the old name back);
 *  - an unlink not followed by a directory fsync may be undone, the file
 *    back with its content;
 *  - growth not synced is sometimes cut back, to a sector boundary;
 *  - cut at operation N: the Nth change is not made and the process exits
 *    with PC_CUT_EXIT;
 *  - the directory model: a new name (create), a rename, a link and an
 *    unlink are each undone by some seed unless their directory was
 *    fsynced after them — whatever fsyncs the file itself got, and an
 *    fsync of another directory does not count — and by no seed once it
 *    was;
 *  - aimed at the kth directory operation (of some kinds, from arming or
 *    inside a checkpoint's mark), the cut stops that one and the journal
 *    names its kind: a cut at the unlink after a link leaves one file
 *    under two names.
 * Each case runs the changes in a forked child (armed there only), then
 * applies the journal in the parent; seeds are fixed.
 */
#include "check.h"
#include "core/seams.h"
#include "core/sysio.h"
#include "crash/powercut.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEEDS 64
#define SIZE  8192

static char root[256], journal[300];

static void path_of(const char *name, char *out) {
  snprintf(out, 512, "%s/%s", root, name);
}

static void write_file(const char *name, char fill, size_t len) {
  char p[512];
  path_of(name, p);
  char *buf = malloc(len ? len : 1);
  REQUIRE(buf);
  memset(buf, fill, len);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, buf, len, 0) == (ssize_t)len);
  REQUIRE(fsync(fd) == 0);
  close(fd);
  free(buf);
  int d = open(root, O_RDONLY | O_DIRECTORY);
  REQUIRE(d >= 0 && fsync(d) == 0);
  close(d);
}

static void clean_root(void) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", root, root);
  REQUIRE(system(cmd) == 0);
}

/* Runs `body` in a child armed as `aim` says (root, journal and
 * skip_syncs filled in); returns its exit status. */
static int in_child_aimed(void (*body)(void), pc_arm aim) {
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    pc_arm arm = aim;
    arm.root = root;
    arm.journal = journal;
    arm.skip_syncs = true;
    if (pc_arm_recorder(&arm) != HS_OK) _exit(2);
    body();
    _exit(0);
  }
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs `body` in an armed child (cut at `cut_at`, 0: never). */
static int in_child(void (*body)(void), uint64_t cut_at) {
  return in_child_aimed(body, (pc_arm){.cut_at = cut_at});
}

static int open_rw(const char *name) {
  char p[512];
  path_of(name, p);
  return open(p, O_RDWR);
}

static void fill_write(int fd, char c, size_t len, off_t off) {
  char buf[SIZE];
  memset(buf, c, len);
  REQUIRE(sys_pwrite(fd, buf, len, off) == (ssize_t)len);
}

/* ---- synced and unsynced writes ---- */

static void body_writes(void) {
  int fd = open_rw("f");
  fill_write(fd, 'b', SIZE, 0);
  REQUIRE(sys_fsync(fd) == 0);
  fill_write(fd, 'c', SIZE, 0); /* never synced */
  close(fd);
}

static void test_writes(void) {
  int kept = 0, dropped = 0, torn = 0;
  for (uint64_t seed = 1; seed <= SEEDS; seed++) {
    clean_root();
    write_file("f", 'a', SIZE);
    CHECK_EQ(in_child(body_writes, 0), 0);
    pc_result r;
    CHECK_OK(pc_apply(root, journal, seed, false, &r));
    kept += r.writes_kept > 0;
    dropped += r.writes_dropped > 0;
    torn += r.writes_torn > 0;
    CHECK_EQ(r.writes_kept + r.writes_dropped + r.writes_torn, 1);
    int fd = open_rw("f");
    char buf[SIZE];
    REQUIRE(pread(fd, buf, SIZE, 0) == SIZE);
    close(fd);
    for (size_t s = 0; s < SIZE; s += 512) {
      CHECK(buf[s] == 'b' || buf[s] == 'c'); /* 'a' was overwritten durably */
      for (size_t i = 1; i < 512; i++)
        if (buf[s + i] != buf[s]) {
          CHECK(!"a sector holds two versions");
          break;
        }
    }
  }
  CHECK(kept > 0);
  CHECK(dropped > 0);
  CHECK(torn > 0);
}

/* ---- renames with and without the directory's fsync ---- */

static void body_renames(void) {
  char t1[512], n1[512], t2[512], n2[512];
  path_of("t1", t1);
  path_of("n1", n1);
  path_of("t2", t2);
  path_of("n2", n2);
  int fd = sys_open(t1, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  fill_write(fd, '1', 512, 0);
  REQUIRE(sys_fsync(fd) == 0);
  close(fd);
  REQUIRE(sys_rename(t1, n1) == 0);
  int d = open(root, O_RDONLY | O_DIRECTORY);
  REQUIRE(sys_fsync(d) == 0);
  fd = sys_open(t2, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  fill_write(fd, '2', 512, 0);
  REQUIRE(sys_fsync(fd) == 0);
  close(fd);
  REQUIRE(sys_rename(t2, n2) == 0); /* its directory never synced after */
  close(d);
}

static void test_renames(void) {
  int lost = 0, kept = 0;
  for (uint64_t seed = 1; seed <= SEEDS; seed++) {
    clean_root();
    CHECK_EQ(in_child(body_renames, 0), 0);
    pc_result r;
    CHECK_OK(pc_apply(root, journal, seed, false, &r));
    char n1[512], n2[512], t1[512];
    path_of("n1", n1);
    path_of("n2", n2);
    path_of("t1", t1);
    struct stat sb;
    CHECK(stat(n1, &sb) == 0 && sb.st_size == 512);
    CHECK(stat(t1, &sb) != 0);
    if (stat(n2, &sb) == 0) {
      kept++;
      CHECK_EQ(sb.st_size, 512);
    } else {
      lost++;
      CHECK(r.dir_entries_lost > 0);
    }
  }
  CHECK(lost > 0);
  CHECK(kept > 0);
}

/* ---- an unlink without the directory's fsync ---- */

static void body_unlink(void) {
  char p[512];
  path_of("u", p);
  REQUIRE(sys_unlink(p) == 0);
}

static void test_unlink(void) {
  int back = 0, gone = 0;
  for (uint64_t seed = 1; seed <= SEEDS; seed++) {
    clean_root();
    write_file("u", 'u', 1024);
    CHECK_EQ(in_child(body_unlink, 0), 0);
    pc_result r;
    CHECK_OK(pc_apply(root, journal, seed, false, &r));
    int fd = open_rw("u");
    if (fd < 0) {
      gone++;
      continue;
    }
    back++;
    char buf[1024];
    CHECK(pread(fd, buf, sizeof buf, 0) == 1024 && buf[0] == 'u' && buf[1023] == 'u');
    close(fd);
  }
  CHECK(back > 0);
  CHECK(gone > 0);
}

/* ---- unsynced growth ---- */

static void body_grow(void) {
  int fd = open_rw("g");
  fill_write(fd, 'g', 4096, 0);
  close(fd);
}

static void body_grow_synced(void) {
  int fd = open_rw("g");
  fill_write(fd, 'g', 4096, 0);
  REQUIRE(sys_fdatasync(fd) == 0);
  close(fd);
}

static void test_growth(void) {
  int cut = 0, whole = 0;
  for (uint64_t seed = 1; seed <= SEEDS; seed++) {
    for (int synced = 0; synced <= 1; synced++) {
      clean_root();
      write_file("g", 0, 0);
      CHECK_EQ(in_child(synced ? body_grow_synced : body_grow, 0), 0);
      pc_result r;
      CHECK_OK(pc_apply(root, journal, seed, false, &r));
      char p[512];
      path_of("g", p);
      struct stat sb;
      REQUIRE(stat(p, &sb) == 0);
      CHECK(sb.st_size % 512 == 0);
      if (synced) {
        CHECK_EQ(sb.st_size, 4096); /* fdatasync keeps the size (Linux) */
      } else if (sb.st_size < 4096) {
        cut++;
      } else {
        whole++;
      }
      if (synced) {
        /* A strict fdatasync does not keep growth: it may be cut. */
        clean_root();
        write_file("g", 0, 0);
        CHECK_EQ(in_child(body_grow_synced, 0), 0);
        CHECK_OK(pc_apply(root, journal, seed, true, &r));
      }
    }
  }
  CHECK(cut > 0);
  CHECK(whole > 0);
}

/* ---- the cut ---- */

static void body_creates(void) {
  for (int i = 1; i <= 5; i++) {
    char name[16], p[512];
    snprintf(name, sizeof name, "x%d", i);
    path_of(name, p);
    int fd = sys_open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
    REQUIRE(fd >= 0);
    close(fd);
  }
}

static void test_cut(void) {
  clean_root();
  CHECK_EQ(in_child(body_creates, 3), PC_CUT_EXIT);
  for (int i = 1; i <= 5; i++) {
    char name[16], p[512];
    snprintf(name, sizeof name, "x%d", i);
    path_of(name, p);
    CHECK_EQ(access(p, F_OK) == 0, i < 3);
  }
  pc_result r;
  CHECK_OK(pc_apply(root, journal, 1, false, &r));
  CHECK_EQ(r.operations, 2);
}

/* ---- the directory model ---- */

/* The operations run in the subdirectory "d"; "the other directory" is the
 * root. After its operation a body fsyncs the file itself (through one of
 * its names), then does what model_sync says. */
typedef enum dir_sync_mode { SYNC_NONE, SYNC_OTHER_DIR, SYNC_ITS_DIR } dir_sync_mode;
static dir_sync_mode model_sync; /* set before the fork */

/* d/a (1024 bytes of 'a') and d/keep, a second name of it, all durable. */
static void prepare_model_dir(void) {
  clean_root();
  char d[512], a[512], keep[512];
  path_of("d", d);
  path_of("d/a", a);
  path_of("d/keep", keep);
  REQUIRE(mkdir(d, 0700) == 0);
  write_file("d/a", 'a', 1024);
  REQUIRE(link(a, keep) == 0);
  int fd = open(d, O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0 && fsync(fd) == 0);
  close(fd);
}

static void fsync_path(const char *name) {
  char p[512];
  path_of(name, p);
  int fd = open(p, O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(sys_fsync(fd) == 0);
  close(fd);
}

static void sync_after(void) {
  if (model_sync == SYNC_OTHER_DIR) fsync_path(""); /* the root */
  if (model_sync == SYNC_ITS_DIR) fsync_path("d");
}

static void body_model_create(void) {
  char c[512];
  path_of("d/c", c);
  int fd = sys_open(c, O_WRONLY | O_CREAT | O_EXCL, 0600);
  REQUIRE(fd >= 0);
  fill_write(fd, 'c', 512, 0);
  REQUIRE(sys_fsync(fd) == 0);
  close(fd);
  sync_after();
}

static void body_model_rename(void) {
  char a[512], b[512];
  path_of("d/a", a);
  path_of("d/b", b);
  REQUIRE(sys_rename(a, b) == 0);
  fsync_path("d/b"); /* the file's own fsync, after its rename */
  sync_after();
}

static void body_model_link(void) {
  char a[512], b[512];
  path_of("d/a", a);
  path_of("d/b", b);
  REQUIRE(sys_link(a, b) == 0);
  fsync_path("d/b");
  sync_after();
}

static void body_model_unlink(void) {
  char a[512];
  path_of("d/a", a);
  REQUIRE(sys_unlink(a) == 0);
  fsync_path("d/keep"); /* the same file, through its other name */
  sync_after();
}

static bool exists(const char *name) {
  char p[512];
  path_of(name, p);
  return access(p, F_OK) == 0;
}

/* Whether the power cut took the operation back (checking, when it did,
 * that the directory is as it was before it). */
static bool model_undone(int op) {
  switch (op) {
  case 0:
    return !exists("d/c");
  case 1:
    CHECK_EQ(exists("d/a"), !exists("d/b")); /* one name or the other */
    return exists("d/a");
  case 2:
    CHECK(exists("d/a"));
    return !exists("d/b");
  default:
    if (!exists("d/a")) return false;
    int fd = open_rw("d/a");
    char buf[1024];
    CHECK(fd >= 0 && pread(fd, buf, sizeof buf, 0) == 1024 && buf[0] == 'a' && buf[1023] == 'a');
    if (fd >= 0) close(fd);
    return true;
  }
}

static void test_directory_model(void) {
  static const struct {
    const char *name;
    void (*body)(void);
  } ops[] = {{"create", body_model_create},
             {"rename", body_model_rename},
             {"link", body_model_link},
             {"unlink", body_model_unlink}};
  static const char *const modes[] = {"no directory fsync", "an fsync of another directory",
                                      "its directory's fsync"};
  for (int op = 0; op < 4; op++) {
    for (int mode = SYNC_NONE; mode <= SYNC_ITS_DIR; mode++) {
      model_sync = (dir_sync_mode)mode;
      int undone = 0, kept = 0;
      for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        prepare_model_dir();
        CHECK_EQ(in_child(ops[op].body, 0), 0);
        pc_result r;
        CHECK_OK(pc_apply(root, journal, seed, false, &r));
        if (model_undone(op))
          undone++;
        else
          kept++;
      }
      /* Not durable until its own directory's fsync: some seed takes it
       * back (the file's fsync notwithstanding), some keeps it. Durable
       * after it: none takes it back. */
      bool ok = mode == SYNC_ITS_DIR ? undone == 0 : undone > 0 && kept > 0;
      if (!ok)
        fprintf(stderr, "directory model: a %s followed by %s: undone by %d of %d seeds\n",
                ops[op].name, modes[mode], undone, SEEDS);
      CHECK(ok);
    }
  }
}

/* ---- cuts aimed at directory operations ---- */

/* What a recycling step does, in a checkpoint's mark: the old segment's
 * new name taken with link(), the old name removed, the directory synced;
 * around it, a link before the mark and a new file after it. */
static void body_recycle(void) {
  char old[512], pre[512], new_name[512], after[512];
  path_of("d/old", old);
  path_of("d/pre", pre);
  path_of("d/new", new_name);
  path_of("d/after", after);
  int fd = open_rw("d/old");
  fill_write(fd, 'w', 512, 0); /* not a directory operation */
  close(fd);
  REQUIRE(sys_link(old, pre) == 0);
  seams.checkpoint_begin();
  REQUIRE(sys_link(old, new_name) == 0);
  REQUIRE(sys_unlink(old) == 0);
  fsync_path("d");
  seams.checkpoint_end();
  fd = sys_open(after, O_WRONLY | O_CREAT | O_EXCL, 0600);
  REQUIRE(fd >= 0);
  close(fd);
}

static nlink_t nlink_of(const char *name) {
  char p[512];
  path_of(name, p);
  struct stat sb;
  return stat(p, &sb) == 0 ? sb.st_nlink : 0;
}

static void test_dir_op_aims(void) {
  static const struct {
    pc_arm aim;
    unsigned kind; /* of the operation cut */
    bool pre, new_name, old, after;
  } cases[] = {
      /* From arming: link d/pre (1), link d/new (2), unlink d/old (3). */
      {{.cut_dir_op = 1}, PC_OP_LINK, false, false, true, false},
      {{.cut_dir_op = 3}, PC_OP_UNLINK, true, true, true, false},
      {{.cut_dir_op = 4}, PC_OP_DIR_SYNC, true, true, false, false},
      {{.cut_dir_op = 1, .dir_op_kinds = PC_OP_UNLINK}, PC_OP_UNLINK, true, true, true, false},
      {{.cut_dir_op = 2, .dir_op_kinds = PC_OP_LINK}, PC_OP_LINK, true, false, true, false},
      /* Inside the first mark: the link before it does not count. */
      {{.cut_dir_op = 1, .dir_op_mark = 1}, PC_OP_LINK, true, false, true, false},
      {{.cut_dir_op = 2, .dir_op_mark = 1}, PC_OP_UNLINK, true, true, true, false},
      {{.cut_dir_op = 1, .dir_op_mark = 1, .dir_op_kinds = PC_OP_DIR_SYNC},
       PC_OP_DIR_SYNC,
       true,
       true,
       false,
       false},
      /* Past the mark's last: the very next operation. */
      {{.cut_dir_op = 9, .dir_op_mark = 1}, PC_OP_CREATE, true, true, false, false},
      /* A mark that never comes: never cut. */
      {{.cut_dir_op = 1, .dir_op_mark = 2}, 0, true, true, false, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    clean_root();
    char d[512];
    path_of("d", d);
    REQUIRE(mkdir(d, 0700) == 0);
    write_file("d/old", 'o', 1024);
    int status = in_child_aimed(body_recycle, cases[i].aim);
    CHECK_EQ(status, cases[i].kind ? PC_CUT_EXIT : 0);
    bool got[4] = {exists("d/pre"), exists("d/new"), exists("d/old"), exists("d/after")};
    bool want[4] = {cases[i].pre, cases[i].new_name, cases[i].old, cases[i].after};
    for (int k = 0; k < 4; k++)
      if (got[k] != want[k]) {
        fprintf(stderr, "aimed cut %zu: name %d is %s\n", i, k, got[k] ? "there" : "missing");
        CHECK(!"the cut fell elsewhere");
      }
    /* Cut at the unlink after the link: one file under two names. */
    if (cases[i].kind == PC_OP_UNLINK) CHECK_EQ(nlink_of("d/new"), cases[i].pre ? 3 : 2);
    pc_result r;
    CHECK_OK(pc_apply(root, journal, 1, false, &r));
    CHECK_EQ(r.cut_kind, cases[i].kind);
  }
  CHECK(strcmp(pc_op_kind_name(PC_OP_DIR_SYNC), "dir-sync") == 0);
  CHECK(strcmp(pc_op_kind_name(PC_OP_UNLINK), "unlink") == 0);
  CHECK(strcmp(pc_op_kind_name(0), "") == 0);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/hotset-powercut-%ld", tmp && *tmp ? tmp : "/tmp", (long)getpid());
  snprintf(journal, sizeof journal, "%s.journal", root);
  test_writes();
  test_renames();
  test_unlink();
  test_growth();
  test_cut();
  test_directory_model();
  test_dir_op_aims();
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", root, journal);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
  return check_finish();
}

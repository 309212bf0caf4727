/*
 * test_powercut — the power-cut recorder and applier (core/powercut.h):
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
 *    with PC_CUT_EXIT.
 * Each case runs the changes in a forked child (armed there only), then
 * applies the journal in the parent; seeds are fixed.
 */
#include "check.h"
#include "core/powercut.h"
#include "core/sysio.h"

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

/* Runs `body` in an armed child (cut at `cut_at`, 0: never); returns its
 * exit status. */
static int in_child(void (*body)(void), uint64_t cut_at) {
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    pc_arm arm = {.root = root, .journal = journal, .cut_at = cut_at, .skip_syncs = true};
    if (pc_arm_recorder(&arm) != HS_OK) _exit(2);
    body();
    _exit(0);
  }
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/hotset-powercut-%ld", tmp && *tmp ? tmp : "/tmp", (long)getpid());
  snprintf(journal, sizeof journal, "%s.journal", root);
  test_writes();
  test_renames();
  test_unlink();
  test_growth();
  test_cut();
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", root, journal);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
  return check_finish();
}

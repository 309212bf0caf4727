/*
 * test_direct_io — what direct I/O adds to the storage manager and the
 * pool (hs_smgr_options.direct_io, hs_pool_options.direct_io): pages really
 * bypass the kernel's page cache (mincore sees none of them after direct
 * writes and pool misses, where buffered I/O leaves them all), a file
 * system that refuses O_DIRECT or needs more alignment than the page fails
 * the open naming it (ramfs and tmpfs, mounted by the test when it runs as
 * root), misaligned buffers are refused up front, an injected EINVAL at an
 * open says O_DIRECT, a torn last block reads short rather than EINVAL,
 * injected short transfers stay short even where half a page cannot move,
 * and a pool with checksums, I/O workers and four threads racing reads,
 * updates and flushes keeps every page. The other storage and pool tests
 * run once more with direct I/O as "<test>_direct" (tests/direct_mode.h).
 */
#include "check.h"
#include "core/seams.h"
#include "hotset/fault.h"
#include "hotset/page.h"
#include "hotset/storage.h"
#include "hotset/stream.h"
#include "pool_util.h"
#include "storage/direct_io.h"
#include "testdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* hs_smgr_exists, which must not fail here. */
static bool fork_exists(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  bool exists = false;
  REQUIRE(hs_smgr_exists(smgr, rel, fork, &exists) == HS_OK);
  return exists;
}

#define PAGE 8192u
static const hs_relid REL = 16384;

static hs_smgr *open_smgr(const char *dir, uint32_t page_size, bool direct) {
  hs_smgr_options o = {.page_size = page_size, .direct_io = direct};
  hs_smgr *s = NULL;
  if (hs_smgr_open(dir, &o, &s) != HS_OK) {
    /* A temporary directory on a file system without O_DIRECT: nothing
     * here can run. */
    if (direct && strstr(hs_last_error(), "refuses")) {
      printf("SKIPPED: test_direct_io: %s\n", hs_last_error());
      exit(CHECK_SKIP_STATUS);
    }
    fprintf(stderr, "hs_smgr_open: %s\n", hs_last_error());
    exit(1);
  }
  return s;
}

/* How many of the file's pages are in the kernel's page cache now. */
static size_t cached_pages(const char *dir, hs_relid rel) {
  char path[PATH_MAX], name[32];
  hs_smgr_fork_filename(rel, HS_FORK_MAIN, name, sizeof name);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_RDONLY);
  REQUIRE(fd >= 0);
  struct stat sb;
  REQUIRE(fstat(fd, &sb) == 0 && sb.st_size > 0);
  size_t len = (size_t)sb.st_size, vm = (size_t)sysconf(_SC_PAGESIZE);
  void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
  REQUIRE(map != MAP_FAILED);
  size_t n = (len + vm - 1) / vm, resident = 0;
  unsigned char *vec = malloc(n);
  REQUIRE(vec && mincore(map, len, vec) == 0);
  for (size_t i = 0; i < n; i++) resident += vec[i] & 1;
  free(vec);
  munmap(map, len);
  close(fd);
  return resident;
}

/* Writes `n` stamped pages through s, after dropping what the page cache
 * has of the file, so that what is cached afterwards is this handle's. */
static void write_pages(hs_smgr *s, hs_relid rel, uint32_t n, uint64_t value) {
  unsigned char *page = test_page_alloc(PAGE);
  REQUIRE(page);
  bool created;
  REQUIRE(hs_smgr_create_if_missing(s, rel, HS_FORK_MAIN, &created) == HS_OK);
  for (hs_blockno b = 0; b < n; b++) {
    stamp_page(page, rel, b, value);
    hs_blockno nb;
    REQUIRE(hs_smgr_nblocks(s, rel, HS_FORK_MAIN, &nb) == HS_OK);
    if (b < nb)
      REQUIRE(hs_smgr_write(s, rel, HS_FORK_MAIN, b, page) == HS_OK);
    else
      REQUIRE(hs_smgr_extend(s, rel, HS_FORK_MAIN, page, NULL) == HS_OK);
  }
  free(page);
}

/* The probe's answer, and the page cache left alone: direct writes leave
 * none of the file cached where buffered ones leave all of it (checked on
 * the same file, so the measurement itself is proven to see pages). */
static void test_bypasses_page_cache(void) {
  char dir[PATH_MAX - 64];
  testdir_make(dir, sizeof dir, "dio-cache");
  hs_smgr *buffered = open_smgr(dir, PAGE, false);
  CHECK(!hs_smgr_direct_io(buffered));
  CHECK_EQ(hs_smgr_io_alignment(buffered), 1);
  write_pages(buffered, REL, 64, 1);
  CHECK_OK(hs_smgr_sync(buffered, REL, HS_FORK_MAIN));
  size_t vm = (size_t)sysconf(_SC_PAGESIZE);
  CHECK_EQ(cached_pages(dir, REL), 64 * PAGE / vm);
  hs_smgr_close(buffered);

  hs_smgr *direct = open_smgr(dir, PAGE, true);
  CHECK(hs_smgr_direct_io(direct));
  uint32_t align = hs_smgr_io_alignment(direct);
  CHECK(align >= 1 && align <= PAGE && (align & (align - 1)) == 0);
  /* A direct write drops the cached copy of what it overwrites. */
  write_pages(direct, REL, 64, 2);
  CHECK_EQ(cached_pages(dir, REL), 0);
  unsigned char *page = test_page_alloc(PAGE);
  for (hs_blockno b = 0; b < 64; b++) {
    CHECK_OK(hs_smgr_read(direct, REL, HS_FORK_MAIN, b, page));
    CHECK_EQ(stamp_value(page, REL, b), 2);
  }
  CHECK_EQ(cached_pages(dir, REL), 0);
  free(page);
  hs_smgr_close(direct);
  testdir_remove(dir);
}

/* Buffers not aligned as the file system asks are refused before any I/O,
 * by every call that moves a page, and nothing changes in the file. */
static void test_misaligned_refused(void) {
  char dir[PATH_MAX - 64];
  testdir_make(dir, sizeof dir, "dio-align");
  hs_smgr *s = open_smgr(dir, PAGE, true);
  uint32_t align = hs_smgr_io_alignment(s);
  if (align < 2) {
    check_skip("test_direct_io", "misaligned buffers: this file system takes any address");
    hs_smgr_close(s);
    testdir_remove(dir);
    return;
  }
  write_pages(s, REL, 4, 7);
  unsigned char *mem = test_page_alloc(2 * PAGE);
  unsigned char *bad = mem + align / 2;
  stamp_page(bad, REL, 1, 99);
  CHECK_ST(hs_smgr_read(s, REL, HS_FORK_MAIN, 0, bad), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "hs_smgr_read: the page at");
  CHECK_CONTAINS(hs_last_error(), "not aligned");
  CHECK_ST(hs_smgr_write(s, REL, HS_FORK_MAIN, 1, bad), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "hs_smgr_write");
  CHECK_ST(hs_smgr_extend(s, REL, HS_FORK_MAIN, bad, NULL), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "hs_smgr_extend");
  void *pages[2] = {mem + PAGE, bad};
  CHECK_ST(hs_smgr_readv(s, REL, HS_FORK_MAIN, 0, 2, pages), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "hs_smgr_readv");
  hs_blockno n;
  CHECK_OK(hs_smgr_nblocks(s, REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 4);
  CHECK_OK(hs_smgr_read(s, REL, HS_FORK_MAIN, 1, mem));
  CHECK_EQ(stamp_value(mem, REL, 1), 7);
  /* Extending with no page writes the handle's own (aligned) zero page. */
  CHECK_OK(hs_smgr_extend(s, REL, HS_FORK_MAIN, NULL, &n));
  CHECK_EQ(n, 4);
  free(mem);
  hs_smgr_close(s);
  testdir_remove(dir);
}

/* An injected EINVAL where a relation file is opened: on a direct handle
 * the message says the file system refused O_DIRECT and names it; on a
 * buffered one it is the plain system error. Neither retries buffered. */
static void test_open_einval(void) {
  char dir[PATH_MAX - 64];
  testdir_make(dir, sizeof dir, "dio-einval");
  hs_smgr *s = open_smgr(dir, PAGE, true);
  CHECK_OK(hs_smgr_inject_fault(s, HS_IO_OPEN, 1, EINVAL, 1));
  CHECK_ST(hs_smgr_create(s, REL, HS_FORK_MAIN), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "with O_DIRECT");
  CHECK_CONTAINS(hs_last_error(), "refuses direct I/O");
  CHECK(!fork_exists(s, REL, HS_FORK_MAIN));
  hs_smgr_close(s);
  /* The file now made buffered; a fresh direct handle's first open fails. */
  s = open_smgr(dir, PAGE, false);
  CHECK_OK(hs_smgr_create(s, REL, HS_FORK_MAIN));
  hs_smgr_close(s);
  s = open_smgr(dir, PAGE, true);
  CHECK_OK(hs_smgr_inject_fault(s, HS_IO_OPEN, 1, EINVAL, 1));
  hs_blockno n;
  CHECK_ST(hs_smgr_nblocks(s, REL, HS_FORK_MAIN, &n), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "with O_DIRECT");
  CHECK_OK(hs_smgr_nblocks(s, REL, HS_FORK_MAIN, &n)); /* no fault: opens direct */
  hs_smgr_close(s);
  s = open_smgr(dir, PAGE, false);
  CHECK_OK(hs_smgr_inject_fault(s, HS_IO_OPEN, 1, EINVAL, 1));
  CHECK_ST(hs_smgr_nblocks(s, REL, HS_FORK_MAIN, &n), HS_ERR_INVALID);
  CHECK(strstr(hs_last_error(), "O_DIRECT") == NULL);
  hs_smgr_close(s);
  testdir_remove(dir);
}

/* A last block cut in half (a crash during an extend): a direct read of it
 * is short, not EINVAL from resuming off the alignment, and the next extend
 * writes its block over it, as with buffered I/O. */
static void test_torn_last_block(void) {
  char dir[PATH_MAX - 64], path[PATH_MAX];
  testdir_make(dir, sizeof dir, "dio-torn");
  hs_smgr *s = open_smgr(dir, PAGE, true);
  write_pages(s, REL, 2, 5);
  snprintf(path, sizeof path, "%s/%u", dir, REL);
  /* 1000 bytes: off every alignment, so resuming there would be EINVAL. */
  REQUIRE(truncate(path, PAGE + 1000) == 0);
  unsigned char *mem = test_page_alloc(2 * PAGE);
  CHECK_ST(hs_smgr_read(s, REL, HS_FORK_MAIN, 1, mem), HS_ERR_SHORT_IO);
  CHECK_CONTAINS(hs_last_error(), "read only 1000 of 8192 bytes");
  void *pages[2] = {mem, mem + PAGE};
  CHECK_ST(hs_smgr_readv(s, REL, HS_FORK_MAIN, 0, 2, pages), HS_ERR_SHORT_IO);
  CHECK_CONTAINS(hs_last_error(), "could not read block 1");
  CHECK_EQ(stamp_value(mem, REL, 0), 5);
  hs_blockno n;
  CHECK_OK(hs_smgr_nblocks(s, REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 1);
  stamp_page(mem, REL, 1, 6);
  CHECK_OK(hs_smgr_extend(s, REL, HS_FORK_MAIN, mem, &n));
  CHECK_EQ(n, 1);
  memset(mem, 0, PAGE);
  CHECK_OK(hs_smgr_read(s, REL, HS_FORK_MAIN, 1, mem));
  CHECK_EQ(stamp_value(mem, REL, 1), 6);
  free(mem);
  hs_smgr_close(s);
  testdir_remove(dir);
}

/* Injected short transfers on a direct handle: each call reports half a
 * page moved, as on a buffered one, also where the page is the file
 * system's whole alignment and nothing can move (page_size == align). */
static void short_faults(const char *dir, uint32_t page_size) {
  hs_smgr_options o = {.page_size = page_size, .direct_io = true};
  hs_smgr *s;
  CHECK_OK(hs_smgr_open(dir, &o, &s));
  unsigned char *mem = test_page_alloc(2 * page_size);
  CHECK_OK(hs_smgr_create(s, REL, HS_FORK_MAIN));
  stamp_page(mem, REL, 0, 1);
  CHECK_OK(hs_smgr_extend(s, REL, HS_FORK_MAIN, mem, NULL));
  CHECK_OK(hs_smgr_extend(s, REL, HS_FORK_MAIN, NULL, NULL));
  char want[64];
  snprintf(want, sizeof want, "only %u of %u bytes", page_size / 2, page_size);
  CHECK_OK(hs_smgr_inject_fault(s, HS_IO_READ, 1, 0, 1));
  CHECK_ST(hs_smgr_read(s, REL, HS_FORK_MAIN, 0, mem), HS_ERR_SHORT_IO);
  CHECK_CONTAINS(hs_last_error(), want);
  CHECK_OK(hs_smgr_inject_fault(s, HS_IO_WRITE, 1, 0, 1));
  CHECK_ST(hs_smgr_write(s, REL, HS_FORK_MAIN, 0, mem), HS_ERR_SHORT_IO);
  CHECK_CONTAINS(hs_last_error(), want);
  CHECK_OK(hs_smgr_inject_fault(s, HS_IO_EXTEND, 1, 0, 1));
  CHECK_ST(hs_smgr_extend(s, REL, HS_FORK_MAIN, mem, NULL), HS_ERR_SHORT_IO);
  CHECK_CONTAINS(hs_last_error(), want);
  void *pages[2] = {mem, mem + page_size};
  CHECK_OK(hs_smgr_inject_fault(s, HS_IO_READ, 1, 0, 1));
  CHECK_ST(hs_smgr_readv(s, REL, HS_FORK_MAIN, 0, 2, pages), HS_ERR_SHORT_IO);
  CHECK_CONTAINS(hs_last_error(), "could not read block 0");
  /* Unarmed again, everything moves. */
  CHECK_OK(hs_smgr_readv(s, REL, HS_FORK_MAIN, 0, 2, pages));
  free(mem);
  hs_smgr_close(s);
}

static void test_short_faults(void) {
  char dir[PATH_MAX - 64];
  testdir_make(dir, sizeof dir, "dio-short");
  hs_smgr *probe = open_smgr(dir, PAGE, true);
  uint32_t align = hs_smgr_io_alignment(probe);
  hs_smgr_close(probe);
  short_faults(dir, PAGE);
  testdir_remove(dir);
  /* The page as small as the alignment allows: half of it cannot move. */
  testdir_make(dir, sizeof dir, "dio-short-min");
  short_faults(dir, align < HS_PAGE_SIZE_MIN ? HS_PAGE_SIZE_MIN : align);
  testdir_remove(dir);
}

/* ---- file systems mounted for the test (root only) ---------------------- */

/* Mounts a fresh `type` (ramfs, tmpfs) on a new directory; false (and one
 * line saying so) where this process may not mount. */
static bool mount_fs(const char *type, char *dir, size_t len) {
  testdir_make(dir, len, type);
  if (geteuid() != 0 || mount("none", dir, type, 0, NULL) != 0) {
    char why[128];
    snprintf(why, sizeof why, "%s part: cannot mount %s here (%s)", type, type,
             geteuid() != 0 ? "not root" : strerror(errno));
    check_skip("test_direct_io", why);
    rmdir(dir);
    return false;
  }
  return true;
}

static void unmount_fs(const char *dir) {
  CHECK(umount2(dir, MNT_DETACH) == 0);
  rmdir(dir);
}

static size_t dir_entries(const char *dir) {
  char cmd[PATH_MAX + 32];
  snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
  FILE *p = popen(cmd, "r");
  size_t n = 99;
  if (p) {
    if (fscanf(p, "%zu", &n) != 1) n = 99;
    pclose(p);
  }
  return n;
}

/* ramfs does no direct I/O: the storage manager and the pool refuse to
 * open there, naming it, leave nothing behind, and never fall back to
 * buffered I/O; a buffered handle opens fine. */
static void test_refusing_fs(void) {
  char dir[PATH_MAX - 64], data[PATH_MAX];
  if (!mount_fs("ramfs", dir, sizeof dir)) return;
  snprintf(data, sizeof data, "%s/data", dir);
  hs_smgr_options o = {.page_size = PAGE, .direct_io = true};
  hs_smgr *s = (hs_smgr *)&o;
  CHECK_ST(hs_smgr_open(data, &o, &s), HS_ERR_INVALID);
  CHECK(s == NULL);
  CHECK_CONTAINS(hs_last_error(), "(ramfs) refuses O_DIRECT");
  CHECK_CONTAINS(hs_last_error(), data);
  CHECK_EQ(dir_entries(data), 0);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = data;
  po.pool_pages = 16;
  po.direct_io = true;
  hs_pool *pool = NULL;
  CHECK_ST(hs_pool_open(&po, &pool), HS_ERR_INVALID);
  CHECK(pool == NULL);
  CHECK_CONTAINS(hs_last_error(), "ramfs");
  o.direct_io = false;
  CHECK_OK(hs_smgr_open(data, &o, &s));
  CHECK(!hs_smgr_direct_io(s));
  hs_smgr_close(s);

  /* A relation file that is a link into the ramfs, from a data directory
   * that does direct I/O: its open is refused naming ramfs, not the data
   * directory's file system. */
  char ext[PATH_MAX - 64], target[PATH_MAX], link[PATH_MAX];
  testdir_make(ext, sizeof ext, "dio-link");
  snprintf(target, sizeof target, "%s/rel", dir);
  int fd = open(target, O_RDWR | O_CREAT, 0600);
  REQUIRE(fd >= 0 && ftruncate(fd, PAGE) == 0);
  close(fd);
  snprintf(link, sizeof link, "%s/%u", ext, REL);
  REQUIRE(symlink(target, link) == 0);
  o.direct_io = true;
  s = open_smgr(ext, PAGE, true);
  unsigned char *page = test_page_alloc(PAGE);
  CHECK_ST(hs_smgr_read(s, REL, HS_FORK_MAIN, 0, page), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "with O_DIRECT: the file system there (ramfs) refuses");
  free(page);
  hs_smgr_close(s);
  testdir_remove(ext);
  unmount_fs(dir);
}

/* A full file system is not one that refuses direct I/O: the probe's
 * ENOSPC is reported as what it is (a pool must still open on a full disk
 * to recover), not as a refusal a caller would answer by going buffered. */
static void test_full_fs_not_refusal(void) {
  char dir[PATH_MAX - 64], fill[PATH_MAX];
  testdir_make(dir, sizeof dir, "dio-full");
  if (geteuid() != 0 || mount("none", dir, "tmpfs", 0, "size=64k") != 0) {
    check_skip("test_direct_io", "full file system part: cannot mount a tmpfs here (needs root)");
    rmdir(dir);
    return;
  }
  snprintf(fill, sizeof fill, "%s/fill", dir);
  int fd = open(fill, O_WRONLY | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  static const char block[4096];
  while (write(fd, block, sizeof block) > 0) continue;
  close(fd);
  hs_smgr_options o = {.page_size = 4096, .direct_io = true};
  hs_smgr *s = NULL;
  hs_status st = hs_smgr_open(dir, &o, &s);
  if (st == HS_ERR_INVALID && strstr(hs_last_error(), "turning O_DIRECT on")) {
    /* Kernels before 6.6: tmpfs refuses O_DIRECT outright. */
    check_skip("test_direct_io", "full file system part: this kernel's tmpfs refuses O_DIRECT");
  } else {
    CHECK_ST(st, HS_ERR_NOSPACE);
    CHECK(strstr(hs_last_error(), "refuses") == NULL);
    CHECK_CONTAINS(hs_last_error(), "could not write and read back a test page");
  }
  if (s) hs_smgr_close(s);
  unmount_fs(dir);
}

/* tmpfs says it moves whole memory pages (4 KiB) directly, or refuses
 * (before Linux 6.6): a smaller database page is refused naming the size
 * needed. (tmpfs does not enforce it, so the faults where half a page
 * cannot move run on a 4Kn device below.) */
static void test_alignment_above_page(void) {
  char dir[PATH_MAX - 64];
  if (!mount_fs("tmpfs", dir, sizeof dir)) return;
  hs_smgr_options o = {.page_size = HS_PAGE_SIZE_MIN, .direct_io = true};
  hs_smgr *s = NULL;
  CHECK_ST(hs_smgr_open(dir, &o, &s), HS_ERR_INVALID);
  if (strstr(hs_last_error(), "refuses")) {
    check_skip("test_direct_io", "tmpfs part: this kernel's tmpfs refuses O_DIRECT");
  } else {
    CHECK_CONTAINS(hs_last_error(), "(tmpfs) moves blocks of");
    CHECK_CONTAINS(hs_last_error(), "more than the 1024-byte page size");
    o.page_size = 4096;
    CHECK_OK(hs_smgr_open(dir, &o, &s));
    hs_smgr_close(s);
  }
  unmount_fs(dir);
}

/* A file system that wants buffers aligned more than file offsets (memory
 * 64 KiB, offsets 512): the probe must hold pages to the memory
 * alignment, report it, and the pool's frames must follow it. */
static void wide_memory_alignment(dio_info *out) {
  out->mem_align = 1u << 16;
  out->offset_align = 512;
}

static void test_memory_alignment(void) {
  char dir[PATH_MAX - 64];
  testdir_make(dir, sizeof dir, "dio-memalign");
  hs_smgr *plain = NULL;
  hs_smgr_options o = {.page_size = PAGE, .direct_io = true};
  if (hs_smgr_open(dir, &o, &plain) != HS_OK) {
    check_skip("test_direct_io", "memory alignment: no direct I/O in the test directory");
    testdir_remove(dir);
    return;
  }
  hs_smgr_close(plain);
  seams.dio_alignment = wide_memory_alignment;
  hs_smgr *s = NULL;
  o.page_size = 16384; /* a multiple of the offsets' 512, not of 64 KiB */
  CHECK_ST(hs_smgr_open(dir, &o, &s), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "65536");
  o.page_size = 1u << 16;
  CHECK_OK(hs_smgr_open(dir, &o, &s));
  CHECK_EQ(hs_smgr_io_alignment(s), 1u << 16);
  CHECK_OK(hs_smgr_create(s, REL, HS_FORK_MAIN));
  unsigned char *mem = NULL;
  REQUIRE(posix_memalign((void **)&mem, 1u << 16, 3u << 16) == 0);
  memset(mem, 0, 3u << 16);
  hs_blockno got;
  CHECK_ST(hs_smgr_extend(s, REL, HS_FORK_MAIN, mem + 4096, &got), HS_ERR_INVALID);
  CHECK_OK(hs_smgr_extend(s, REL, HS_FORK_MAIN, mem, &got));
  free(mem);
  hs_smgr_close(s);
  /* The pool's frames, aligned to 64 KiB. */
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.page_size = 1u << 16;
  po.pool_pages = 4;
  po.direct_io = true;
  hs_pool *pool;
  CHECK_OK(hs_pool_open(&po, &pool));
  /* every frame, each pinned while its page is looked at: block 0 and
   * three new ones fill the four */
  hs_buf held[4];
  CHECK_OK(hs_pool_read(pool, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &held[0], NULL));
  for (int i = 1; i < 4; i++) {
    hs_blockno block;
    CHECK_OK(hs_pool_extend(pool, REL, HS_FORK_MAIN, NULL, false, &held[i], &block));
  }
  for (int i = 0; i < 4; i++) {
    CHECK_EQ((uintptr_t)hs_buf_page(pool, held[i]) % (1u << 16), 0);
    CHECK_OK(hs_buf_release(pool, held[i]));
  }
  CHECK_OK(hs_pool_close(pool));
  seams.dio_alignment = NULL;
  testdir_remove(dir);
}

/* The output of a shell command's first line into buf; false on failure. */
static bool run_line(const char *cmd, char *buf, size_t len) {
  FILE *p = popen(cmd, "r");
  if (!p) return false;
  bool ok = fgets(buf, (int)len, p) != NULL;
  ok = pclose(p) == 0 && ok;
  buf[strcspn(buf, "\n")] = '\0';
  return ok;
}

/* A device with 4096-byte logical blocks (a loop device over a file, with
 * ext4 on it), as many NVMe drives are: direct transfers must then start
 * and end on 4 KiB, which ext4 enforces. A 1 KiB page is refused; with
 * 4 KiB pages an injected short transfer, half a page, cannot move at all
 * yet must still be reported short, and a torn last block reads short. */
static void test_4k_device(void) {
  char dir[PATH_MAX - 64], img[PATH_MAX], dev[64], cmd[3 * PATH_MAX];
  testdir_make(dir, sizeof dir, "dio-4kn");
  snprintf(img, sizeof img, "%s.img", dir);
  snprintf(cmd, sizeof cmd,
           "truncate -s 32M '%s' && losetup --sector-size 4096 -f --show '%s' 2>/dev/null", img,
           img);
  if (geteuid() != 0 || !run_line(cmd, dev, sizeof dev)) {
    check_skip("test_direct_io", "4Kn part: cannot attach a loop device here (needs root)");
    unlink(img);
    rmdir(dir);
    return;
  }
  snprintf(cmd, sizeof cmd, "mkfs.ext4 -q '%s' >/dev/null 2>&1", dev);
  if (system(cmd) != 0 || mount(dev, dir, "ext4", 0, NULL) != 0) {
    check_skip("test_direct_io", "4Kn part: cannot make or mount ext4 on the loop device");
  } else {
    hs_smgr_options o = {.page_size = 1024, .direct_io = true};
    hs_smgr *s = NULL;
    CHECK_ST(hs_smgr_open(dir, &o, &s), HS_ERR_INVALID);
    CHECK_CONTAINS(hs_last_error(), "moves blocks of 4096 bytes, more than the 1024-byte page");
    short_faults(dir, 4096);
    unmount_fs(dir);
  }
  snprintf(cmd, sizeof cmd, "losetup -d '%s'", dev);
  CHECK(system(cmd) == 0);
  unlink(img);
  rmdir(dir);
}

/* ---- the pool ----------------------------------------------------------- */

#define POOL_REL   100u
#define POOL_PAGES 64u
#define REL_PAGES  256u
#define THREADS    4
#define ROUNDS     400

typedef struct worker {
  hs_pool *pool;
  uint32_t id;
  uint64_t seed;
  uint64_t updates;
  int failures;
  char msg[256];
} worker;

/* Stamps live after the checksummed page's header, which hotset owns. */
static void *body(hs_pool *pool, hs_buf b) {
  return (unsigned char *)hs_buf_page(pool, b) + HS_PAGE_HEADER_SIZE;
}

/* Thread `id` owns blocks id, id+THREADS, ...: it adds one to their stamps,
 * reads others' blocks, and flushes now and then, so misses, evictions of
 * dirty pages (checksum copies written directly) and flushes race on the
 * same direct files. */
static void *worker_main(void *arg) {
  worker *w = arg;
  uint64_t x = w->seed;
  for (uint32_t i = 0; i < ROUNDS && !w->failures; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    hs_blockno own = (hs_blockno)((x >> 33) % (REL_PAGES / THREADS)) * THREADS + w->id;
    hs_blockno any = (hs_blockno)((x >> 17) % REL_PAGES);
    hs_buf b;
    hs_status st =
        hs_pool_read(w->pool, POOL_REL, HS_FORK_MAIN, own, HS_READ_NORMAL, NULL, &b, NULL);
    if (st == HS_OK) {
      hs_buf_lock(w->pool, b, HS_LOCK_EXCLUSIVE);
      uint64_t v = stamp_value(body(w->pool, b), POOL_REL, own);
      stamp_page(body(w->pool, b), POOL_REL, own, v + 1);
      st = hs_buf_mark_dirty(w->pool, b, 0, NULL);
      hs_buf_unlock(w->pool, b);
      hs_buf_release(w->pool, b);
      if (st == HS_OK) w->updates++;
    }
    if (st == HS_OK) {
      st = hs_pool_read(w->pool, POOL_REL, HS_FORK_MAIN, any, HS_READ_NORMAL, NULL, &b, NULL);
      if (st == HS_OK) {
        hs_buf_lock(w->pool, b, HS_LOCK_SHARE);
        if (stamp_value(body(w->pool, b), POOL_REL, any) == UINT64_MAX) {
          snprintf(w->msg, sizeof w->msg, "block %u has a wrong stamp", any);
          w->failures++;
        }
        hs_buf_unlock(w->pool, b);
        hs_buf_release(w->pool, b);
      }
    }
    if (st == HS_OK && i % 97 == 0) st = hs_pool_flush_relation(w->pool, POOL_REL);
    if (st != HS_OK) {
      snprintf(w->msg, sizeof w->msg, "%s", hs_last_error());
      w->failures++;
    }
  }
  return NULL;
}

static hs_pool *open_checksummed_pool(const char *dir, bool direct, uint32_t workers) {
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.pool_pages = POOL_PAGES;
  o.page_size = PAGE;
  o.direct_io = direct;
  o.checksums = true;
  o.io_workers = workers;
  return open_pool_from(&o);
}

/* The sum of every block's stamp, by point reads. */
static uint64_t point_sum(hs_pool *pool) {
  uint64_t sum = 0;
  for (hs_blockno blk = 0; blk < REL_PAGES; blk++) {
    hs_buf b = must_read(pool, POOL_REL, blk, NULL);
    uint64_t v = stamp_value(body(pool, b), POOL_REL, blk);
    CHECK(v != UINT64_MAX);
    sum += v;
    hs_buf_release(pool, b);
  }
  return sum;
}

/* The same through a read stream (on I/O workers if the pool has them). */
static uint64_t stream_sum(hs_pool *pool) {
  hs_block_range r;
  hs_block_range_init(&r, 0, REL_PAGES);
  hs_read_stream *s;
  REQUIRE(hs_read_stream_open(pool, POOL_REL, HS_FORK_MAIN, NULL, hs_block_range_next, &r,
                              16 * PAGE, &s) == HS_OK);
  uint64_t sum = 0;
  uint32_t seen = 0;
  for (;;) {
    hs_buf b;
    hs_blockno blk;
    REQUIRE(hs_read_stream_next(s, &b, &blk) == HS_OK);
    if (b == HS_INVALID_BUF) break;
    uint64_t v = stamp_value(body(pool, b), POOL_REL, blk);
    CHECK(v != UINT64_MAX);
    sum += v;
    seen++;
    hs_buf_release(pool, b);
  }
  hs_read_stream_close(s);
  CHECK_EQ(seen, REL_PAGES);
  return sum;
}

/* A checksummed direct pool four times smaller than its relation: blocks
 * made by hs_pool_extend, threads racing updates, reads and flushes, then
 * every stamp counted by point reads, by a stream on the caller's thread,
 * by one on I/O workers after a reopen, and by a buffered pool: the same
 * sum each time, and the page cache never holds the direct pool's file. */
static void test_pool_paths(void) {
  char dir[PATH_MAX - 64];
  testdir_make(dir, sizeof dir, "dio-pool");
  hs_pool *pool = open_checksummed_pool(dir, true, 0);
  CHECK(hs_smgr_direct_io(hs_pool_smgr(pool)));
  CHECK_OK(hs_smgr_create(hs_pool_smgr(pool), POOL_REL, HS_FORK_MAIN));
  for (hs_blockno i = 0; i < REL_PAGES; i++) {
    hs_buf b;
    hs_blockno got;
    CHECK_OK(hs_pool_extend(pool, POOL_REL, HS_FORK_MAIN, NULL, true, &b, &got));
    CHECK_EQ(got, i);
    stamp_page(body(pool, b), POOL_REL, got, 0);
    CHECK_OK(hs_buf_mark_dirty(pool, b, 0, NULL));
    hs_buf_unlock(pool, b);
    hs_buf_release(pool, b);
  }
  CHECK_OK(hs_pool_flush_all(pool));
  CHECK_EQ(cached_pages(dir, POOL_REL), 0);

  worker w[THREADS];
  pthread_t tid[THREADS];
  for (uint32_t i = 0; i < THREADS; i++) {
    w[i] = (worker){.pool = pool, .id = i, .seed = 0x9E3779B97F4A7C15ull * (i + 1)};
    REQUIRE(pthread_create(&tid[i], NULL, worker_main, &w[i]) == 0);
  }
  uint64_t updates = 0;
  for (uint32_t i = 0; i < THREADS; i++) {
    pthread_join(tid[i], NULL);
    CHECK_EQ(w[i].failures, 0);
    if (w[i].failures) fprintf(stderr, "worker %u: %s\n", i, w[i].msg);
    updates += w[i].updates;
  }
  CHECK_EQ(updates, (uint64_t)THREADS * ROUNDS);
  CHECK_EQ(point_sum(pool), updates);
  CHECK_EQ(stream_sum(pool), updates);
  CHECK_OK(hs_pool_close(pool));
  CHECK_EQ(cached_pages(dir, POOL_REL), 0);

  pool = open_checksummed_pool(dir, true, 2);
  CHECK_EQ(stream_sum(pool), updates);
  CHECK_EQ(cached_pages(dir, POOL_REL), 0);
  CHECK_OK(hs_pool_close(pool));
  pool = open_checksummed_pool(dir, false, 0);
  CHECK_EQ(point_sum(pool), updates);
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

int main(void) {
  test_bypasses_page_cache();
  test_misaligned_refused();
  test_open_einval();
  test_torn_last_block();
  test_short_faults();
  test_refusing_fs();
  test_alignment_above_page();
  test_memory_alignment();
  test_full_fs_not_refusal();
  test_4k_device();
  test_pool_paths();
  return check_finish();
}

/*
 * common/stamped.c — see stamped.h.
 */
#include "common/stamped.h"

#include "common/interrupt.h"
#include "common/scratch.h"
#include "core/error.h"
#include "core/mkdirs.h"
#include "hotset/control.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Little-endian on disk regardless of the host, so a data directory
 * means the same thing everywhere. */
static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

uint64_t bench_page_get_u64(const void *page, size_t off) {
  const unsigned char *p = (const unsigned char *)page + off;
  return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

void bench_page_set_u64(void *page, size_t off, uint64_t v) {
  unsigned char *p = (unsigned char *)page + off;
  set_u32(p, (uint32_t)v);
  set_u32(p + 4, (uint32_t)(v >> 32));
}

void bench_page_stamp(void *page, hs_relid rel, hs_blockno block) {
  set_u32((unsigned char *)page + BENCH_PAGE_OFF_BLOCK, block);
  set_u32((unsigned char *)page + BENCH_PAGE_OFF_REL, rel);
}

bool bench_page_check(const void *page, hs_relid rel, hs_blockno block) {
  const unsigned char *p = page;
  return get_u32(p + BENCH_PAGE_OFF_BLOCK) == block && get_u32(p + BENCH_PAGE_OFF_REL) == rel;
}

hs_blockno bench_page_block(const void *page) {
  return get_u32((const unsigned char *)page + BENCH_PAGE_OFF_BLOCK);
}

hs_status bench_dir_page_size(const char *dir, uint64_t *page_size) {
  hs_control c;
  hs_status st = dir ? hs_control_read(dir, &c) : HS_ERR_NOENT;
  if (st == HS_ERR_NOENT) {
    if (!*page_size) *page_size = HS_PAGE_SIZE_DEFAULT;
    return HS_OK;
  }
  if (st != HS_OK) return st;
  if (*page_size && *page_size != c.page_size)
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s holds %u-byte pages (its control file), not %" PRIu64
                   ": leave --page-size out, or give another --dir",
                   dir, c.page_size, *page_size);
  *page_size = c.page_size;
  return HS_OK;
}

hs_status bench_log_open_fresh(const char *dir, char *logdir, size_t len, hs_wal **out) {
  snprintf(logdir, len, "%s/wal", dir);
  bench_tempdir_remove(logdir);
  /* A new log starts a new history: the data directory's control file,
   * which names the old log's checkpoint, goes with it (the relation files
   * stay, and the pool writes a new control file for them). */
  char control[4200];
  snprintf(control, sizeof control, "%s/" HS_CONTROL_FILE, dir);
  if (unlink(control) != 0 && errno != ENOENT)
    return hs_fail(HS_ERR_IO, errno, "%s: cannot remove the old control file: %s", control,
                   strerror(errno));
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = logdir;
  return hs_wal_open(&wo, out);
}

hs_status bench_log_change(hs_wal *log, hs_relid rel, hs_blockno blk, hs_lsn *lsn) {
  /* 32-byte header + one 12-byte page reference + the payload. */
  unsigned char payload[BENCH_LOG_RECORD - 44] = {0};
  memcpy(payload, &blk, sizeof blk);
  hs_wal_page ref = {rel, HS_FORK_MAIN, blk};
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_FIRST_USER,
                       .npages = 1,
                       .pages = &ref,
                       .data = payload,
                       .len = sizeof payload};
  return hs_wal_insert(log, &rec, lsn);
}

hs_status bench_make_relation(hs_smgr *smgr, hs_relid rel, hs_blockno npages) {
  return bench_make_relation_fork(smgr, rel, HS_FORK_MAIN, npages);
}

hs_status bench_make_relation_fork(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno npages) {
  bool exists = false;
  hs_status st = hs_smgr_exists(smgr, rel, fork, &exists);
  if (st != HS_OK) return st;
  if (exists) {
    st = hs_smgr_truncate(smgr, rel, fork, 0);
  } else {
    st = hs_smgr_create(smgr, rel, fork);
  }
  if (st != HS_OK) return st;

  uint32_t page_size = hs_smgr_page_size(smgr);
  /* Aligned, so that a direct storage manager can write it too. */
  void *page = NULL;
  if (posix_memalign(&page, 4096, page_size) != 0)
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a %u-byte page", page_size);
  memset(page, 0, page_size);
  for (hs_blockno b = 0; b < npages; b++) {
    if (b % 256 == 0 && bench_interrupted()) {
      st = hs_fail(HS_ERR_IO, EINTR, "relation %u: interrupted at block %u of %u", rel, b, npages);
      break;
    }
    hs_blockno got;
    bench_page_stamp(page, rel, b);
    st = hs_smgr_extend(smgr, rel, fork, page, &got);
    if (st != HS_OK) break;
    if (got != b) {
      /* Someone else is extending the same relation: the stamps would lie. */
      st = hs_fail(HS_ERR_CORRUPT, 0, "relation %u: extending to block %u returned block %u", rel,
                   b, got);
      break;
    }
  }
  free(page);
  return st;
}

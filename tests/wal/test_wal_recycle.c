/*
 * tests/test_wal_recycle.c — recycling an old segment never puts it over a
 * segment that exists (white-box, deterministic).
 *
 * A checkpoint picks the future name for a spare from the segments it
 * listed; if a segment appeared under that name in the meantime (before the
 * fix, the log's writer could create it concurrently, write records there
 * and fdatasync them), a rename would silently replace it with a stale
 * file, and the records in it would be gone. A hook at that moment creates
 * the segment with recognisable content; it must survive the checkpoint.
 */
#include "check.h"
#include "core/seams.h"
#include "hotset/wal.h"
#include "testdir.h"
#include "wal/wal_durable.h"
#include "wal/wal_internal.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define SEGMENT (1u << 16)

static char dir[4096];
static char made[4300];

static void make_segment_there(hs_wal *w, uint64_t next, void *ctx) {
  (void)ctx;
  seams.wal_spare_name = NULL;
  snprintf(made, sizeof made, "%s/%016llX", w->dir, (unsigned long long)next);
  int fd = open(made, O_WRONLY | O_CREAT | O_EXCL, 0600);
  REQUIRE(fd >= 0);
  static char page[SEGMENT];
  memset(page, 'N', sizeof page);
  REQUIRE(write(fd, page, sizeof page) == (ssize_t)sizeof page);
  close(fd);
}

int main(void) {
  testdir_make(dir, sizeof dir, "wal-recycle");
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = dir;
  o.segment_bytes = SEGMENT;
  o.writer_delay_ms = 0;
  hs_wal *w;
  REQUIRE(hs_wal_open(&o, &w) == HS_OK);
  /* Four segments of log, then a checkpoint whose redo point is in the
   * fourth: three old segments to recycle. */
  static unsigned char payload[4000];
  memset(payload, 0x5A, sizeof payload);
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_LOG, .data = payload, .len = sizeof payload};
  hs_lsn end = 0;
  while (hs_wal_insert_lsn(w) < 3 * SEGMENT + 100) REQUIRE(hs_wal_insert(w, &rec, &end) == HS_OK);
  REQUIRE(hs_wal_flush(w, end, HS_WAL_CAUSE_COMMIT, NULL) == HS_OK);
  hs_lsn redo = wal_checkpoint_begin(w);
  seams.wal_spare_name = make_segment_there;
  hs_lsn ckpt;
  uint64_t recycled = 0, removed = 0;
  CHECK_OK(wal_checkpoint_log(w, redo, &ckpt));
  CHECK_OK(wal_recycle(w, redo, 4ull * SEGMENT, &recycled, &removed));
  CHECK(made[0] != 0);
  CHECK_EQ(recycled + removed, 3);
  CHECK(recycled >= 1);
  /* The segment made under the chosen name is still what was written. */
  int fd = open(made, O_RDONLY);
  REQUIRE(fd >= 0);
  char first[16];
  REQUIRE(read(fd, first, sizeof first) == (ssize_t)sizeof first);
  close(fd);
  CHECK(memcmp(first, "NNNNNNNNNNNNNNNN", 16) == 0);
  CHECK_OK(hs_wal_close(w));
  testdir_remove(dir);
  return check_finish();
}

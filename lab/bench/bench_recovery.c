/*
 * bench/bench_recovery.c — `hotset bench recovery`: replay speed of crash
 * recovery, in MB of log per second.
 *
 * One run: a relation of --pages blocks is made and checkpointed; then
 * random pages (seeded) are changed through the pool — two byte ranges each,
 * logged with hs_buf_log_change, so each page's first change since the
 * checkpoint logs its whole image (full-page writes) and later ones a small
 * record — until --log bytes of log follow the redo point. The log is
 * flushed and the process "crashes": the pool is abandoned with its dirty
 * pages. Then log and pool are opened again, which replays the log; the
 * figures are recovery's own report (records, bytes, images, seconds) and
 * the end-of-recovery checkpoint's time, kept apart. Segments the log
 * finished were dropped from the page cache as they were written
 * (POSIX_FADV_DONTNEED), so replay reads them from the device, as after a
 * machine crash; the data pages it reads may be cached.
 */
#include "bench/bench_recovery.h"

#include "common/args.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/resources.h"
#include "common/rng.h"
#include "common/scratch.h"
#include "core/error.h"
#include "hotset/durability.h"
#include "hotset/pool.h"
#include "hotset/wal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROG "hotset bench recovery"
#define REL  1u

static const args_command command = {
    .cmd = {.prog = PROG},
    .about = "Crash recovery's replay speed: changes random pages of a relation through a pool\n"
             "on the log (full-page writes on: each page's first change after the checkpoint\n"
             "logs its image) until --log bytes of log follow the checkpoint, abandons the pool\n"
             "(a crash: its dirty pages are lost), then reopens it, which replays the log.\n",
    .notes = ARGS_SIZE_NOTE "\n"
                            "replay_mb_per_sec is log bytes replayed over replay seconds (reading\n"
                            "records, restoring images, applying changes); checkpoint_seconds is\n"
                            "the end-of-recovery checkpoint after it (writing and fsyncing the\n"
                            "replayed pages); open_seconds is the whole reopening.\n",
};
static const args_cmd *const cmd = &command.cmd;

typedef struct rec_bench {
  uint64_t log_bytes, pool_bytes, segment_bytes;
  uint64_t pages, change_bytes;
  uint64_t seed;
  bool checksums_off, json;
  const char *dir_flag;
  char tmpdir[BENCH_DIR_MAX];
} rec_bench;

static void parse_flags(rec_bench *b, int argc, char **argv) {
  const args_opt opts[] = {
      {.name = "log",
       .kind = ARGS_SIZE,
       .dest = &b->log_bytes,
       .min = 1 << 20,
       .def = "256MiB",
       .help = "log written after the checkpoint, then replayed"},
      {.name = "pages",
       .kind = ARGS_UINT,
       .dest = &b->pages,
       .min = 1,
       .max = 1u << 24,
       .def = "16384",
       .help = "blocks of the relation changed at random (8 KiB pages)"},
      {.name = "pool",
       .kind = ARGS_SIZE,
       .dest = &b->pool_bytes,
       .min = 1 << 20,
       .def = "128MiB",
       .help = "the pool's size (the default holds every page: replay touches no disk "
               "but the log's)"},
      {.name = "change",
       .kind = ARGS_SIZE,
       .dest = &b->change_bytes,
       .min = 16,
       .max = 4096,
       .def = "128B",
       .help = "bytes changed per record (two ranges)"},
      BENCH_SEGMENT_FLAG(&b->segment_bytes),
      {.name = "seed", .kind = ARGS_UINT, .dest = &b->seed, .def = "1", .help = "random seed"},
      {.name = "no-checksums",
       .kind = ARGS_FLAG,
       .dest = &b->checksums_off,
       .help = "pages without checksums (and without the LSN in their header)"},
      {.name = "dir",
       .kind = ARGS_PATH,
       .dest = &b->dir_flag,
       .max = BENCH_DIR_MAX,
       .arg = "DIR",
       .help = "an empty directory to run in (kept) instead of a temporary one"},
      {.name = "json", .kind = ARGS_FLAG, .dest = &b->json, .help = "one JSON object"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
}

typedef struct handles {
  hs_wal *wal;
  hs_pool *pool;
} handles;

static hs_status open_both(const rec_bench *b, const char *base, handles *h) {
  char waldir[BENCH_DIR_MAX + 16];
  snprintf(waldir, sizeof waldir, "%s/wal", base);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = waldir;
  wo.segment_bytes = b->segment_bytes;
  wo.writer_delay_ms = 0;
  hs_status st = hs_wal_open(&wo, &h->wal);
  if (st != HS_OK) return st;
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = base;
  po.pool_bytes = b->pool_bytes;
  po.wal = h->wal;
  po.checksums = !b->checksums_off;
  st = hs_pool_open(&po, &h->pool);
  if (st != HS_OK) hs_wal_close(h->wal);
  return st;
}

/* Changes one page: two ranges of change_bytes / 2 at places derived from
 * the step, past the page header. */
static hs_status change_page(const rec_bench *b, hs_pool *pool, hs_blockno blk, uint64_t step) {
  hs_buf buf;
  hs_status st = hs_pool_read(pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &buf, NULL);
  if (st != HS_OK) return st;
  hs_buf_lock(pool, buf, HS_LOCK_EXCLUSIVE);
  unsigned char *p = hs_buf_page(pool, buf);
  uint32_t half = (uint32_t)b->change_bytes / 2, room = hs_pool_page_size(pool) - 64 - half;
  hs_wal_range r[2] = {{(uint32_t)(64 + step * 131 % room), half},
                       {(uint32_t)(64 + step * 977 % room), half}};
  for (int i = 0; i < 2; i++) memset(p + r[i].offset, (int)(step | 1), r[i].len);
  st = hs_buf_log_change(pool, buf, r, 2, NULL);
  hs_buf_unlock(pool, buf);
  hs_buf_release(pool, buf);
  return st;
}

static int fail(const char *what) {
  fprintf(stderr, PROG ": %s: %s\n", what, hs_last_error());
  return 1;
}

static int run(rec_bench *b, const char *base) {
  handles h;
  if (open_both(b, base, &h) != HS_OK) return fail("opening the pool and its log");
  hs_status st = hs_smgr_create_if_missing(hs_pool_smgr(h.pool), REL, HS_FORK_MAIN, NULL);
  for (uint32_t i = 0; st == HS_OK && i < b->pages; i++) {
    hs_buf buf;
    st = hs_pool_extend(h.pool, REL, HS_FORK_MAIN, NULL, false, &buf, NULL);
    if (st == HS_OK) hs_buf_release(h.pool, buf);
  }
  if (st == HS_OK) st = hs_pool_checkpoint(h.pool);
  if (st != HS_OK) return fail("making the relation");
  /* The log the changes insert (hs_wal_stats bytes): not the sync points
   * the log adds after its own syncs, which replay reads past. */
  hs_wal_stats ws;
  hs_wal_stats_get(h.wal, &ws);
  uint64_t start = ws.bytes;
  bench_rng rng;
  bench_rng_seed(&rng, b->seed, 0);
  uint64_t changes = 0;
  uint64_t t0 = bench_now_ns();
  for (; st == HS_OK; hs_wal_stats_get(h.wal, &ws)) {
    if (ws.bytes - start >= b->log_bytes) break;
    if (bench_interrupted()) return 1;
    st = change_page(b, h.pool, bench_rng_below(&rng, (uint32_t)b->pages), changes++);
  }
  double write_seconds = (double)(bench_now_ns() - t0) / 1e9;
  if (st == HS_OK) st = hs_wal_flush(h.wal, hs_wal_insert_lsn(h.wal), HS_WAL_CAUSE_COMMIT, NULL);
  if (st != HS_OK) return fail("writing the log");
  hs_wal_stats_get(h.wal, &ws);
  hs_pool_abandon(h.pool); /* the crash */
  if (hs_wal_close(h.wal) != HS_OK) return fail("closing the log");

  uint64_t t1 = bench_now_ns();
  if (open_both(b, base, &h) != HS_OK) return fail("recovering");
  double open_seconds = (double)(bench_now_ns() - t1) / 1e9;
  hs_pool_recovery_stats rep;
  hs_pool_recovery_stats_get(h.pool, &rep);
  if (hs_pool_close(h.pool) != HS_OK || hs_wal_close(h.wal) != HS_OK)
    return fail("closing after recovery");

  double mb = (double)rep.bytes / 1e6;
  double mbps = rep.seconds > 0 ? mb / rep.seconds : 0;
  if (b->json) {
    json_out j;
    json_begin(&j, stdout);
    json_u64(&j, "pages", b->pages);
    json_str(&j, "checksums", b->checksums_off ? "off" : "on");
    json_u64(&j, "changes", changes);
    json_u64(&j, "log_bytes", rep.bytes);
    json_u64(&j, "records", rep.records);
    json_u64(&j, "images", rep.images);
    json_u64(&j, "applied", rep.applied);
    json_u64(&j, "skipped", rep.skipped);
    json_double(&j, "write_seconds", "%.3f", write_seconds);
    json_double(&j, "replay_seconds", "%.3f", rep.seconds);
    json_double(&j, "replay_mb_per_sec", "%.1f", mbps);
    json_double(&j, "checkpoint_seconds", "%.3f", rep.checkpoint_seconds);
    json_double(&j, "open_seconds", "%.3f", open_seconds);
    json_end_line(&j);
  } else {
    printf("wrote %" PRIu64 " changes to %" PRIu64 " pages in %.2f s: %.1f MB of log, %" PRIu64
           " full-page images\n",
           changes, b->pages, write_seconds, (double)ws.bytes / 1e6, ws.full_page_images);
    printf("recovery: %" PRIu64 " records, %.1f MB (%" PRIu64 " images restored, %" PRIu64
           " changes applied) in %.3f s = %.0f MB/s; end-of-recovery checkpoint %.3f s; "
           "open %.3f s\n",
           rep.records, mb, rep.images, rep.applied, rep.seconds, mbps, rep.checkpoint_seconds,
           open_seconds);
    printf("the log ended: %s\n", rep.why_end);
  }
  return 0;
}

int bench_recovery_main(int argc, char **argv) {
  rec_bench b;
  memset(&b, 0, sizeof b);
  parse_flags(&b, argc, argv);
  const char *parent = b.dir_flag ? b.dir_flag : bench_tempdir_parent();
  uint64_t need = b.log_bytes + (uint64_t)b.pages * 8192u * 2 + 4 * b.segment_bytes;
  if (bench_check_space(parent, need, "the relation and its log") != HS_OK) return fail("space");
  bench_signals_install();
  const char *base;
  if (bench_base_dir(b.dir_flag, "bench-recovery", b.tmpdir, sizeof b.tmpdir, &base) != HS_OK)
    return fail("making its directory");
  int rc = run(&b, base);
  if (!b.dir_flag) bench_tempdir_remove(b.tmpdir);
  return rc;
}

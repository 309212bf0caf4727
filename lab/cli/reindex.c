/*
 * cli/reindex.c — `hotset reindex --dir D --heap H --index I --force`: the
 * way out when a primary-key index and its heap disagree (a lookup refuses
 * with HS_ERR_CORRUPT and prints this command): the index page that failed
 * its checksum, a zeroed or foreign index file, or a heap that lost rows
 * (a page zeroed, its file given up with `hotset relations --forget`).
 *
 * The index is derived data: every entry can be recomputed from the heap's
 * versions, so a rebuild loses nothing the heap still holds. The command
 * opens the directory as an engine would — its log, recovery, the commit
 * log, the heap, the index — with the directory's lock held by the pool
 * (so it refuses while another process has the directory open), rebuilds,
 * and closes cleanly (a checkpoint). Page size, checksums and segment size
 * come from the control file. An engine's own log records (a resource
 * manager this tool does not know) stop the recovery with a message naming
 * it: such an engine rebuilds with hs_pk_index_rebuild itself.
 */
#include "cli/reindex.h"

#include "common/args.h"
#include "common/flags.h"
#include "common/resources.h"
#include "hotset/control.h"
#include "hotset/durability.h"
#include "hotset/heap.h"
#include "hotset/wal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define PROG "hotset reindex"

static const args_command command = {
    .cmd = {.prog = PROG},
    .synopsis = "--dir DIR [--wal DIR] --heap REL --index REL --force",
    .about = "Rebuilds the primary-key index in relation --index from the heap in relation\n"
             "--heap: each key's entry is set to the root of its update chain on the heap,\n"
             "every other entry cleared. The way out a lookup prints when the index and the\n"
             "heap disagree (the index damaged, or the heap's rows given up).\n",
    .notes = "Recovery runs first, as for any open. Without --force nothing is changed.\n"
             "Refuses while a pool has DIR open. Exit status 1 on an error or without --force.\n",
};
static const args_cmd *const cmd = &command.cmd;

typedef struct engine {
  hs_wal *wal;
  hs_pool *pool;
  hs_xact_mgr *xact;
  hs_heap *heap;
  hs_pk_index *ix;
} engine;

static void engine_abandon(engine *e) {
  hs_pk_index_close(e->ix);
  hs_heap_close(e->heap);
  hs_xact_close(e->xact);
  if (e->pool) hs_pool_close(e->pool);
  if (e->wal) hs_wal_close(e->wal);
}

static hs_status engine_open(const char *dir, const char *waldir, hs_relid heap_rel,
                             hs_relid index_rel, engine *e) {
  memset(e, 0, sizeof *e);
  hs_control c;
  hs_status st = hs_control_read(dir, &c);
  if (st != HS_OK) return st;
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = waldir;
  wo.segment_bytes = c.segment_bytes;
  wo.writer_delay_ms = 0;
  if ((st = hs_wal_open(&wo, &e->wal)) != HS_OK) return st;
  st = hs_heap_register_redo(e->wal);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.page_size = c.page_size;
  po.checksums = c.checksums;
  po.pool_pages = 256;
  po.wal = e->wal;
  if (st == HS_OK) st = hs_pool_open(&po, &e->pool);
  if (st == HS_OK) st = hs_xact_open(e->pool, &e->xact);
  if (st == HS_OK) st = hs_heap_open(e->pool, e->xact, heap_rel, &e->heap);
  if (st == HS_OK) st = hs_pk_index_open(e->pool, index_rel, &e->ix);
  return st;
}

static hs_status engine_close(engine *e) {
  hs_pk_index_close(e->ix);
  hs_heap_close(e->heap);
  hs_xact_close(e->xact);
  hs_status st = hs_pool_close(e->pool);
  hs_status closed = hs_wal_close(e->wal);
  return st != HS_OK ? st : closed;
}

int reindex_main(int argc, char **argv) {
  const char *dir = NULL, *waldir_arg = NULL;
  uint64_t heap_rel = 0, index_rel = 0;
  bool force = false;
  const args_opt opts[] = {
      BENCH_OPT_DATA_DIR(&dir),
      BENCH_OPT_WAL_DIR(&waldir_arg),
      {.name = "heap",
       .kind = ARGS_UINT,
       .dest = &heap_rel,
       .min = 1,
       .max = UINT32_MAX - 1,
       .arg = "REL",
       .help = "the heap's relation number"},
      {.name = "index",
       .kind = ARGS_UINT,
       .dest = &index_rel,
       .min = 1,
       .max = UINT32_MAX - 1,
       .arg = "REL",
       .help = "the index's relation number"},
      {.name = "force",
       .kind = ARGS_FLAG,
       .dest = &force,
       .help = "rebuild (without: say what would be done, change nothing)"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (!dir) args_usage_error(cmd, "--dir is required");
  if (!heap_rel || !index_rel) args_usage_error(cmd, "--heap and --index are required");
  if (heap_rel == index_rel) args_usage_error(cmd, "--heap and --index name one relation");
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    fprintf(stderr, PROG ": %s: not a directory\n", dir);
    return 1;
  }
  char waldir[BENCH_DIR_MAX + 8];
  snprintf(waldir, sizeof waldir, "%s", waldir_arg ? waldir_arg : "");
  if (!waldir_arg) snprintf(waldir, sizeof waldir, "%s/wal", dir);
  if (!force) {
    printf("%s: would rebuild the index in relation %" PRIu64 " from heap %" PRIu64
           "; run again with --force to do it\n",
           dir, index_rel, heap_rel);
    return 1;
  }
  engine e;
  hs_status st = engine_open(dir, waldir, (hs_relid)heap_rel, (hs_relid)index_rel, &e);
  if (st != HS_OK) {
    fprintf(stderr, PROG ": opening %s: %s\n", dir, hs_last_error());
    engine_abandon(&e);
    return 1;
  }
  uint64_t keys = 0, lost = 0;
  st = hs_pk_index_rebuild(e.ix, e.heap, &keys, &lost);
  if (st != HS_OK) {
    fprintf(stderr, PROG ": rebuilding index %" PRIu64 " of %s: %s\n", index_rel, dir,
            hs_last_error());
    engine_abandon(&e);
    return 1;
  }
  if ((st = engine_close(&e)) != HS_OK) {
    fprintf(stderr, PROG ": closing %s: %s\n", dir, hs_last_error());
    return 1;
  }
  printf("%s: index %" PRIu64 " rebuilt from heap %" PRIu64 ": %" PRIu64 " keys; %" PRIu64
         " keys whose newest version the heap no longer has were left out\n",
         dir, index_rel, heap_rel, keys, lost);
  return 0;
}

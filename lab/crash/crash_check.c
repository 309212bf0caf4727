/*
 * crash/crash_check.c — the crash test's pages, its data directory, and the
 * verification of what recovery left (`hotset crash-test --verify`).
 */
#include "common/json.h"
#include "core/error.h"
#include "crash/crash_test.h"
#include "hotset/page.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

uint64_t crash_segment_bytes = CRASH_SEGMENT_BYTES;
uint32_t crash_page_size = CRASH_PAGE_SIZE;
bool crash_bgwriter = false;
bool crash_heap = false;

/* Engine area layout (after hotset's page header). */
#define OFF_MAGIC   (HS_PAGE_HEADER_SIZE + 0)  /* u32 CRASH_MAGIC */
#define OFF_CLIENT  (HS_PAGE_HEADER_SIZE + 4)  /* u32 */
#define OFF_BLOCK   (HS_PAGE_HEADER_SIZE + 8)  /* u32 */
#define OFF_VALUE   (HS_PAGE_HEADER_SIZE + 16) /* u64 */
#define OFF_FILLER  (HS_PAGE_HEADER_SIZE + 24) /* u64 words to the page's end */
#define CRASH_MAGIC 0x48535243u                /* "CRSH" */

static uint32_t get_u32(const unsigned char *p, size_t off) {
  uint32_t v;
  memcpy(&v, p + off, sizeof v);
  return v;
}
static uint64_t get_u64(const unsigned char *p, size_t off) {
  uint64_t v;
  memcpy(&v, p + off, sizeof v);
  return v;
}
static void put_u32(unsigned char *p, size_t off, uint32_t v) {
  memcpy(p + off, &v, sizeof v);
}
static void put_u64(unsigned char *p, size_t off, uint64_t v) {
  memcpy(p + off, &v, sizeof v);
}

/* The filler's words: a xorshift sequence seeded by (value, block), so two
 * versions of a page differ in both halves and a half-written page matches
 * neither. */
static uint64_t filler_seed(hs_blockno block, uint64_t value) {
  uint64_t x = value * 0x9E3779B97F4A7C15ull ^ ((uint64_t)block << 32 | 0x5bd1e995u);
  return x ? x : 1;
}
static uint64_t filler_next(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

void crash_page_fill(void *page, uint32_t client, hs_blockno block, uint64_t value) {
  unsigned char *p = page;
  put_u32(p, OFF_MAGIC, CRASH_MAGIC);
  put_u32(p, OFF_CLIENT, client);
  put_u32(p, OFF_BLOCK, block);
  put_u32(p, OFF_BLOCK + 4, 0);
  put_u64(p, OFF_VALUE, value);
  uint64_t x = filler_seed(block, value);
  for (size_t off = OFF_FILLER; off + 8 <= crash_page_size; off += 8)
    put_u64(p, off, filler_next(&x));
}

crash_page_state crash_page_parse(const void *page, hs_blockno block, uint64_t *value) {
  const unsigned char *p = page;
  if (get_u32(p, OFF_MAGIC) != CRASH_MAGIC) {
    for (size_t off = HS_PAGE_HEADER_SIZE; off < crash_page_size; off++)
      if (p[off]) return CRASH_PAGE_BAD;
    *value = 0;
    return CRASH_PAGE_ZEROS;
  }
  if (get_u32(p, OFF_BLOCK) != block || get_u32(p, OFF_CLIENT) != block / CRASH_PAGES_PER_CLIENT ||
      get_u32(p, OFF_BLOCK + 4) != 0)
    return CRASH_PAGE_BAD;
  uint64_t v = get_u64(p, OFF_VALUE);
  uint64_t x = filler_seed(block, v);
  for (size_t off = OFF_FILLER; off + 8 <= crash_page_size; off += 8)
    if (get_u64(p, off) != filler_next(&x)) return CRASH_PAGE_BAD;
  *value = v;
  return CRASH_PAGE_OK;
}

/* The crash test's redo: a transaction record sets each of its pages (those
 * not restored from an image in the same record) to (client, value). */
static hs_status crash_redo(void *ctx, const hs_wal_read_record *rec, void *const *pages,
                            uint32_t page_size) {
  (void)ctx;
  if (rec->type == CRASH_REC_COMMIT) return HS_OK;
  crash_payload pl;
  if (rec->type != CRASH_REC_TXN || rec->len != sizeof pl || page_size != crash_page_size)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "crash-test record at %" PRIX64 ": type %u, %u bytes, pages of %u bytes",
                   rec->lsn, rec->type, rec->len, page_size);
  memcpy(&pl, rec->data, sizeof pl);
  for (uint32_t i = 0; i < rec->npages; i++)
    if (pages[i]) crash_page_fill(pages[i], pl.client, rec->pages[i].block, pl.value);
  return HS_OK;
}

/* Creates CRASH_REL (long enough for `clients`) and CRASH_COLD if missing,
 * synced; returns the clients CRASH_REL has room for. */
static hs_status make_relations(const char *dir, uint32_t clients, uint32_t *have) {
  hs_smgr *smgr;
  hs_status st = hs_smgr_open(dir, &(hs_smgr_options){.page_size = crash_page_size}, &smgr);
  if (st != HS_OK) return st;
  const struct {
    hs_relid rel;
    hs_blockno want;
  } rels[] = {{CRASH_REL, clients * CRASH_PAGES_PER_CLIENT},
              {CRASH_COLD, clients ? CRASH_COLD_BLOCKS : 0}};
  hs_blockno n = 0;
  for (size_t i = 0; st == HS_OK && i < sizeof rels / sizeof rels[0]; i++) {
    if (rels[i].want == 0) continue;
    st = hs_smgr_create_if_missing(smgr, rels[i].rel, HS_FORK_MAIN, NULL);
    if (st == HS_OK) st = hs_smgr_nblocks(smgr, rels[i].rel, HS_FORK_MAIN, &n);
    bool grew = false;
    for (; st == HS_OK && n < rels[i].want; n++, grew = true)
      st = hs_smgr_extend(smgr, rels[i].rel, HS_FORK_MAIN, NULL, NULL);
    if (st == HS_OK && grew) st = hs_smgr_sync(smgr, rels[i].rel, HS_FORK_MAIN);
  }
  if (st == HS_OK && hs_smgr_nblocks(smgr, CRASH_REL, HS_FORK_MAIN, &n) != HS_OK) n = 0;
  if (st == HS_OK && n < CRASH_PAGES_PER_CLIENT)
    st = hs_fail(HS_ERR_INVALID, 0, "%s holds no crash-test relation (run --workload first)", dir);
  hs_smgr_close(smgr);
  *have = n / CRASH_PAGES_PER_CLIENT;
  if (*have > CRASH_MAX_CLIENTS) *have = CRASH_MAX_CLIENTS;
  return st;
}

hs_status crash_db_open(const char *dir, uint32_t clients, bool workload, crash_db *db) {
  memset(db, 0, sizeof *db);
  hs_status st = make_relations(dir, clients, &db->clients);
  if (st != HS_OK) return st;
  char waldir[4200];
  snprintf(waldir, sizeof waldir, "%s/wal", dir);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = waldir;
  wo.segment_bytes = crash_segment_bytes;
  st = hs_wal_open(&wo, &db->wal);
  if (st != HS_OK) return st;
  st = hs_wal_register_rmgr(db->wal, CRASH_RMGR, "crash-test", crash_redo, NULL);
  /* The heap's redo before the pool opens: recovery runs inside it. */
  if (st == HS_OK && crash_heap) st = hs_heap_register_redo(db->wal);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.page_size = crash_page_size;
  po.wal = db->wal;
  po.checksums = true;
  if (workload) {
    /* Room for every client's pinned pages and a few more: the cold reads
     * then evict, in FIFO order, mostly dirty pages of CRASH_REL. */
    po.pool_pages = db->clients * CRASH_PAGES_PER_CLIENT + 8;
    /* The heap workload pins few pages at once, but the table, its index,
     * the commit log and their forks share the pool: small still, so it
     * evicts all the time. */
    if (crash_heap) po.pool_pages = 48;
    po.policy = "fifo";
    po.checkpoint_timeout_ms = 150;
    po.max_wal_size = 4 * crash_segment_bytes;
    po.checkpoint_completion_target = 0.5;
    if (crash_bgwriter) {
      /* Power-loss runs: a child lives a few thousand file operations,
       * so checkpoints come often enough to be cut in several times. */
      po.bgwriter_delay_ms = 10;
      po.checkpoint_timeout_ms = 40;
    }
  } else {
    po.pool_pages = 64;
  }
  if (st == HS_OK) st = hs_pool_open(&po, &db->pool);
  if (st != HS_OK) {
    hs_wal_close(db->wal);
    db->wal = NULL;
    return st;
  }
  if (crash_heap) {
    st = hs_xact_open(db->pool, &db->xact);
    if (st == HS_OK) st = hs_heap_open(db->pool, db->xact, CRASH_HEAP_REL, &db->heap);
    if (st == HS_OK) st = hs_pk_index_open(db->pool, CRASH_INDEX_REL, &db->ix);
    if (st != HS_OK) {
      char why[512];
      snprintf(why, sizeof why, "%s", hs_last_error());
      crash_db_close(db);
      return hs_fail(st, 0, "%s", why);
    }
  }
  return st;
}

hs_status crash_db_close(crash_db *db) {
  hs_status st = HS_OK;
  hs_pk_index_close(db->ix);
  hs_heap_close(db->heap);
  hs_xact_close(db->xact);
  db->ix = NULL;
  db->heap = NULL;
  db->xact = NULL;
  if (db->pool) {
    st = hs_pool_close(db->pool);
    if (st != HS_OK) hs_pool_abandon(db->pool);
  }
  db->pool = NULL;
  if (db->wal) {
    hs_status wst = hs_wal_close(db->wal);
    if (st == HS_OK) st = wst;
  }
  db->wal = NULL;
  return st;
}

/* Reads client c's pages; counts and reports what is wrong with them. */
static hs_status check_client(crash_db *db, uint32_t c, FILE *errs, crash_check *out) {
  uint64_t values[CRASH_PAGES_PER_CLIENT];
  bool have[CRASH_PAGES_PER_CLIENT] = {false};
  for (uint32_t i = 0; i < CRASH_PAGES_PER_CLIENT; i++) {
    hs_blockno blk = c * CRASH_PAGES_PER_CLIENT + i;
    hs_buf b;
    hs_status st =
        hs_pool_read(db->pool, CRASH_REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL);
    if (st == HS_ERR_CORRUPT) {
      out->corrupt_pages++;
      fprintf(errs, CRASH_PROG ": client %u, block %u fails its checksum: %s\n", c, blk,
              hs_last_error());
      continue;
    }
    if (st != HS_OK) return st;
    hs_buf_lock(db->pool, b, HS_LOCK_SHARE);
    crash_page_state s = crash_page_parse(hs_buf_page(db->pool, b), blk, &values[i]);
    hs_buf_unlock(db->pool, b);
    hs_buf_release(db->pool, b);
    if (s == CRASH_PAGE_BAD) {
      out->undetected_pages++;
      fprintf(errs,
              CRASH_PROG ": client %u, block %u passes its checksum but holds what no "
                         "transaction wrote\n",
              c, blk);
      continue;
    }
    have[i] = true;
  }
  /* The client's value: its pages' common value, or the lowest when they
   * disagree (a transaction there in part). */
  bool first = true, partial = false;
  uint64_t lo = 0, hi = 0;
  for (uint32_t i = 0; i < CRASH_PAGES_PER_CLIENT; i++) {
    if (!have[i]) continue;
    if (first || values[i] < lo) lo = values[i];
    if (first || values[i] > hi) hi = values[i];
    first = false;
  }
  partial = lo != hi;
  if (partial) {
    out->partial_clients++;
    fprintf(errs,
            CRASH_PROG ": client %u: its pages disagree (values %" PRIu64 " to %" PRIu64
                       "): a transaction there in part\n",
            c, lo, hi);
  }
  out->value[c] = lo;
  return HS_OK;
}

hs_status crash_check_dir(const char *dir, uint32_t clients, FILE *errs, crash_check *out) {
  memset(out, 0, sizeof *out);
  /* Opening would create a missing directory: a typo must not pass. */
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return hs_fail(HS_ERR_NOENT, errno, "%s is not a directory", dir);
  crash_db db;
  hs_status st = crash_db_open(dir, clients, false, &db);
  if (st != HS_OK) return st;
  hs_pool_recovery_stats_get(db.pool, &out->report);
  out->clients = db.clients;
  if (crash_heap)
    st = crash_heap_check(&db, errs, out);
  else
    for (uint32_t c = 0; st == HS_OK && c < db.clients; c++) st = check_client(&db, c, errs, out);
  if (st != HS_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", hs_last_error());
    crash_db_close(&db);
    return hs_fail(st, 0, "%s", why);
  }
  return crash_db_close(&db);
}

bool crash_check_failed(const crash_check *c) {
  return c->corrupt_pages || c->undetected_pages || c->partial_clients || c->heap_bad ||
         c->vacuum_failed;
}

int crash_verify_run(const char *dir, bool json) {
  crash_check c;
  if (crash_check_dir(dir, 0, stderr, &c) != HS_OK) {
    fprintf(stderr, CRASH_PROG ": verifying %s: %s\n", dir, hs_last_error());
    return 1;
  }
  for (uint32_t i = 0; i < c.clients; i++) {
    if (json) {
      json_out j;
      json_begin(&j, stdout);
      json_u64(&j, "client", i);
      json_u64(&j, "value", c.value[i]);
      json_end_line(&j);
    } else {
      printf("client %u value %" PRIu64 "\n", i, c.value[i]);
    }
  }
  fflush(stdout);
  const hs_pool_recovery_stats *r = &c.report;
  if (r->ran)
    fprintf(stderr,
            "recovery: %" PRIu64 " records, %" PRIu64 " bytes, %" PRIu64
            " page images, %.3f s, %.1f MB/s (%s); end checkpoint %.3f s\n",
            r->records, r->bytes, r->images, r->seconds,
            r->seconds > 0 ? (double)r->bytes / r->seconds / 1e6 : 0.0, r->why_end,
            r->checkpoint_seconds);
  else
    fputs("recovery: nothing to replay\n", stderr);
  return crash_check_failed(&c) ? 1 : 0;
}

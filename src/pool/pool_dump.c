/*
 * pool/pool_dump.c — a look at every buffer, like pg_buffercache.
 *
 * Each buffer is read under its header lock, so each row is consistent in
 * itself; the dump as a whole is not a snapshot (the pool keeps running).
 */
#include "core/error.h"
#include "pool/pool_internal.h"

#include <inttypes.h>
#include <stdio.h>

static void buffer_info(hs_pool *pool, uint32_t i, hs_buffer_info *bi) {
  hs_bufdesc *d = pool_desc(pool, (hs_buf)i);
  hs_bufstate *ds = pool_bstate(pool, (hs_buf)i);
  uint32_t s = buf_hdr_lock(ds);
  hs_buftag t = buf_tag_get(d);
  hs_lsn lsn = atomic_load_explicit(&d->lsn, memory_order_relaxed);
  uint32_t pins = pool_pin_count(pool, (hs_buf)i, s);
  buf_hdr_unlock(ds, s);
  bi->buf = (hs_buf)i;
  bi->valid = s & BM_VALID;
  bi->rel = t.rel;
  bi->fork = t.fork;
  bi->block = (s & BM_TAG_VALID) ? t.block : HS_INVALID_BLOCK;
  pthread_mutex_lock(&pool->policy_lock); /* standing reads the policy's state */
  bi->usage = (s & BM_TAG_VALID) ? hs_policy_standing(pool->policy, i) : 0;
  pthread_mutex_unlock(&pool->policy_lock);
  bi->pins = pins;
  bi->dirty = s & BM_DIRTY;
  bi->io_in_progress = s & BM_IO_IN_PROGRESS;
  bi->io_error = s & BM_IO_ERROR;
  bi->lsn = lsn;
}

hs_status hs_pool_dump(hs_pool *pool, hs_buffer_info *out, uint32_t cap) {
  if (!pool || !out) return hs_fail(HS_ERR_INVALID, 0, "hs_pool_dump: pool and out are required");
  if (cap < pool->nbuffers)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_dump: room for %u buffers, the pool has %u", cap,
                   pool->nbuffers);
  for (uint32_t i = 0; i < pool->nbuffers; i++) buffer_info(pool, i, &out[i]);
  return HS_OK;
}

hs_status hs_pool_dump_print(hs_pool *pool, FILE *out, bool json) {
  if (!pool || !out) return hs_fail(HS_ERR_INVALID, 0, "hs_pool_dump_print: bad argument");
  if (!json)
    fprintf(out, "%8s %10s %4s %10s %5s %4s %5s %5s %12s\n", "buffer", "relation", "fork", "block",
            "usage", "pins", "dirty", "valid", "lsn");
  for (uint32_t i = 0; i < pool->nbuffers; i++) {
    hs_buffer_info bi;
    buffer_info(pool, i, &bi);
    bool tagged = bi.block != HS_INVALID_BLOCK;
    if (json)
      fprintf(out,
              "{\"buffer\":%u,\"valid\":%s,\"relation\":%u,\"fork\":%d,\"block\":%" PRId64
              ",\"usage\":%u,\"pins\":%u,\"dirty\":%s,\"io_error\":%s,\"lsn\":%" PRIu64 "}\n",
              i, bi.valid ? "true" : "false", bi.rel, (int)bi.fork,
              tagged ? (int64_t)bi.block : (int64_t)-1, bi.usage, bi.pins,
              bi.dirty ? "true" : "false", bi.io_error ? "true" : "false", bi.lsn);
    else if (tagged)
      fprintf(out, "%8u %10u %4d %10u %5u %4u %5s %5s %12" PRIu64 "\n", i, bi.rel, (int)bi.fork,
              bi.block, bi.usage, bi.pins, bi.dirty ? "yes" : "no", bi.valid ? "yes" : "no",
              bi.lsn);
    else
      fprintf(out, "%8u %10s %4s %10s %5u %4u %5s %5s %12s\n", i, "-", "-", "-", bi.usage, bi.pins,
              "no", "no", "-");
  }
  return HS_OK;
}

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
  if (!pool || !out) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_dump: pool and out are required");
  if (cap < pool->nbuffers)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_dump: room for %u buffers, the pool has %u", cap,
                   pool->nbuffers);
  for (uint32_t i = 0; i < pool->nbuffers; i++) buffer_info(pool, i, &out[i]);
  return HS_OK;
}

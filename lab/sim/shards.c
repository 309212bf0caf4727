/*
 * sim/shards.c — spatially hashed sampling (see sim/shards.h).
 */
#include "sim/shards.h"

#include "core/error.h"
#include "core/hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Dense number 0 hashes to 0 under the bare mix, which would put the
 * trace's first object in every sample; a fixed salt breaks that tie. */
#define SHARDS_SALT UINT64_C(0x9E3779B97F4A7C15)

uint64_t hs_shards_threshold(double rate) {
  if (!(rate > 0) || rate > 1) return 0;
  return (uint64_t)llround(rate * (double)HS_SHARDS_MODULUS);
}

double hs_shards_rate(uint64_t threshold) {
  return (double)threshold / (double)HS_SHARDS_MODULUS;
}

uint64_t hs_shards_threshold_for(uint64_t threshold, double entries, unsigned floor) {
  if (floor == 0 || !(entries > 0)) return threshold;
  double want = (double)floor / entries;
  if (want <= hs_shards_rate(threshold)) return threshold;
  if (want >= 1) return HS_SHARDS_MODULUS;
  uint64_t t = (uint64_t)ceil(want * (double)HS_SHARDS_MODULUS);
  return t > threshold ? t : threshold;
}

bool hs_shards_keeps(uint32_t obj, uint64_t threshold) {
  return (hs_mix64((uint64_t)obj ^ SHARDS_SALT) & (HS_SHARDS_MODULUS - 1)) < threshold;
}

hs_status hs_shards_sample(const hs_sim_trace *t, uint64_t threshold, hs_sim_trace **out) {
  *out = NULL;
  if (threshold == 0 || threshold > HS_SHARDS_MODULUS)
    return hs_fail(HS_ERR_INVALID, 0, "%s: sampling threshold %llu is not in 1..%llu", t->path,
                   (unsigned long long)threshold, (unsigned long long)HS_SHARDS_MODULUS);
  hs_sim_trace *s = calloc(1, sizeof *s);
  /* new_id[o]: o's number in the sample, UINT32_MAX until first kept. */
  uint32_t *new_id = malloc((t->objects ? t->objects : 1) * sizeof *new_id);
  uint64_t kept = 0;
  for (uint64_t r = 0; r < t->requests; r++) kept += hs_shards_keeps(t->obj[r], threshold);
  if (s) {
    s->path = strdup(t->path);
    s->obj = malloc((kept ? kept : 1) * sizeof *s->obj);
    s->size = malloc((kept ? kept : 1) * sizeof *s->size);
    /* The sample keeps the trace's clock: a sampled request happens when
     * it happened in the whole trace. */
    if (t->time_ms) s->time_ms = malloc((kept ? kept : 1) * sizeof *s->time_ms);
  }
  if (!s || !new_id || !s->path || !s->obj || !s->size || (t->time_ms && !s->time_ms)) {
    free(new_id);
    hs_sim_trace_free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "%s: no memory for a sample of %llu requests", t->path,
                   (unsigned long long)kept);
  }
  if (kept == 0) {
    free(new_id);
    hs_sim_trace_free(s);
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: the sample at rate %g holds no request (%llu objects): raise the rate",
                   t->path, hs_shards_rate(threshold), (unsigned long long)t->objects);
  }
  for (uint64_t o = 0; o < t->objects; o++) new_id[o] = UINT32_MAX;
  /* Per sampled object, how often it was requested: for one_hit. */
  uint64_t *count = calloc(kept, sizeof *count);
  if (!count) {
    free(new_id);
    hs_sim_trace_free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "%s: no memory for a sample's objects", t->path);
  }
  s->min_size = UINT32_MAX;
  for (uint64_t r = 0; r < t->requests; r++) {
    uint32_t o = t->obj[r];
    if (!hs_shards_keeps(o, threshold)) continue;
    uint32_t size = hs_sim_size(t, r);
    if (new_id[o] == UINT32_MAX) {
      new_id[o] = (uint32_t)s->objects++;
      s->ws_bytes += size;
    }
    count[new_id[o]]++;
    if (s->time_ms) s->time_ms[s->requests] = t->time_ms[r];
    s->obj[s->requests] = new_id[o];
    s->size[s->requests++] = size;
    s->bytes_requested += size;
    if (size < s->min_size) s->min_size = size;
    if (size > s->max_size) s->max_size = size;
  }
  for (uint64_t o = 0; o < s->objects; o++) s->one_hit += count[o] == 1;
  free(count);
  free(new_id);
  s->bad_records = t->bad_records;
  s->sized = t->sized;
  s->timed = t->timed;
  s->format = t->format;
  s->compressed = t->compressed;
  memcpy(s->format_reason, t->format_reason, sizeof s->format_reason);
  hs_status st = t->next ? hs_sim_need_future(s) : HS_OK;
  if (st == HS_OK && t->rank) st = hs_sim_need_hindsight(s);
  if (st != HS_OK) {
    hs_sim_trace_free(s);
    return st;
  }
  *out = s;
  return HS_OK;
}

uint64_t hs_shards_scale_size(uint64_t size, uint64_t threshold) {
  uint64_t scaled = (uint64_t)llround((double)size * hs_shards_rate(threshold));
  return scaled ? scaled : 1;
}

static uint64_t unscale(uint64_t sampled, uint64_t threshold, uint64_t most) {
  double v = round((double)sampled / hs_shards_rate(threshold));
  return v >= (double)most ? most : (uint64_t)v;
}

void hs_shards_scale_result(hs_sim_result *r, uint64_t threshold, const hs_sim_trace *sample,
                            const hs_sim_trace *full) {
  r->misses = unscale(r->misses, threshold, full->requests);
  r->not_admitted = unscale(r->not_admitted, threshold, full->requests);
  /* A run counts bytes as its mode does (object mode: one a request, as
   * the one-pass curve does; else the sizes): the whole trace's total
   * counted the same way, else the sample's scaled. */
  if (r->bytes == sample->bytes_requested)
    r->bytes = full->bytes_requested;
  else if (r->bytes == r->requests)
    r->bytes = full->requests;
  else
    r->bytes = unscale(r->bytes, threshold, UINT64_MAX);
  r->byte_misses = unscale(r->byte_misses, threshold, r->bytes);
  r->requests = full->requests;
}

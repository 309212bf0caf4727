/*
 * sim/trace_binary.c — the fixed-size record formats: oraclegeneral, vscsi.
 *
 * Records are decoded in place from the source window, as many at a time
 * as the window and the caller's array allow, so the inner loop is loads
 * and stores only: no call, no branch on the format, no copy. Fields are
 * assembled from bytes (little-endian, unaligned, whatever the host), a
 * pattern gcc and clang compile to a single load on little-endian CPUs;
 * that is what lets the reader run at memory speed.
 *
 * A record is bad when the file ends inside it (the only thing that can be
 * wrong with an oraclegeneral record that the format itself can tell), or,
 * for vscsi, when its version field disagrees with the first record's: a
 * trace does not change versions midway, so that is a sign of garbage or of
 * files glued together. The vscsi version is taken from the first record,
 * as libCacheSim does; it fixes the record size for the whole file.
 */
#include "core/endian.h"
#include "sim/trace_internal.h"

#define OG_SIZE 24

hs_status trace_binary_start(hs_trace *t) {
  if (t->format == HS_TRACE_ORACLEGENERAL) {
    t->record_size = OG_SIZE;
    return HS_OK;
  }
  /* vscsi: the first record says which layout all of them have. */
  trace_src *s = &t->src;
  hs_status st = trace_src_fill(s, 40);
  if (st != HS_OK) return st;
  size_t avail = s->len - s->pos;
  t->record_size = 32;
  if (avail == 0) return HS_OK; /* an empty trace has no version */
  unsigned v1, v2;
  t->vscsi_version = trace_vscsi_version(s->buf + s->pos, avail, &v1, &v2);
  if (t->vscsi_version == 2) t->record_size = 40;
  if (t->vscsi_version != 0) return HS_OK;
  if (avail < 32) {
    /* Too short to hold any record: a truncated first record. */
    t->records = 1;
    s->pos = s->len;
    return trace_bad(t, HS_ERR_CORRUPT, "record 1: truncated (got %zu of 32 bytes)", avail);
  }
  if (avail < 40)
    return trace_fatal(t, HS_ERR_CORRUPT, 0,
                       "record 1: not vscsi: the version field holds 0x%04x (version %u), "
                       "want version 1 or 2",
                       v1, v1 >> 8);
  return trace_fatal(t, HS_ERR_CORRUPT, 0,
                     "record 1: not vscsi: the version field holds 0x%04x (version %u) for "
                     "v1 and 0x%04x (version %u) for v2, want version 1 or 2",
                     v1, v1 >> 8, v2, v2 >> 8);
}

/* The window holds fewer bytes than a record: refill, and if the file
 * ends inside a record, report it and drop its bytes. *more is false at
 * the end of the trace. */
static hs_status refill(hs_trace *t, bool *more) {
  trace_src *s = &t->src;
  size_t size = t->record_size;
  hs_status st = trace_src_fill(s, size);
  if (st != HS_OK) return st;
  size_t avail = s->len - s->pos;
  *more = avail >= size;
  if (avail == 0 || avail >= size) return HS_OK;
  t->records++;
  s->pos = s->len;
  char hint[160];
  return trace_bad(t, HS_ERR_CORRUPT, "record %llu: truncated (got %zu of %zu bytes)%s",
                   (unsigned long long)t->records, avail, size,
                   trace_format_hint(t, hint, sizeof hint));
}

hs_status trace_read_oraclegeneral(hs_trace *t, hs_request *reqs, size_t max, size_t *n) {
  trace_src *s = &t->src;
  size_t got = 0;
  while (got < max) {
    size_t avail = s->len - s->pos;
    if (avail < OG_SIZE) {
      bool more;
      hs_status st = refill(t, &more);
      if (st != HS_OK || !more) {
        *n = got;
        return st;
      }
      avail = s->len - s->pos;
    }
    size_t k = avail / OG_SIZE;
    if (k > max - got) k = max - got;
    const unsigned char *p = s->buf + s->pos;
    hs_request *r = reqs + got;
    for (size_t i = 0; i < k; i++, p += OG_SIZE) {
      r[i].time = le_get32(p);
      r[i].id = le_get64(p + 4);
      r[i].size = le_get32(p + 12);
      r[i].next = (int64_t)le_get64(p + 16);
      r[i].pid = 0;
      r[i].found = -1;
    }
    s->pos += k * OG_SIZE;
    got += k;
    t->records += k;
  }
  *n = got;
  return HS_OK;
}

hs_status trace_read_vscsi(hs_trace *t, hs_request *reqs, size_t max, size_t *n) {
  trace_src *s = &t->src;
  const size_t size = t->record_size;
  const bool v1 = t->vscsi_version == 1;
  /* lbn and ts sit at 16 and 24 in both layouts. */
  const size_t ver_off = v1 ? 14 : 2, len_off = v1 ? 4 : 8;
  size_t got = 0;
  while (got < max) {
    size_t avail = s->len - s->pos;
    if (avail < size) {
      bool more;
      hs_status st = refill(t, &more);
      if (st != HS_OK || !more) {
        *n = got;
        return st;
      }
      avail = s->len - s->pos;
    }
    size_t k = avail / size;
    if (k > max - got) k = max - got;
    const unsigned char *p = s->buf + s->pos;
    for (size_t i = 0; i < k; i++, p += size) {
      t->records++;
      unsigned ver = le_get16(p + ver_off) >> 8;
      if (ver != t->vscsi_version) {
        /* Consume it first, so a skipped record stays skipped. */
        s->pos = (size_t)(p + size - s->buf);
        hs_status st = trace_bad(t, HS_ERR_CORRUPT,
                                 "record %llu: vscsi version %u, but the first record's is %u",
                                 (unsigned long long)t->records, ver, t->vscsi_version);
        if (st != HS_OK) {
          *n = got;
          return st;
        }
        continue;
      }
      hs_request *r = reqs + got++;
      r->id = le_get64(p + 16);
      r->size = le_get32(p + len_off);
      r->time = le_get64(p + 24);
      r->next = HS_TRACE_NO_NEXT;
      r->pid = 0;
      r->found = -1;
    }
    s->pos = (size_t)(p - s->buf);
  }
  *n = got;
  return HS_OK;
}

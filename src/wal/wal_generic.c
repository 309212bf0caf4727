/*
 * wal/wal_generic.c — engine-neutral records and the resource-manager
 * table (see hotset/wal.h).
 *
 * A page change is logged as byte ranges of the page's new contents, as
 * PostgreSQL's generic WAL does, so an engine without redo code of its own
 * (or a test) can still make its changes recoverable; a full image serves
 * for a page's first change after a checkpoint, when a torn write may have
 * left half of it on disk. Redo checks every range against the page before
 * touching it: a record that does not fit is corrupt, reported, and never
 * half applied.
 */
#include "core/error.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

hs_status wal_log_image_checked(hs_wal *w, const hs_wal_page *ref, const void *page,
                                uint32_t page_size, hs_lsn redo_seen, bool *stale, hs_lsn *end) {
  if (!w || !ref || !page || page_size == 0)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_log_image: a log, a page reference and a page needed");
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_GENERIC,
                       .type = HS_WAL_GENERIC_IMAGE,
                       .npages = 1,
                       .pages = ref,
                       .data = page,
                       .len = page_size};
  return wal_insert_images(w, &rec, NULL, 0, redo_seen, stale, end);
}

hs_status hs_wal_log_image(hs_wal *w, const hs_wal_page *ref, const void *page, uint32_t page_size,
                           hs_lsn *end) {
  return wal_log_image_checked(w, ref, page, page_size, 0, NULL, end);
}

hs_status wal_log_change_checked(hs_wal *w, const hs_wal_page *ref, const void *page,
                                 uint32_t page_size, const hs_wal_range *ranges, uint32_t n,
                                 hs_lsn redo_seen, bool *stale, hs_lsn *end) {
  if (!w || !ref || !page || (n && !ranges) || page_size > UINT16_MAX + 1u)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_log_change: a log, a page reference, a page of at most 64 KiB and "
                   "ranges needed");
  uint64_t len = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (ranges[i].len == 0 || ranges[i].offset >= page_size ||
        ranges[i].len > page_size - ranges[i].offset)
      return hs_fail(HS_ERR_INVALID, 0,
                     "hs_wal_log_change: range %u (offset %u, %u bytes) is empty or outside a "
                     "page of %u bytes",
                     i, ranges[i].offset, ranges[i].len, page_size);
    len += 4 + ranges[i].len;
  }
  if (len > hs_wal_max_record(w))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_log_change: %" PRIu64 " bytes of ranges (at most %u): log an image", len,
                   hs_wal_max_record(w));
  unsigned char *buf = malloc(len ? (size_t)len : 1);
  if (!buf) return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for a page change record");
  unsigned char *p = buf;
  for (uint32_t i = 0; i < n; i++) {
    uint16_t off = (uint16_t)ranges[i].offset, l = (uint16_t)ranges[i].len;
    /* A range of exactly 64 KiB is only possible on a 64 KiB page from 0:
     * its length is stored as 0. */
    memcpy(p, &off, 2);
    memcpy(p + 2, &l, 2);
    memcpy(p + 4, (const unsigned char *)page + ranges[i].offset, ranges[i].len);
    p += 4 + ranges[i].len;
  }
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_GENERIC,
                       .type = HS_WAL_GENERIC_CHANGE,
                       .npages = 1,
                       .pages = ref,
                       .data = buf,
                       .len = (uint32_t)len};
  hs_status st = wal_insert_images(w, &rec, NULL, 0, redo_seen, stale, end);
  free(buf);
  return st;
}

hs_status hs_wal_log_change(hs_wal *w, const hs_wal_page *ref, const void *page, uint32_t page_size,
                            const hs_wal_range *ranges, uint32_t n, hs_lsn *end) {
  return wal_log_change_checked(w, ref, page, page_size, ranges, n, 0, NULL, end);
}

static hs_status corrupt(const hs_wal_read_record *rec, const char *why) {
  return hs_fail(HS_ERR_CORRUPT, 0,
                 "log record at %" PRIX64 " (generic, type %u, relation %u fork %d block %u): %s",
                 rec->lsn, rec->type, rec->npages ? rec->pages[0].rel : 0,
                 rec->npages ? (int)rec->pages[0].fork : 0, rec->npages ? rec->pages[0].block : 0,
                 why);
}

hs_status hs_wal_generic_redo(void *ctx, const hs_wal_read_record *rec, void *const *pages,
                              uint32_t page_size) {
  (void)ctx;
  if (rec->npages != 1 || !pages || !pages[0]) return corrupt(rec, "it must name one page");
  const unsigned char *d = rec->data;
  unsigned char *page = pages[0];
  if (rec->type == HS_WAL_GENERIC_IMAGE) {
    if (rec->len != page_size) return corrupt(rec, "an image of another page size");
    memcpy(page, d, page_size);
    return HS_OK;
  }
  if (rec->type != HS_WAL_GENERIC_CHANGE) return corrupt(rec, "an unknown type");
  /* Check every range first: a bad record changes nothing. */
  for (uint32_t pos = 0; pos < rec->len;) {
    uint16_t off, l;
    if (rec->len - pos < 4) return corrupt(rec, "a range header cut short");
    memcpy(&off, d + pos, 2);
    memcpy(&l, d + pos + 2, 2);
    uint32_t len = l ? l : UINT16_MAX + 1u;
    if (off >= page_size || len > page_size - off || len > rec->len - pos - 4)
      return corrupt(rec, "a range outside the page or the record");
    pos += 4 + len;
  }
  for (uint32_t pos = 0; pos < rec->len;) {
    uint16_t off, l;
    memcpy(&off, d + pos, 2);
    memcpy(&l, d + pos + 2, 2);
    uint32_t len = l ? l : UINT16_MAX + 1u;
    memcpy(page + off, d + pos + 4, len);
    pos += 4 + len;
  }
  return HS_OK;
}

hs_status hs_wal_register_rmgr(hs_wal *w, uint8_t id, const char *name, hs_wal_redo_fn redo,
                               void *ctx) {
  if (!w || !name || !name[0] || !redo)
    return hs_fail(HS_ERR_INVALID, 0, "hs_wal_register_rmgr: a log, a name and a redo needed");
  if (id < HS_WAL_RMGR_FIRST_USER)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_register_rmgr: id %u is hotset's own (engines use %u and up)", id,
                   HS_WAL_RMGR_FIRST_USER);
  pthread_mutex_lock(&w->rmgr_lock);
  hs_status st = HS_OK;
  if (w->rmgrs[id].redo)
    st = hs_fail(HS_ERR_BUSY, 0, "hs_wal_register_rmgr: id %u is taken by \"%s\"", id,
                 w->rmgrs[id].name);
  else
    w->rmgrs[id] = (wal_rmgr){.redo = redo, .ctx = ctx};
  if (st == HS_OK) snprintf(w->rmgrs[id].name, sizeof w->rmgrs[id].name, "%s", name);
  pthread_mutex_unlock(&w->rmgr_lock);
  return st;
}

const char *hs_wal_rmgr_name(const hs_wal *w, uint8_t id) {
  return w && w->rmgrs[id].redo ? w->rmgrs[id].name : NULL;
}

bool wal_rmgr_get(hs_wal *w, uint8_t id, hs_wal_redo_fn *redo, void **ctx) {
  pthread_mutex_lock(&w->rmgr_lock);
  *redo = w->rmgrs[id].redo;
  *ctx = w->rmgrs[id].ctx;
  pthread_mutex_unlock(&w->rmgr_lock);
  return *redo != NULL;
}

hs_status wal_register_builtin_rmgr(hs_wal *w, uint8_t id, const char *name, hs_wal_redo_fn redo,
                                    void *ctx) {
  if (!w || !redo || id >= HS_WAL_RMGR_FIRST_USER || id <= HS_WAL_RMGR_GENERIC)
    return hs_fail(HS_ERR_INVALID, 0, "wal_register_builtin_rmgr: id %u is not a built-in one", id);
  pthread_mutex_lock(&w->rmgr_lock);
  w->rmgrs[id] = (wal_rmgr){.redo = redo, .ctx = ctx};
  snprintf(w->rmgrs[id].name, sizeof w->rmgrs[id].name, "%s", name);
  pthread_mutex_unlock(&w->rmgr_lock);
  return HS_OK;
}

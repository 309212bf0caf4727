/* TEMPORARY stand-ins until the log's identity lands (deleted at merge). */
#include "core/error.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

uint64_t wal_system_id(const hs_wal *w) {
  (void)w;
  return 0x5eed;
}
bool wal_is_empty(const hs_wal *w) {
  return atomic_load(&((hs_wal *)w)->reserved_pub) == 0;
}
hs_status wal_adopt_identity(hs_wal *w, uint64_t id, hs_lsn start) {
  (void)w, (void)id, (void)start;
  return HS_OK;
}
const char *wal_open_why_end(const hs_wal *w) {
  (void)w;
  return "";
}
bool wal_open_end_corrupt(const hs_wal *w) {
  (void)w;
  return false;
}
void wal_set_redo_point(hs_wal *w, hs_lsn redo) {
  atomic_store(&w->redo, redo);
}
hs_status wal_checkpoint_log(hs_wal *w, hs_lsn redo, hs_lsn *checkpoint) {
  uint64_t a, b;
  return wal_checkpoint_end(w, redo, 0, checkpoint, &a, &b);
}
hs_status wal_recycle(hs_wal *w, hs_lsn redo, uint64_t keep_bytes, uint64_t *recycled,
                      uint64_t *removed) {
  (void)w, (void)redo, (void)keep_bytes;
  *recycled = *removed = 0;
  return HS_OK;
}
bool wal_record_is_checkpoint(const hs_wal_read_record *rec, hs_lsn *redo) {
  if (rec->rmgr != HS_WAL_RMGR_LOG || rec->type != WAL_LOG_CHECKPOINT || rec->len < 16)
    return false;
  *redo = wal_get64(rec->data);
  return true;
}

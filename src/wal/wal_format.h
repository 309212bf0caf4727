/*
 * wal/wal_format.h — a log record's bytes, shared by the writer and the
 * reader.
 *
 * A record is a 32-byte header, then 12 bytes per page it touches, then its
 * payload, padded with zeros to a multiple of 8 (so every header starts
 * aligned, and a record's end LSN is a multiple of 8). All fields are
 * little-endian:
 *
 *   0  u32 total    header + page refs + payload, without the padding
 *   4  u32 crc      CRC-32C of bytes [8, total), then of bytes [0, 4)
 *   8  u64 lsn      where the record starts: a stale record left in a reused
 *                   segment (or read from the wrong place) is out of place
 *  16  u64 prev     where the record before it starts (0 for the first)
 *  24  u8  rmgr, u8 type, u16 npages, u32 len (payload bytes)
 *  page ref: u32 rel, u32 block, u8 fork, u8 0, u16 image (the length of
 *            the page's full image carried by the record, in KiB; 0: none)
 *  then the payload, then the pages' images in the order of their refs
 *
 * The length comes first and is covered by the CRC, as in PostgreSQL's
 * XLogRecord; the CRC field itself is left out of its own sum. A header of
 * zeros is where a preallocated segment was never written: the end.
 *
 * Segments. Every segment begins with a 48-byte segment header, and the LSN
 * space counts its bytes: a segment starting at S holds its header in
 * [S, S + 48) and its first record at S + 48. Little-endian:
 *
 *   0  8 bytes   magic "HSWALSEG"
 *   8  u32       format version (1)
 *  12  u32       header size (48)
 *  16  u64       the log's system identifier (random, non-zero, chosen when
 *                the log's first segment is made; every segment repeats it)
 *  24  u64       the segment's start LSN (its name): a recycled spare keeps
 *                its old header, whose start is not its new name
 *  32  u64       the segment size
 *  40  u32       CRC-32C of bytes [0, 40)
 *  44  u32       0
 *
 * Records never cross a segment boundary, so every segment start + 48 is a
 * record start and the log can be read from its oldest segment without
 * knowing where a checkpoint was. A record that does not fit in the rest of
 * its segment goes right after the next segment's header; the rest of the
 * segment holds a switch record (HS_WAL_RMGR_LOG, WAL_LOG_SWITCH: a bare
 * 32-byte header whose prev is the last record, followed by zeros to the
 * segment's end) if at least a record header fits there, else (fewer than
 * 32 bytes left: 8, 16 or 24) only zeros — the gap rule, which writer and
 * reader both apply: a position with fewer than WAL_HEADER bytes left in its
 * segment is no record start, the next segment's is. The record after a
 * switch names the switch record as its prev; the one after a gap names
 * the record before the gap. The chain never breaks at a boundary.
 */
#ifndef HOTSET_WAL_FORMAT_H
#define HOTSET_WAL_FORMAT_H

#include "core/endian.h"
#include "hotset/wal.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define WAL_HEADER   32u
#define WAL_PAGE_REF 12u
#define WAL_ALIGN    8u

static inline uint64_t wal_align(uint64_t n) {
  return (n + WAL_ALIGN - 1) & ~(uint64_t)(WAL_ALIGN - 1);
}

/* Bytes of a record with `npages` pages and `len` bytes of payload, and
 * what it takes in the log (padded). */
static inline uint64_t wal_record_total(uint32_t npages, uint32_t len) {
  return WAL_HEADER + (uint64_t)WAL_PAGE_REF * npages + len;
}

/* The image length a page ref announces (bytes). */
static inline uint32_t wal_ref_image_len(const unsigned char *ref) {
  uint16_t kib;
  memcpy(&kib, ref + 10, 2);
  return (uint32_t)kib * 1024u;
}

static inline void wal_put32(unsigned char *p, uint32_t v) {
  le_put32(p, v);
}
static inline void wal_put64(unsigned char *p, uint64_t v) {
  le_put64(p, v);
}
static inline uint32_t wal_get32(const unsigned char *p) {
  return le_get32(p);
}
static inline uint64_t wal_get64(const unsigned char *p) {
  return le_get64(p);
}

/* The header and page refs of a record (crc left 0: filled in later). */
static inline void wal_encode_head(unsigned char *h, uint32_t total, hs_lsn lsn, hs_lsn prev,
                                   const hs_wal_record *rec, const void *const *images,
                                   uint32_t image_len) {
  memset(h, 0, WAL_HEADER);
  wal_put32(h, total);
  wal_put64(h + 8, lsn);
  wal_put64(h + 16, prev);
  h[24] = rec->rmgr;
  h[25] = rec->type;
  uint16_t np = rec->npages;
  memcpy(h + 26, &np, 2);
  wal_put32(h + 28, rec->len);
  unsigned char *ref = h + WAL_HEADER;
  for (uint16_t i = 0; i < rec->npages; i++, ref += WAL_PAGE_REF) {
    memset(ref, 0, WAL_PAGE_REF);
    wal_put32(ref, rec->pages[i].rel);
    wal_put32(ref + 4, rec->pages[i].block);
    ref[8] = (unsigned char)rec->pages[i].fork;
    uint16_t kib = images && images[i] ? (uint16_t)(image_len / 1024u) : 0;
    memcpy(ref + 10, &kib, 2);
  }
}

/* The log's own record types that the reader follows and never hands
 * out (WAL_LOG_CHECKPOINT, 200, is in wal_durable.h):
 *
 *  - WAL_LOG_SWITCH fills the rest of a segment (above);
 *  - WAL_LOG_SYNCED, a sync point: no page refs, payload u64 X, inserted
 *    after an fdatasync of the log returned, X being what that sync made
 *    durable (docs/wal.md, "The end of the log"): every byte of the log
 *    below X was on disk before this record was written. It is written
 *    with whatever is flushed next and need not itself be flushed. The
 *    reader takes a valid one after a record that fails its checks at a
 *    position below X, in the same segment, as proof that the failed bytes
 *    had been synced: damage, not a torn write.
 *
 * hs_wal_insert refuses both: the reader would hide a caller's record of
 * either type. */
enum { WAL_LOG_SWITCH = 201, WAL_LOG_SYNCED = 202 };
#define WAL_SYNC_POINT_LEN   8u /* its payload: X */
#define WAL_SYNC_POINT_BYTES (WAL_HEADER + WAL_SYNC_POINT_LEN)

#define WAL_SEG_HEADER  48u
#define WAL_SEG_MAGIC   "HSWALSEG"
#define WAL_SEG_VERSION 1u

/* Fills a segment header. */
void wal_seg_header_encode(unsigned char *h, uint64_t system_id, uint64_t start,
                           uint64_t segment_bytes);
/* What a segment's first WAL_SEG_HEADER bytes are. A header that passes
 * its CRC was written whole, but its fields are still checked before anyone
 * uses them (a segment size of 0 would be divided by): one that no hotset
 * writes is damage, like a bad CRC. */
typedef enum wal_seg_header_kind {
  WAL_SEG_ZEROS,         /* never written: a segment made ahead */
  WAL_SEG_DAMAGED,       /* not zeros, but bad magic or CRC, or a field out of range */
  WAL_SEG_OTHER_VERSION, /* magic and CRC pass, format version not WAL_SEG_VERSION: only
                            `version` is set (the rest of another format means nothing here) */
  WAL_SEG_VALID          /* every check passes: the fields below are set */
} wal_seg_header_kind;
typedef struct wal_seg_header {
  uint32_t version;
  /* system_id non-zero; segment_bytes a power of two from HS_WAL_MIN_SEGMENT
   * to HS_WAL_MAX_SEGMENT; start a multiple of it. */
  uint64_t system_id, start, segment_bytes;
  char damage[96]; /* WAL_SEG_DAMAGED: which check failed, and the value */
} wal_seg_header;
wal_seg_header_kind wal_seg_header_decode(const unsigned char *h, wal_seg_header *out);

/* True if a record (not a segment header) may start at `pos`: not inside a
 * segment header, and at least a record header left in the segment. */
static inline bool wal_is_record_pos(uint64_t pos, uint64_t segment_bytes) {
  uint64_t off = pos % segment_bytes;
  return off >= WAL_SEG_HEADER && segment_bytes - off >= WAL_HEADER;
}

/* A segment's file name: the LSN of its first byte, 16 hex digits. */
#define WAL_SEGMENT_NAME_LEN 16

#endif

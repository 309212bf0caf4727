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
 */
#ifndef HOTSET_WAL_FORMAT_H
#define HOTSET_WAL_FORMAT_H

#include "hotset/wal.h"

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
  memcpy(p, &v, 4); /* hotset runs on little-endian machines (x86-64, arm64) */
}
static inline void wal_put64(unsigned char *p, uint64_t v) {
  memcpy(p, &v, 8);
}
static inline uint32_t wal_get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t wal_get64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
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

/* A segment's file name: the LSN of its first byte, 16 hex digits. */
#define WAL_SEGMENT_NAME_LEN 16

#endif

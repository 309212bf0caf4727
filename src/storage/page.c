/*
 * storage/page.c — the page header's checksum (hotset/page.h).
 *
 * Verification is the hot part: every read through a pool with checksums
 * runs it. The checksum is computed first; only when it does not match is
 * the page checked for all zeros (a block that was never written), so an
 * intact page costs one CRC pass and nothing more.
 */
#include "hotset/page.h"

#include "core/crc32c.h"

#include <string.h>

enum { LSN_AT = 0, CHECKSUM_AT = 8, MAGIC_AT = 12, SYSTEM_AT = 14 };

uint64_t hs_page_lsn(const void *page) {
  uint64_t lsn;
  memcpy(&lsn, (const unsigned char *)page + LSN_AT, sizeof lsn);
  return lsn;
}

uint32_t hs_page_checksum(const void *page, uint32_t page_size, hs_blockno block) {
  const unsigned char *p = page;
  uint32_t crc = hs_crc32c(0, &block, sizeof block);
  crc = hs_crc32c(crc, p, CHECKSUM_AT);
  return hs_crc32c(crc, p + MAGIC_AT, page_size - MAGIC_AT);
}

void hs_page_stamp_system(void *page, uint32_t page_size, hs_blockno block, uint64_t lsn,
                          uint16_t system_tag) {
  unsigned char *p = page;
  uint16_t magic = HS_PAGE_MAGIC;
  memcpy(p + LSN_AT, &lsn, sizeof lsn);
  memcpy(p + MAGIC_AT, &magic, sizeof magic);
  memcpy(p + SYSTEM_AT, &system_tag, sizeof system_tag);
  uint32_t sum = hs_page_checksum(page, page_size, block);
  memcpy(p + CHECKSUM_AT, &sum, sizeof sum);
}

void hs_page_stamp(void *page, uint32_t page_size, hs_blockno block, uint64_t lsn) {
  hs_page_stamp_system(page, page_size, block, lsn, 0);
}

uint16_t hs_page_system_tag(uint64_t system_id) {
  /* Every bit of the id mixed into the top 16 (Fibonacci hashing): ids
   * are random, but two that differ anywhere then share a mark no more
   * often than chance. 0 means "no mark", so it is never one. */
  uint16_t tag = (uint16_t)((system_id * 0x9E3779B97F4A7C15ull) >> 48);
  return tag ? tag : 1;
}

uint16_t hs_page_system(const void *page) {
  uint16_t tag;
  memcpy(&tag, (const unsigned char *)page + SYSTEM_AT, sizeof tag);
  return tag;
}

static bool all_zeros(const unsigned char *p, uint32_t n) {
  /* Pages are at least 1 KiB and a power of two: compare in words. */
  for (uint32_t i = 0; i < n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, sizeof w);
    if (w) return false;
  }
  return true;
}

bool hs_page_verify(const void *page, uint32_t page_size, hs_blockno block, uint32_t *expected,
                    uint32_t *found) {
  const unsigned char *p = page;
  uint32_t want = hs_page_checksum(page, page_size, block), have;
  uint16_t magic;
  memcpy(&have, p + CHECKSUM_AT, sizeof have);
  memcpy(&magic, p + MAGIC_AT, sizeof magic);
  bool ok = want == have && magic == HS_PAGE_MAGIC;
  if (!ok && all_zeros(p, page_size)) {
    ok = true;
    want = have = 0;
  }
  if (expected) *expected = want;
  if (found) *found = have;
  return ok;
}

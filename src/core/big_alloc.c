/*
 * core/big_alloc.c — big arrays on huge pages where the system allows
 * (core/big_alloc.h). PostgreSQL's huge_pages=try, in two steps: explicit
 * huge pages first (they exist only if an administrator reserved them, and
 * then they are the surest), transparent ones second.
 */
#include "core/big_alloc.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#define HUGE_BYTES ((size_t)2 << 20) /* x86-64's and arm64's usual huge page */

#define SMALL_BYTES ((size_t)4096)

/* The mapping's length for `bytes`, the same in big_alloc and big_free (the
 * caller passes its own `bytes` to both): whole huge pages for a region of
 * one or more, whole small pages below that — a small pool's arrays are not
 * worth 2 MiB each. */
static size_t mapped_bytes(size_t bytes) {
  size_t unit = bytes >= HUGE_BYTES ? HUGE_BYTES : SMALL_BYTES;
  return (bytes + unit - 1) / unit * unit;
}

/* An anonymous mapping of `len` (a multiple of HUGE_BYTES) starting on a
 * HUGE_BYTES boundary, so transparent huge pages can cover it from its
 * first byte: map one huge page more and trim both ends. */
static void *map_aligned(size_t len) {
  size_t over = len + HUGE_BYTES;
  char *p = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  uintptr_t start = ((uintptr_t)p + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
  size_t head = start - (uintptr_t)p, tail = over - head - len;
  if (head) munmap(p, head);
  if (tail) munmap((char *)start + len, tail);
  return (void *)start;
}

void *big_alloc(size_t bytes, hs_huge_pages mode, hs_huge_pages_used *used) {
  hs_huge_pages_used ignored;
  if (!used) used = &ignored;
  *used = HS_HUGE_PAGES_NONE;
  if (bytes == 0) bytes = 1;
  size_t len = mapped_bytes(bytes);
  if (len < HUGE_BYTES) {
    void *s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return s == MAP_FAILED ? NULL : s;
  }
  if (mode != HS_HUGE_PAGES_OFF) {
#ifdef MAP_HUGETLB
    void *h =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (h != MAP_FAILED) {
      *used = HS_HUGE_PAGES_EXPLICIT;
      return h;
    }
#endif
  }
  void *p = map_aligned(len);
  if (!p) return NULL;
#ifdef MADV_HUGEPAGE
  if (mode != HS_HUGE_PAGES_OFF && madvise(p, len, MADV_HUGEPAGE) == 0)
    *used = HS_HUGE_PAGES_TRANSPARENT;
#endif
#ifdef MADV_NOHUGEPAGE
  if (mode == HS_HUGE_PAGES_OFF) (void)madvise(p, len, MADV_NOHUGEPAGE);
#endif
  if (mode == HS_HUGE_PAGES_ON && *used == HS_HUGE_PAGES_NONE) {
    munmap(p, len);
    errno = EOPNOTSUPP;
    return NULL;
  }
  return p;
}

void *big_alloc_aligned(size_t bytes, size_t align, hs_huge_pages mode, hs_huge_pages_used *used) {
  if (align <= SMALL_BYTES || mapped_bytes(bytes ? bytes : 1) >= HUGE_BYTES)
    return big_alloc(bytes, mode, used); /* a page, or a huge page: aligned enough */
  if (used) *used = HS_HUGE_PAGES_NONE;
  if (align > HUGE_BYTES || (align & (align - 1)) != 0) {
    errno = EINVAL;
    return NULL;
  }
  return map_aligned(mapped_bytes(bytes ? bytes : 1));
}

void big_free(void *p, size_t bytes) {
  if (!p) return;
  munmap(p, mapped_bytes(bytes ? bytes : 1));
}

void big_advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  uintptr_t start = ((uintptr_t)p + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
  uintptr_t end = ((uintptr_t)p + bytes) / HUGE_BYTES * HUGE_BYTES;
  if (p && end > start) (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

/*
 * heap/heap_page.c — the heap's slotted page (heap/heap_page.h).
 *
 * Why line pointers at all: a tuple's address (page, slot) is what indexes
 * store, and compaction must be able to move the bytes without touching the
 * indexes. So the slot is an indirection that stays put; only the offset in
 * it changes. A deleted tuple goes through two steps: DEAD (its bytes can be
 * reclaimed, but an index may still hold the slot, so the slot may not be
 * reused) and, once the index entries are gone, UNUSED (free for any new
 * tuple). PostgreSQL's LP_DEAD and LP_UNUSED are the same two steps.
 */
#include "heap/heap_page.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

#define H(page)     ((unsigned char *)(page) + HS_PAGE_HEADER_SIZE)
#define STATE_SHIFT 14
#define LEN_MASK    0x3FFFu

static uint32_t get32(const void *page, uint32_t at) {
  uint32_t v;
  memcpy(&v, H(page) + at, 4);
  return v;
}
static void put32(void *page, uint32_t at, uint32_t v) {
  memcpy(H(page) + at, &v, 4);
}
static uint16_t get16(const void *page, uint32_t at) {
  uint16_t v;
  memcpy(&v, H(page) + at, 2);
  return v;
}
static void put16(void *page, uint32_t at, uint16_t v) {
  memcpy(H(page) + at, &v, 2);
}

static uint32_t lower_of(const void *page) {
  return get32(page, 0);
}
static uint32_t upper_of(const void *page) {
  return get32(page, 4);
}

/* Slot s's line pointer, as its offset and length|state word. */
static uint32_t lp_at(uint16_t slot) {
  return HEAP_PAGE_FIRST_LP + (uint32_t)(slot - 1) * HEAP_LINE_POINTER;
}
static void lp_get(const void *page, uint16_t slot, uint16_t *off, uint16_t *len,
                   heap_lp_state *state) {
  const unsigned char *p = (const unsigned char *)page + lp_at(slot);
  uint16_t o, w;
  memcpy(&o, p, 2);
  memcpy(&w, p + 2, 2);
  *off = o;
  *len = w & LEN_MASK;
  *state = (heap_lp_state)(w >> STATE_SHIFT);
}
static void lp_set(void *page, uint16_t slot, uint16_t off, uint16_t len, heap_lp_state state) {
  unsigned char *p = (unsigned char *)page + lp_at(slot);
  uint16_t w = (uint16_t)((len & LEN_MASK) | ((unsigned)state << STATE_SHIFT));
  memcpy(p, &off, 2);
  memcpy(p + 2, &w, 2);
}

void heap_page_init(void *page, uint32_t page_size) {
  memset(H(page), 0, page_size - HS_PAGE_HEADER_SIZE);
  put32(page, 0, HEAP_PAGE_FIRST_LP);
  put32(page, 4, page_size);
}

bool heap_page_is_new(const void *page) {
  return lower_of(page) == 0 && upper_of(page) == 0;
}

uint32_t heap_page_slots(const void *page) {
  uint32_t lower = lower_of(page);
  return lower > HEAP_PAGE_FIRST_LP ? (lower - HEAP_PAGE_FIRST_LP) / HEAP_LINE_POINTER : 0;
}

uint32_t heap_page_free(const void *page) {
  uint32_t lower = lower_of(page), upper = upper_of(page);
  return upper > lower ? upper - lower : 0;
}

/* The first UNUSED slot, or 0 if a new line pointer is needed. */
static uint16_t free_slot(const void *page) {
  uint32_t n = heap_page_slots(page);
  for (uint32_t s = 1; s <= n; s++) {
    uint16_t off, len;
    heap_lp_state st;
    lp_get(page, (uint16_t)s, &off, &len, &st);
    if (st == HEAP_LP_UNUSED) return (uint16_t)s;
  }
  return 0;
}

bool heap_page_fits(const void *page, uint32_t len) {
  if (len == 0 || len > HEAP_MAX_TUPLE) return false;
  bool reuse = free_slot(page) != 0;
  if (!reuse && heap_page_slots(page) >= HEAP_PAGE_MAX_SLOTS) return false;
  return heap_page_free(page) >= len + (reuse ? 0 : HEAP_LINE_POINTER);
}

/* The header's own bounds: what every change relies on (heap_page_check
 * walks the line pointers too, for pages read from disk). */
static hs_status header_ok(const void *page, uint32_t page_size) {
  uint32_t lower = lower_of(page), upper = upper_of(page);
  if (lower < HEAP_PAGE_FIRST_LP || lower > upper || upper > page_size ||
      (lower - HEAP_PAGE_FIRST_LP) % HEAP_LINE_POINTER)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "heap page: line pointers end at %u and tuples start at %u in a page of %u "
                   "bytes",
                   lower, upper, page_size);
  return HS_OK;
}

hs_status heap_page_add(void *page, uint32_t page_size, const void *tuple, uint32_t len,
                        uint16_t *slot) {
  if (len == 0 || len > HEAP_MAX_TUPLE)
    return hs_fail(HS_ERR_INVALID, 0, "heap page: a tuple of %u bytes (1 to %u)", len,
                   HEAP_MAX_TUPLE);
  hs_status st = header_ok(page, page_size);
  if (st != HS_OK) return st;
  if (!heap_page_fits(page, len))
    return hs_fail(HS_ERR_NOSPACE, 0, "heap page: no room for a tuple of %u bytes (%u free)", len,
                   heap_page_free(page));
  uint16_t s = free_slot(page);
  if (!s) {
    s = (uint16_t)(heap_page_slots(page) + 1);
    put32(page, 0, lower_of(page) + HEAP_LINE_POINTER);
  }
  uint32_t upper = upper_of(page) - len;
  memcpy((unsigned char *)page + upper, tuple, len);
  put32(page, 4, upper);
  lp_set(page, s, (uint16_t)upper, (uint16_t)len, HEAP_LP_NORMAL);
  *slot = s;
  return HS_OK;
}

hs_status heap_page_put(void *page, uint32_t page_size, uint16_t slot, const void *tuple,
                        uint32_t len) {
  if (len == 0 || len > HEAP_MAX_TUPLE || slot == 0)
    return hs_fail(HS_ERR_INVALID, 0, "heap page: a tuple of %u bytes at slot %u", len, slot);
  hs_status st = header_ok(page, page_size);
  if (st != HS_OK) return st;
  uint32_t n = heap_page_slots(page);
  if (slot <= n && heap_page_state(page, slot) != HEAP_LP_UNUSED)
    return hs_fail(HS_ERR_INVALID, 0, "heap page: slot %u is taken", slot);
  uint32_t grow = slot > n ? (slot - n) * HEAP_LINE_POINTER : 0;
  if (heap_page_free(page) < len + grow)
    return hs_fail(HS_ERR_NOSPACE, 0, "heap page: no room for %u bytes at slot %u (%u free)", len,
                   slot, heap_page_free(page));
  for (uint32_t s = n + 1; s < slot; s++) lp_set(page, (uint16_t)s, 0, 0, HEAP_LP_UNUSED);
  if (grow) put32(page, 0, lower_of(page) + grow);
  uint32_t upper = upper_of(page) - len;
  memcpy((unsigned char *)page + upper, tuple, len);
  put32(page, 4, upper);
  lp_set(page, slot, (uint16_t)upper, (uint16_t)len, HEAP_LP_NORMAL);
  return HS_OK;
}

heap_lp_state heap_page_state(const void *page, uint16_t slot) {
  if (slot == 0 || slot > heap_page_slots(page)) return HEAP_LP_UNUSED;
  uint16_t off, len;
  heap_lp_state st;
  lp_get(page, slot, &off, &len, &st);
  return st;
}

hs_status heap_page_get(const void *page, uint32_t page_size, uint16_t slot, void **tuple,
                        uint32_t *len) {
  if (heap_page_state(page, slot) != HEAP_LP_NORMAL)
    return hs_fail(HS_ERR_NOENT, 0, "heap page: slot %u holds no tuple", slot);
  uint16_t off, l;
  heap_lp_state st;
  lp_get(page, slot, &off, &l, &st);
  if (off < upper_of(page) || (uint32_t)off + l > page_size || l == 0)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "heap page: slot %u points at %u bytes at %u, outside the tuples [%u, %u)", slot,
                   l, off, upper_of(page), page_size);
  *tuple = (unsigned char *)page + off;
  *len = l;
  return HS_OK;
}

static hs_status change_state(void *page, uint32_t page_size, uint16_t slot, heap_lp_state from,
                              heap_lp_state to, const char *what) {
  hs_status st = header_ok(page, page_size);
  if (st != HS_OK) return st;
  if (heap_page_state(page, slot) != from)
    return hs_fail(HS_ERR_INVALID, 0, "heap page: slot %u cannot become %s (state %d)", slot, what,
                   (int)heap_page_state(page, slot));
  uint16_t off, len;
  heap_lp_state old;
  lp_get(page, slot, &off, &len, &old);
  /* A DEAD slot keeps its bytes until compaction; UNUSED forgets them. */
  if (to == HEAP_LP_UNUSED) off = len = 0;
  lp_set(page, slot, off, len, to);
  if (to == HEAP_LP_DEAD) heap_page_set_flags(page, heap_page_flags(page) | HEAP_PAGE_HAS_DEAD);
  return HS_OK;
}

hs_status heap_page_set_dead(void *page, uint32_t page_size, uint16_t slot) {
  return change_state(page, page_size, slot, HEAP_LP_NORMAL, HEAP_LP_DEAD, "dead");
}

hs_status heap_page_set_unused(void *page, uint32_t page_size, uint16_t slot) {
  return change_state(page, page_size, slot, HEAP_LP_DEAD, HEAP_LP_UNUSED, "unused");
}

typedef struct live_tuple {
  uint16_t slot, off, len;
} live_tuple;

/* Highest offset first: tuples are moved towards the page's end in that
 * order, so a move never overwrites a tuple not yet moved. */
static int by_offset_desc(const void *a, const void *b) {
  const live_tuple *x = a, *y = b;
  return x->off < y->off ? 1 : x->off > y->off ? -1 : 0;
}

uint32_t heap_page_compact(void *page, uint32_t page_size) {
  if (heap_page_check(page, page_size) != HS_OK) return 0;
  uint32_t n = heap_page_slots(page), before = heap_page_free(page);
  live_tuple *live = malloc((n ? n : 1) * sizeof *live);
  if (!live) return 0; /* nothing moved: the page is as it was */
  uint32_t nlive = 0;
  for (uint32_t s = 1; s <= n; s++) {
    uint16_t off, len;
    heap_lp_state st;
    lp_get(page, (uint16_t)s, &off, &len, &st);
    if (st == HEAP_LP_NORMAL) live[nlive++] = (live_tuple){(uint16_t)s, off, len};
    if (st == HEAP_LP_DEAD) lp_set(page, (uint16_t)s, 0, 0, HEAP_LP_DEAD); /* bytes reclaimed */
  }
  qsort(live, nlive, sizeof *live, by_offset_desc);
  uint32_t upper = page_size;
  for (uint32_t i = 0; i < nlive; i++) {
    upper -= live[i].len;
    memmove((unsigned char *)page + upper, (unsigned char *)page + live[i].off, live[i].len);
    lp_set(page, live[i].slot, (uint16_t)upper, live[i].len, HEAP_LP_NORMAL);
  }
  free(live);
  /* Trailing UNUSED line pointers go back to free space. */
  while (n > 0 && heap_page_state(page, (uint16_t)n) == HEAP_LP_UNUSED) n--;
  put32(page, 0, HEAP_PAGE_FIRST_LP + n * HEAP_LINE_POINTER);
  put32(page, 4, upper);
  return heap_page_free(page) - before;
}

uint16_t heap_page_flags(const void *page) {
  return get16(page, 8);
}
void heap_page_set_flags(void *page, uint16_t flags) {
  put16(page, 8, flags);
}
uint64_t heap_page_prune_xid(const void *page) {
  uint64_t v;
  memcpy(&v, H(page) + 16, 8);
  return v;
}
void heap_page_set_prune_xid(void *page, uint64_t xid) {
  memcpy(H(page) + 16, &xid, 8);
}

static int by_offset_asc(const void *a, const void *b) {
  const live_tuple *x = a, *y = b;
  return x->off < y->off ? -1 : x->off > y->off ? 1 : 0;
}

hs_status heap_page_check(const void *page, uint32_t page_size) {
  hs_status hst = header_ok(page, page_size);
  if (hst != HS_OK) return hst;
  uint32_t upper = upper_of(page);
  uint32_t n = heap_page_slots(page);
  live_tuple *t = malloc((n ? n : 1) * sizeof *t);
  if (!t) return hs_fail(HS_ERR_NOMEM, 0, "no memory to check a heap page");
  uint32_t k = 0;
  hs_status st = HS_OK;
  for (uint32_t s = 1; s <= n && st == HS_OK; s++) {
    uint16_t off, len;
    heap_lp_state state;
    lp_get(page, (uint16_t)s, &off, &len, &state);
    if (state > HEAP_LP_DEAD)
      st = hs_fail(HS_ERR_CORRUPT, 0, "heap page: slot %u has state %d", s, (int)state);
    else if (state == HEAP_LP_NORMAL &&
             (len == 0 || off < upper || (uint32_t)off + len > page_size))
      st = hs_fail(HS_ERR_CORRUPT, 0,
                   "heap page: slot %u points at %u bytes at %u, outside the tuples [%u, %u)", s,
                   len, off, upper, page_size);
    else if (state == HEAP_LP_NORMAL)
      t[k++] = (live_tuple){(uint16_t)s, off, len};
  }
  qsort(t, k, sizeof *t, by_offset_asc);
  for (uint32_t i = 1; i < k && st == HS_OK; i++)
    if ((uint32_t)t[i - 1].off + t[i - 1].len > t[i].off)
      st = hs_fail(HS_ERR_CORRUPT, 0, "heap page: the tuples of slots %u and %u overlap",
                   t[i - 1].slot, t[i].slot);
  free(t);
  return st;
}

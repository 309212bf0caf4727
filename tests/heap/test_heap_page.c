/*
 * tests/test_heap_page.c — the heap's slotted page (src/heap/heap_page.h):
 * tuples go in until the page is full and come back byte for byte; slots
 * keep their numbers through deletion and compaction; DEAD slots are not
 * reused until they are UNUSED; compaction frees exactly the dead bytes;
 * every page size from 1 KiB to 64 KiB; a corrupt page is refused naming
 * what is wrong, never read out of bounds; wrong state changes are refused.
 * A seeded random sequence of operations is checked against a model after
 * every step.
 */
#include "check.h"
#include "heap/heap_page.h"

#include <stdlib.h>
#include <string.h>

static void fill(unsigned char *t, uint32_t len, uint32_t tag) {
  for (uint32_t i = 0; i < len; i++) t[i] = (unsigned char)(tag * 31 + i * 7 + 1);
}

static bool same(const void *page, uint32_t size, uint16_t slot, uint32_t len, uint32_t tag) {
  void *t;
  uint32_t l;
  if (heap_page_get(page, size, slot, &t, &l) != HS_OK || l != len) return false;
  unsigned char want[HEAP_MAX_TUPLE];
  fill(want, len, tag);
  return memcmp(t, want, len) == 0;
}

static void test_fill_and_read(uint32_t size) {
  unsigned char *page = aligned_alloc(64, size);
  memset(page, 0, size);
  CHECK(heap_page_is_new(page));
  heap_page_init(page, size);
  CHECK(!heap_page_is_new(page));
  CHECK_EQ(heap_page_free(page), size - HEAP_PAGE_FIRST_LP);
  CHECK_OK(heap_page_check(page, size));
  unsigned char t[200];
  uint32_t n = 0;
  uint16_t slot;
  while (heap_page_fits(page, 100)) {
    fill(t, 100, n);
    CHECK_OK(heap_page_add(page, size, t, 100, &slot));
    CHECK_EQ(slot, n + 1);
    n++;
  }
  /* Full: exactly what the arithmetic says. */
  CHECK_EQ(n, (size - HEAP_PAGE_FIRST_LP) / (100 + HEAP_LINE_POINTER));
  CHECK_ST(heap_page_add(page, size, t, 100, &slot), HS_ERR_NOSPACE);
  for (uint32_t i = 0; i < n; i++) CHECK(same(page, size, (uint16_t)(i + 1), 100, i));
  CHECK_OK(heap_page_check(page, size));
  free(page);
}

static void test_dead_unused_compact(void) {
  enum { SIZE = 8192 };
  static unsigned char page[SIZE];
  heap_page_init(page, SIZE);
  unsigned char t[300];
  uint16_t slot;
  for (uint32_t i = 0; i < 10; i++) {
    fill(t, 50 + i * 10, i);
    REQUIRE(heap_page_add(page, SIZE, t, 50 + i * 10, &slot) == HS_OK);
  }
  uint32_t before = heap_page_free(page);
  /* Slots 3 and 7 deleted: DEAD keeps the slot and, until compaction, the bytes. */
  CHECK_OK(heap_page_set_dead(page, SIZE, 3));
  CHECK_OK(heap_page_set_dead(page, SIZE, 7));
  CHECK(heap_page_flags(page) & HEAP_PAGE_HAS_DEAD);
  CHECK_EQ(heap_page_state(page, 3), HEAP_LP_DEAD);
  CHECK_EQ(heap_page_free(page), before);
  void *p;
  uint32_t l;
  CHECK_ST(heap_page_get(page, SIZE, 3, &p, &l), HS_ERR_NOENT);
  /* A DEAD slot is not reused: a new tuple gets slot 11. */
  fill(t, 40, 100);
  CHECK_OK(heap_page_add(page, SIZE, t, 40, &slot));
  CHECK_EQ(slot, 11);
  /* Compaction frees exactly the dead tuples' bytes; slots keep numbers. */
  uint32_t freed = heap_page_compact(page, SIZE);
  CHECK_EQ(freed, (50 + 2 * 10) + (50 + 6 * 10));
  for (uint32_t i = 0; i < 10; i++)
    if (i != 2 && i != 6) CHECK(same(page, SIZE, (uint16_t)(i + 1), 50 + i * 10, i));
  CHECK(same(page, SIZE, 11, 40, 100));
  CHECK_OK(heap_page_check(page, SIZE));
  /* Wrong state changes are refused and change nothing. */
  CHECK_ST(heap_page_set_unused(page, SIZE, 1), HS_ERR_INVALID); /* NORMAL -> UNUSED */
  CHECK_ST(heap_page_set_dead(page, SIZE, 3), HS_ERR_INVALID);   /* DEAD -> DEAD */
  CHECK_ST(heap_page_set_dead(page, SIZE, 99), HS_ERR_INVALID);  /* past the array */
  CHECK_ST(heap_page_set_dead(page, SIZE, 0), HS_ERR_INVALID);
  CHECK(same(page, SIZE, 1, 50, 0));
  /* Once UNUSED, slot 3 is the next one given. */
  CHECK_OK(heap_page_set_unused(page, SIZE, 3));
  fill(t, 60, 200);
  CHECK_OK(heap_page_add(page, SIZE, t, 60, &slot));
  CHECK_EQ(slot, 3);
  CHECK(same(page, SIZE, 3, 60, 200));
  /* Trailing UNUSED line pointers are given back by compaction. */
  CHECK_OK(heap_page_set_dead(page, SIZE, 11));
  CHECK_OK(heap_page_set_unused(page, SIZE, 11));
  uint32_t slots = heap_page_slots(page);
  heap_page_compact(page, SIZE);
  CHECK_EQ(heap_page_slots(page), slots - 1);
  /* Tuple sizes at their limits. */
  CHECK_ST(heap_page_add(page, SIZE, t, 0, &slot), HS_ERR_INVALID);
  CHECK_ST(heap_page_add(page, SIZE, t, HEAP_MAX_TUPLE + 1, &slot), HS_ERR_INVALID);
  heap_page_set_prune_xid(page, 12345);
  CHECK_EQ(heap_page_prune_xid(page), 12345);
}

static void test_big_tuples_64k(void) {
  enum { SIZE = 65536 };
  unsigned char *page = aligned_alloc(64, SIZE);
  heap_page_init(page, SIZE);
  static unsigned char t[HEAP_MAX_TUPLE];
  uint16_t slot;
  uint32_t n = 0;
  while (heap_page_fits(page, HEAP_MAX_TUPLE)) {
    fill(t, HEAP_MAX_TUPLE, n);
    CHECK_OK(heap_page_add(page, SIZE, t, HEAP_MAX_TUPLE, &slot));
    n++;
  }
  CHECK_EQ(n, 3); /* 4 × 16383 + line pointers + headers > 64 KiB */
  for (uint32_t i = 0; i < n; i++) CHECK(same(page, SIZE, (uint16_t)(i + 1), HEAP_MAX_TUPLE, i));
  CHECK_OK(heap_page_check(page, SIZE));
  free(page);
}

static void put32_at(unsigned char *page, uint32_t at, uint32_t v) {
  memcpy(page + at, &v, 4);
}

static void test_corruption(void) {
  enum { SIZE = 4096 };
  static unsigned char page[SIZE], saved[SIZE];
  heap_page_init(page, SIZE);
  unsigned char t[100];
  uint16_t slot;
  for (uint32_t i = 0; i < 5; i++) {
    fill(t, 100, i);
    REQUIRE(heap_page_add(page, SIZE, t, 100, &slot) == HS_OK);
  }
  memcpy(saved, page, SIZE);
  void *p;
  uint32_t l;
  /* upper past the page. */
  put32_at(page, HS_PAGE_HEADER_SIZE + 4, SIZE + 8);
  CHECK_ST(heap_page_check(page, SIZE), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "tuples start at");
  CHECK_ST(heap_page_add(page, SIZE, t, 10, &slot), HS_ERR_CORRUPT);
  memcpy(page, saved, SIZE);
  /* lower past upper. */
  put32_at(page, HS_PAGE_HEADER_SIZE, SIZE - 4);
  CHECK_ST(heap_page_check(page, SIZE), HS_ERR_CORRUPT);
  memcpy(page, saved, SIZE);
  /* A line pointer past the page's end: refused, not followed. */
  uint16_t off = SIZE - 10;
  memcpy(page + HEAP_PAGE_FIRST_LP + 2 * HEAP_LINE_POINTER, &off, 2);
  CHECK_ST(heap_page_get(page, SIZE, 3, &p, &l), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "slot 3");
  CHECK_ST(heap_page_check(page, SIZE), HS_ERR_CORRUPT);
  memcpy(page, saved, SIZE);
  /* Two tuples overlapping. */
  uint16_t off1;
  memcpy(&off1, page + HEAP_PAGE_FIRST_LP, 2);
  off1 = (uint16_t)(off1 - 50);
  memcpy(page + HEAP_PAGE_FIRST_LP + HEAP_LINE_POINTER, &off1, 2);
  CHECK_ST(heap_page_check(page, SIZE), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "overlap");
  memcpy(page, saved, SIZE);
  /* A state that does not exist. */
  uint16_t w = (uint16_t)(100 | (3u << 14));
  memcpy(page + HEAP_PAGE_FIRST_LP + 2, &w, 2);
  CHECK_ST(heap_page_check(page, SIZE), HS_ERR_CORRUPT);
}

/* Redo's placement: a tuple at a given slot, the array grown to it. */
static void test_put_at_slot(void) {
  enum { SIZE = 4096 };
  static unsigned char page[SIZE];
  heap_page_init(page, SIZE);
  unsigned char t[100];
  fill(t, 100, 7);
  CHECK_OK(heap_page_put(page, SIZE, 5, t, 100));
  CHECK_EQ(heap_page_slots(page), 5);
  for (uint16_t s = 1; s <= 4; s++) CHECK_EQ(heap_page_state(page, s), HEAP_LP_UNUSED);
  CHECK(same(page, SIZE, 5, 100, 7));
  CHECK_ST(heap_page_put(page, SIZE, 5, t, 100), HS_ERR_INVALID); /* taken */
  fill(t, 100, 8);
  CHECK_OK(heap_page_put(page, SIZE, 2, t, 100)); /* an UNUSED one below */
  CHECK(same(page, SIZE, 2, 100, 8));
  uint16_t slot;
  CHECK_OK(heap_page_add(page, SIZE, t, 10, &slot)); /* add takes the first UNUSED */
  CHECK_EQ(slot, 1);
  CHECK_ST(heap_page_put(page, SIZE, 0, t, 10), HS_ERR_INVALID);
  CHECK_ST(heap_page_put(page, SIZE, 2000, t, 10), HS_ERR_NOSPACE); /* the array cannot grow so */
  CHECK_OK(heap_page_check(page, SIZE));
}

/* Random adds, deletions, unuse and compactions against a model. */
static void test_model(uint64_t seed) {
  enum { SIZE = 8192, MAXS = 1000 };
  static unsigned char page[SIZE];
  heap_page_init(page, SIZE);
  static int32_t tag_of[MAXS + 1]; /* -1 none; -2 dead */
  static uint32_t len_of[MAXS + 1];
  for (int i = 0; i <= MAXS; i++) tag_of[i] = -1;
  uint64_t x = seed;
  uint32_t next_tag = 0, failures = 0;
  for (int step = 0; step < 20000; step++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t r = (uint32_t)(x >> 33), op = r % 10;
    uint16_t slot;
    if (op < 5) {
      uint32_t len = 1 + (r >> 8) % 300;
      unsigned char t[300];
      fill(t, len, next_tag);
      bool fits = heap_page_fits(page, len);
      hs_status st = heap_page_add(page, SIZE, t, len, &slot);
      if (fits != (st == HS_OK)) failures++;
      if (st == HS_OK) {
        if (slot > MAXS || tag_of[slot] != -1) failures++;
        tag_of[slot] = (int32_t)next_tag++;
        len_of[slot] = len;
      }
    } else if (op < 8) {
      uint32_t n = heap_page_slots(page);
      if (!n) continue;
      slot = (uint16_t)(1 + (r >> 8) % n);
      hs_status st = heap_page_set_dead(page, SIZE, slot);
      if ((st == HS_OK) != (tag_of[slot] >= 0)) failures++;
      if (st == HS_OK) tag_of[slot] = -2;
      if (op == 7 && tag_of[slot] == -2) {
        if (heap_page_set_unused(page, SIZE, slot) != HS_OK) failures++;
        tag_of[slot] = -1;
      }
    } else if (op == 8) {
      heap_page_compact(page, SIZE);
    }
    if (heap_page_check(page, SIZE) != HS_OK) failures++;
  }
  for (uint32_t s = 1; s <= heap_page_slots(page); s++) {
    heap_lp_state st = heap_page_state(page, (uint16_t)s);
    if (tag_of[s] >= 0) {
      if (!same(page, SIZE, (uint16_t)s, len_of[s], (uint32_t)tag_of[s])) failures++;
    } else if (st != (tag_of[s] == -2 ? HEAP_LP_DEAD : HEAP_LP_UNUSED)) {
      failures++;
    }
  }
  if (failures) fprintf(stderr, "seed %llu: %u mismatches\n", (unsigned long long)seed, failures);
  CHECK_EQ(failures, 0);
}

int main(void) {
  for (uint32_t size = 1024; size <= 65536; size *= 2) test_fill_and_read(size);
  test_dead_unused_compact();
  test_big_tuples_64k();
  test_corruption();
  test_put_at_slot();
  for (uint64_t seed = 1; seed <= 5; seed++) test_model(seed);
  return check_finish();
}

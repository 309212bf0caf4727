/*
 * tests/test_crc32c.c — CRC-32C (src/core/crc32c.c): the published check
 * values, the instruction and the tables against a bit-at-a-time reference
 * at every length up to past a kilobyte and every start alignment, chaining
 * at every split, and four threads making the first call at once (the
 * choice of implementation must be race-free; the TSan build runs this).
 *
 * Without SSE4.2 the comparisons with the instruction print one SKIPPED
 * line and everything else still runs.
 */
#include "check.h"
#include "core/crc32c.h"

#include <pthread.h>

/* The definition itself, one bit at a time: independent of the library's
 * tables and of the instruction, so all three agreeing means something. */
static uint32_t reference_crc32c(uint32_t crc, const void *data, size_t len) {
  const unsigned char *p = data;
  crc = ~crc;
  for (size_t i = 0; i < len; i++) {
    crc ^= p[i];
    for (int bit = 0; bit < 8; bit++) crc = (crc & 1u) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

enum { FIRST_USE_THREADS = 4 };

typedef struct first_use_arg {
  pthread_barrier_t *start;
  uint32_t result;
} first_use_arg;

static void *first_use_thread(void *p) {
  first_use_arg *a = p;
  pthread_barrier_wait(a->start);
  a->result = hs_crc32c(0, "123456789", 9);
  return NULL;
}

/* Must run before anything else in the process calls into crc32c.c. */
static void test_first_use_from_threads(void) {
  pthread_barrier_t start;
  REQUIRE(pthread_barrier_init(&start, NULL, FIRST_USE_THREADS) == 0);
  pthread_t threads[FIRST_USE_THREADS];
  first_use_arg args[FIRST_USE_THREADS];
  for (int i = 0; i < FIRST_USE_THREADS; i++) {
    args[i] = (first_use_arg){.start = &start};
    REQUIRE(pthread_create(&threads[i], NULL, first_use_thread, &args[i]) == 0);
  }
  for (int i = 0; i < FIRST_USE_THREADS; i++) {
    pthread_join(threads[i], NULL);
    CHECK_EQ(args[i].result, 0xE3069283u);
  }
  pthread_barrier_destroy(&start);
}

static void check_all_agree(const void *data, size_t len, uint32_t want) {
  CHECK_EQ(reference_crc32c(0, data, len), want);
  CHECK_EQ(hs_crc32c_portable(0, data, len), want);
  CHECK_EQ(hs_crc32c(0, data, len), want);
  if (hs_crc32c_hw_available()) CHECK_EQ(hs_crc32c_hw(0, data, len), want);
}

/* The values published for CRC-32C (the iSCSI RFC 3720's examples and the
 * usual "123456789" check), confirmed by the reference loop first. */
static void test_check_values(void) {
  unsigned char buf[32];
  check_all_agree("123456789", 9, 0xE3069283u);
  memset(buf, 0x00, sizeof buf);
  check_all_agree(buf, sizeof buf, 0x8A9136AAu);
  memset(buf, 0xFF, sizeof buf);
  check_all_agree(buf, sizeof buf, 0x62A8AB43u);
  for (int i = 0; i < 32; i++) buf[i] = (unsigned char)i;
  check_all_agree(buf, sizeof buf, 0x46DD794Eu);
  check_all_agree("", 0, 0);
}

enum { MAX_LEN = 1100, MAX_MISALIGN = 7 };

static void fill_pseudo_random(unsigned char *buf, size_t len, uint64_t seed) {
  uint64_t x = seed;
  for (size_t i = 0; i < len; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = (unsigned char)(x >> 24);
  }
}

/* Every length crosses the 8-byte steps and leaves every tail; every start
 * offset misaligns the word reads. Counted mismatches, not one CHECK per
 * case, so a failure prints a few lines rather than thousands. */
static void test_every_length_and_alignment(void) {
  static unsigned char buf[MAX_LEN + MAX_MISALIGN + 8];
  fill_pseudo_random(buf, sizeof buf, 0x9E3779B97F4A7C15u);
  bool hw = hs_crc32c_hw_available();
  if (!hw)
    check_skip("test_crc32c",
               "every_length: this CPU lacks SSE4.2's crc32 instruction; only the tables checked");
  unsigned portable_wrong = 0, hw_wrong = 0, dispatched_wrong = 0;
  for (size_t offset = 0; offset <= MAX_MISALIGN; offset++)
    for (size_t len = 0; len <= MAX_LEN; len++) {
      const unsigned char *p = buf + offset;
      uint32_t want = reference_crc32c(0, p, len);
      if (hs_crc32c_portable(0, p, len) != want && portable_wrong++ < 5)
        fprintf(stderr, "portable wrong at offset %zu length %zu\n", offset, len);
      if (hw && hs_crc32c_hw(0, p, len) != want && hw_wrong++ < 5)
        fprintf(stderr, "hw wrong at offset %zu length %zu\n", offset, len);
      if (hs_crc32c(0, p, len) != want && dispatched_wrong++ < 5)
        fprintf(stderr, "hs_crc32c wrong at offset %zu length %zu\n", offset, len);
    }
  CHECK_EQ(portable_wrong, 0);
  CHECK_EQ(hw_wrong, 0);
  CHECK_EQ(dispatched_wrong, 0);
}

/* A record is checksummed in pieces (header, then payload): continuing from
 * the first piece's value must equal one pass over the whole. */
static void test_chaining(void) {
  enum { LEN = 300 };
  unsigned char buf[LEN];
  fill_pseudo_random(buf, sizeof buf, 42);
  uint32_t whole = reference_crc32c(0, buf, LEN);
  bool hw = hs_crc32c_hw_available();
  unsigned wrong = 0;
  for (size_t split = 0; split <= LEN; split++) {
    wrong += hs_crc32c(hs_crc32c(0, buf, split), buf + split, LEN - split) != whole;
    wrong +=
        hs_crc32c_portable(hs_crc32c_portable(0, buf, split), buf + split, LEN - split) != whole;
    if (hw) wrong += hs_crc32c_hw(hs_crc32c_hw(0, buf, split), buf + split, LEN - split) != whole;
    wrong += reference_crc32c(reference_crc32c(0, buf, split), buf + split, LEN - split) != whole;
  }
  CHECK_EQ(wrong, 0);
}

int main(void) {
  test_first_use_from_threads();
  test_check_values();
  test_every_length_and_alignment();
  test_chaining();
  return check_finish();
}

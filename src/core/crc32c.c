/*
 * core/crc32c.c — CRC-32C's two implementations and the choice between them
 * (see crc32c.h for the code itself and why this one).
 *
 * Portable: slicing-by-8. The plain table method looks up one byte at a
 * time, each lookup waiting for the one before. Eight tables, where table k
 * holds the effect of a byte followed by k zero bytes, let eight bytes be
 * looked up independently and XORed together, so the CPU overlaps the
 * loads. The bytes are assembled one by one, never loaded as a word, so the
 * code is the same on either byte order and at any alignment.
 *
 * Hardware: the crc32 instruction folds 8 bytes into the remainder per
 * step. Only the functions that use it are compiled for SSE4.2 (the target
 * attribute), so the library as a whole still runs on any x86-64. Data is
 * copied into a uint64_t rather than read through a cast pointer: the
 * buffer may start anywhere, and memcpy is the defined way to read an
 * unaligned word (it compiles to one load).
 *
 * The tables and the CPU check are set up once, under pthread_once, which
 * also publishes them to every thread that calls afterwards.
 */
#include "core/crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

/* The generator, bit-reversed: bit 0 of each byte is processed first. */
#define CRC32C_POLY_REFLECTED 0x82F63B78u

typedef uint32_t crc32c_fn(uint32_t crc, const void *data, size_t len);

static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;
/* crc32c_tables[k][b]: the remainder of byte b followed by k zero bytes. */
static uint32_t crc32c_tables[8][256];
static bool crc32c_cpu_has_instruction;
static crc32c_fn *crc32c_chosen;

static uint32_t crc32c_table_driven(uint32_t crc, const void *data, size_t len);
#if defined(__x86_64__)
static uint32_t crc32c_instruction(uint32_t crc, const void *data, size_t len);
#endif

static void crc32c_init(void) {
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t r = b;
    for (int bit = 0; bit < 8; bit++) r = (r >> 1) ^ (CRC32C_POLY_REFLECTED & (0u - (r & 1u)));
    crc32c_tables[0][b] = r;
  }
  for (int k = 1; k < 8; k++)
    for (int b = 0; b < 256; b++) {
      uint32_t prev = crc32c_tables[k - 1][b];
      crc32c_tables[k][b] = (prev >> 8) ^ crc32c_tables[0][prev & 0xFFu];
    }

  crc32c_chosen = crc32c_table_driven;
#if defined(__x86_64__)
  __builtin_cpu_init();
  crc32c_cpu_has_instruction = __builtin_cpu_supports("sse4.2");
  if (crc32c_cpu_has_instruction) crc32c_chosen = crc32c_instruction;
#endif
}

static uint32_t crc32c_table_driven(uint32_t crc, const void *data, size_t len) {
  const unsigned char *p = data;
  uint32_t(*t)[256] = crc32c_tables;
  crc = ~crc;
  while (len >= 8) {
    uint32_t low =
        crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    crc = t[7][low & 0xFFu] ^ t[6][(low >> 8) & 0xFFu] ^ t[5][(low >> 16) & 0xFFu] ^
          t[4][low >> 24] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    len -= 8;
  }
  while (len--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFFu];
  return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_instruction(uint32_t crc, const void *data,
                                                                     size_t len) {
  const unsigned char *p = data;
  uint64_t remainder = ~crc;
  while (len >= 8) {
    uint64_t word;
    memcpy(&word, p, sizeof word);
    remainder = _mm_crc32_u64(remainder, word);
    p += 8;
    len -= 8;
  }
  uint32_t r = (uint32_t)remainder;
  while (len--) r = _mm_crc32_u8(r, *p++);
  return ~r;
}
#endif

uint32_t hs_crc32c(uint32_t crc, const void *data, size_t len) {
  pthread_once(&crc32c_once, crc32c_init);
  return crc32c_chosen(crc, data, len);
}

uint32_t hs_crc32c_portable(uint32_t crc, const void *data, size_t len) {
  pthread_once(&crc32c_once, crc32c_init);
  return crc32c_table_driven(crc, data, len);
}

bool hs_crc32c_hw_available(void) {
  pthread_once(&crc32c_once, crc32c_init);
  return crc32c_cpu_has_instruction;
}

uint32_t hs_crc32c_hw(uint32_t crc, const void *data, size_t len) {
#if defined(__x86_64__)
  return crc32c_instruction(crc, data, len);
#else
  return hs_crc32c_portable(crc, data, len);
#endif
}

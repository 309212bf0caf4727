/*
 * sim/trace_id.c — object ids from text (csv and txt traces).
 *
 * Numbers are kept as they are, so a block trace's ids read the same from
 * its csv, txt and binary encodings (the test suite checks exactly that on
 * the CloudPhysics trace). A number is decimal digits only, or 0x/0X and
 * up to 16 hex digits, and must fit 64 bits; "-5", "1e3" or a 21-digit
 * number are text.
 *
 * Text is hashed: FNV-1a over its bytes, then a 64-bit finalizer (the
 * multiply-xorshift mix of MurmurHash3's fmix64). FNV alone is weak in the
 * high bits for short keys that differ only at the end (obj1, obj2, ...),
 * and simulators bucket ids by their bits; the finalizer spreads every
 * input bit over the whole word. A hashed id can in principle equal a
 * numeric id or another hash; with 64 bits and traces of at most billions
 * of distinct ids that is negligible, and cheaper than interning strings.
 *
 * Quoted CSV fields arrive with "" standing for one quote; they are
 * hashed as if unescaped, without copying them first.
 */
#include "core/hash.h"
#include "sim/trace_internal.h"

#define FNV64_OFFSET 0xcbf29ce484222325ull
#define FNV64_PRIME  0x100000001b3ull

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool trace_parse_u64(const char *p, size_t len, uint64_t *out) {
  if (len == 0) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (p[i] < '0' || p[i] > '9') return false;
    unsigned d = (unsigned)(p[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

static bool parse_hex(const char *p, size_t len, uint64_t *out) {
  if (len < 3 || len > 18 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X')) return false;
  uint64_t v = 0;
  for (size_t i = 2; i < len; i++) {
    int d = hex_digit(p[i]);
    if (d < 0) return false;
    v = v << 4 | (uint64_t)d;
  }
  *out = v;
  return true;
}

uint64_t trace_id_from_text(const char *p, size_t len, bool quoted) {
  uint64_t v;
  if (trace_parse_u64(p, len, &v) || parse_hex(p, len, &v)) return v;
  uint64_t h = FNV64_OFFSET;
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char)p[i];
    h *= FNV64_PRIME;
    /* "" inside a quoted field is one quote: hash it once. */
    if (quoted && p[i] == '"' && i + 1 < len && p[i + 1] == '"') i++;
  }
  return hs_mix64(h);
}

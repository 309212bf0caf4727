/*
 * core/size.c — the byte-size grammar (see size.h for what is accepted and
 * why the decimal-looking units are refused).
 */
#include "core/size.h"

#include "core/error.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

typedef struct size_unit {
  const char *name; /* matched without regard to case */
  unsigned shift;   /* accepted: a power of two */
  unsigned pow10;   /* refused: the power of ten it may be read as */
} size_unit;

static const size_unit units[] = {
    {"", 0, 0},     {"b", 0, 0},   {"kib", 10, 0}, {"mib", 20, 0}, {"gib", 30, 0},
    {"tib", 40, 0}, {"k", 10, 3},  {"kb", 10, 3},  {"m", 20, 6},   {"mb", 20, 6},
    {"g", 30, 9},   {"gb", 30, 9}, {"t", 40, 12},  {"tb", 40, 12},
};

/* What to write instead of `v` followed by the ambiguous unit u. */
static hs_status refuse_ambiguous(const char *s, uint64_t v, const char *unit_text,
                                  const size_unit *u) {
  static const char *const binary[] = {"KiB", "MiB", "GiB", "TiB"};
  const char *bin = binary[u->shift / 10 - 1];
  uint64_t dec = v;
  bool dec_fits = true;
  for (unsigned i = 0; i < u->pow10 && dec_fits; i++) {
    dec_fits = dec <= UINT64_MAX / 10;
    dec *= 10;
  }
  if (!dec_fits)
    return hs_fail(HS_ERR_INVALID, 0,
                   "\"%s\": %s is ambiguous (10^%u or 2^%u bytes?); write %" PRIu64 "%s", s,
                   unit_text, u->pow10, u->shift, v, bin);
  return hs_fail(HS_ERR_INVALID, 0,
                 "\"%s\": %s is ambiguous (10^%u or 2^%u bytes?); write %" PRIu64 "%s, or %" PRIu64
                 " for the decimal size",
                 s, unit_text, u->pow10, u->shift, v, bin, dec);
}

hs_status hs_size_parse(const char *s, uint64_t *out) {
  if (!s || !*s) return hs_fail(HS_ERR_INVALID, 0, "an empty size");
  const char *p = s;
  uint64_t v = 0;
  bool overflow = false;
  for (; isdigit((unsigned char)*p); p++) {
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) overflow = true;
    v = v * 10 + d;
  }
  if (p == s)
    return hs_fail(HS_ERR_INVALID, 0,
                   "\"%s\" is not a byte size (a whole number with an optional B, KiB, MiB, GiB "
                   "or TiB)",
                   s);
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    const size_unit *u = &units[i];
    if (strcasecmp(p, u->name) != 0) continue;
    if (u->pow10) return refuse_ambiguous(s, v, p, u);
    if (overflow || (u->shift && v > (UINT64_MAX >> u->shift)))
      return hs_fail(HS_ERR_INVALID, 0, "\"%s\" is more than 2^64 bytes", s);
    *out = v << u->shift;
    return HS_OK;
  }
  return hs_fail(HS_ERR_INVALID, 0,
                 "\"%s\" is not a byte size (a whole number with an optional B, KiB, MiB, GiB or "
                 "TiB)",
                 s);
}

/*
 * core/size.c — the byte-size grammar (see size.h for what is accepted and
 * why every unit is a power of 1024).
 */
#include "core/size.h"

#include "core/error.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

typedef struct size_unit {
  const char *name; /* matched without regard to case */
  unsigned shift;   /* the unit is 2^shift bytes */
} size_unit;

/* K, KB and KiB are one unit, 2^10 bytes, as libCacheSim's cachesim (whose
 * command lines `hotset sim` takes) and PostgreSQL's settings read them:
 * one meaning for every spelling, so no size is read two ways. */
static const size_unit units[] = {
    {"", 0},     {"b", 0},  {"k", 10},  {"kb", 10},  {"kib", 10}, {"m", 20},  {"mb", 20},
    {"mib", 20}, {"g", 30}, {"gb", 30}, {"gib", 30}, {"t", 40},   {"tb", 40}, {"tib", 40},
};

#define SIZE_GRAMMAR                                                                               \
  "a whole number with an optional unit: B, or K, M, G, T (written also KB or KiB, MB or MiB, "    \
  "...), each 1024 times the one before"

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
  if (p == s) return hs_fail(HS_ERR_INVALID, 0, "\"%s\" is not a byte size (%s)", s, SIZE_GRAMMAR);
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    const size_unit *u = &units[i];
    if (strcasecmp(p, u->name) != 0) continue;
    if (overflow || (u->shift && v > (UINT64_MAX >> u->shift)))
      return hs_fail(HS_ERR_INVALID, 0, "\"%s\" is more than 2^64 bytes", s);
    *out = v << u->shift;
    return HS_OK;
  }
  return hs_fail(HS_ERR_INVALID, 0, "\"%s\" is not a byte size (%s)", s, SIZE_GRAMMAR);
}

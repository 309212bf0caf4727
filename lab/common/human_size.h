/*
 * common/human_size.h — byte counts the way people read them, for the text
 * outputs of the simulator's tools.
 *
 * "1.89 GiB", "193.6 MiB", "16 MiB", "512 B": a whole number when the count
 * is a whole number of the unit (so a size given as 16MiB prints as it was
 * written), else three significant digits. Powers of 1024, as the size
 * flags read them. Machine-readable outputs (JSON, CSV) keep raw numbers;
 * this is only for tables and reports.
 *
 * Header-only (static inline): two small users, and no build change.
 */
#ifndef HOTSET_LAB_COMMON_HUMAN_SIZE_H
#define HOTSET_LAB_COMMON_HUMAN_SIZE_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

static inline char *human_size(uint64_t bytes, char *buf, size_t len) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  unsigned u = 0;
  while (u + 1 < sizeof units / sizeof units[0] && bytes >= (uint64_t)1 << (10 * (u + 1))) u++;
  uint64_t unit = (uint64_t)1 << (10 * u);
  if (bytes % unit == 0) {
    snprintf(buf, len, "%" PRIu64 " %s", bytes / unit, units[u]);
    return buf;
  }
  double v = (double)bytes / (double)unit;
  /* Rounding 1023.96 up would print "1024 MiB": show it as the next unit. */
  if (v >= 999.5 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024;
    u++;
  }
  snprintf(buf, len, v < 9.995 ? "%.2f %s" : v < 99.95 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

#endif

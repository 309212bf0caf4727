/*
 * core/size.h — the one grammar for byte sizes, shared by the library's
 * specs (hs_strategy_options_parse's "fixed:256KiB") and every size flag of the
 * `hotset` tool (--pool, --page-size, --size ...), so that a size written
 * one way is accepted, or refused, everywhere alike.
 *
 * A size is a decimal integer with an optional unit, matched without
 * regard to case:
 *
 *   (none), B        bytes
 *   K, KB, KiB       2^10 bytes
 *   M, MB, MiB       2^20            G, GB, GiB  2^30       T, TB, TiB  2^40
 *
 * Every unit is a power of 1024, however it is spelled: "1GB" is 2^30
 * bytes, as libCacheSim's cachesim (whose command lines `hotset sim` takes
 * unchanged) and PostgreSQL's settings read it. One meaning per spelling,
 * the same in every flag and spec, stated once in `hotset --help`; a
 * decimal size is written in bytes (1000000000). No sign, no fraction, no
 * space between the number and the unit; a value beyond 64 bits is
 * refused.
 */
#ifndef HOTSET_CORE_SIZE_H
#define HOTSET_CORE_SIZE_H

#include "hotset/status.h"

#include <stdint.h>

/* Parses `s` whole into *out. On failure returns HS_ERR_INVALID through
 * hs_fail with a message that quotes `s` and says what a size is, fit to
 * follow "--pool: " or "ring \"fixed:1XB\": "; *out is untouched. */
hs_status hs_size_parse(const char *s, uint64_t *out);

#endif

/*
 * core/size.h — the one grammar for byte sizes, shared by the library's
 * specs (hs_strategy_options_parse's "fixed:256KiB") and every size flag of the
 * `hotset` tool (--pool, --page-size, --size ...), so that a size written
 * one way is accepted, or refused, everywhere alike.
 *
 * A size is a decimal integer with an optional binary unit, matched without
 * regard to case:
 *
 *   (none), B   bytes
 *   KiB         2^10 bytes      MiB  2^20      GiB  2^30      TiB  2^40
 *
 * KB, MB, GB, TB and the bare K, M, G, T are refused, never guessed: some
 * read "1GB" as 10^9 bytes, others (PostgreSQL's settings among them) as
 * 2^30, and a pool off by 7 % is a surprise nobody should find in a
 * measurement. The refusal says what to write instead. No sign, no
 * fraction, no space between the number and the unit; a value beyond 64
 * bits is refused too.
 */
#ifndef HOTSET_CORE_SIZE_H
#define HOTSET_CORE_SIZE_H

#include "hotset/status.h"

#include <stdint.h>

/* Parses `s` whole into *out. On failure returns HS_ERR_INVALID through
 * hs_fail with a message that quotes `s` and, for an ambiguous unit, names
 * the spellings that would be accepted, e.g.
 *   "1GB": GB is ambiguous (10^9 or 2^30 bytes?); write 1GiB, or 1000000000
 *   for the decimal size
 * fit to follow "--pool: " or "ring \"fixed:1GB\": "; *out is untouched. */
hs_status hs_size_parse(const char *s, uint64_t *out);

#endif

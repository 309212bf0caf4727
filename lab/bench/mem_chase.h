/*
 * bench/mem_chase.h — what one dependent random load costs over a region of
 * a given size: the memory limit a buffer hit is set against.
 *
 * A hit on a big pool is a few dependent loads at random places in the
 * pool's metadata; its cost cannot fall below what this machine's caches
 * and memory give for such loads over that much memory. So bench pool
 * measures, in the same run and with the same huge-page setting, a pointer
 * chase — each load's address comes from the previous load — around a
 * random cycle through every cache line of a region of the hit's metadata
 * size.
 */
#ifndef HOTSET_BENCH_MEM_CHASE_H
#define HOTSET_BENCH_MEM_CHASE_H

#include "hotset/pool.h"

#include <stdint.h>

/* Nanoseconds per load of a chase over `bytes` (at least two cache lines)
 * on memory got as `huge` asks; a negative value if the memory could not be
 * had. Deterministic in its cycle for a given seed. */
double mem_chase_ns(uint64_t bytes, hs_huge_pages huge, uint64_t seed);

#endif

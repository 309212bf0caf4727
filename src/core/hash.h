/*
 * core/hash.h — the one 64-bit integer mix every hash table here uses:
 * MurmurHash3's finalizer (fmix64). Keys such as page tags, trace object
 * ids and block numbers are far from random (consecutive blocks, small
 * relation numbers); fmix64 spreads every input bit over every output bit
 * in two multiplications, so a power-of-two table can take the low bits.
 */
#ifndef HOTSET_CORE_HASH_H
#define HOTSET_CORE_HASH_H

#include <stdint.h>

static inline uint64_t hs_mix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

#endif

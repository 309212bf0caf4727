/*
 * cache/frame_cache_internal.h — what the tests may ask a frame cache
 * beyond its public API: a full consistency check of its tables.
 */
#ifndef HOTSET_CACHE_FRAME_CACHE_INTERNAL_H
#define HOTSET_CACHE_FRAME_CACHE_INTERNAL_H

#include "hotset/frame_cache.h"

/* HS_OK when the slots, the key table, the overflow list, the pin and frame
 * counts and the policy agree; HS_ERR_CORRUPT with the first disagreement
 * in hs_last_error() otherwise. Takes the cache's mutex. */
hs_status frame_cache_check(hs_frame_cache *c);

#endif

/*
 * hotset/policy.h — replacement policies, one implementation each, shared
 * by the buffer pool and the trace simulator.
 *
 * A policy decides which resident entry leaves when room is needed. It
 * knows entries by two names: a *slot* (a dense index 0 .. max_slots-1 that
 * the caller allocates: a buffer in the pool, a table row in the simulator)
 * and a *key* (a 64-bit identity that survives eviction: a page tag's hash, a
 * trace's object id). Keys let a policy remember entries it has evicted —
 * ARC's B1/B2, 2Q's A1out, LIRS's non-resident HIR blocks, Linux's shadow
 * entries — and recognise them when they come back. Every entry has a size
 * in the capacity's units: 1 for pages or objects, bytes in the
 * simulator's byte mode.
 *
 * What a policy cannot tell from its capacity and slots — how many bytes a
 * unit is, what its clock counts — the caller says in an hs_policy_env
 * (hs_policy_create). No policy guesses it from the numbers.
 *
 * The caller drives it:
 *
 *   hit     a resident entry was accessed;
 *   victim  room is needed for `incoming`: name a resident slot to evict,
 *           skipping the ones `pinned` says are in use (the pool's pins);
 *           the policy may move its hands but does not yet forget anything,
 *           because the caller may fail to evict it (a pin arrived meanwhile)
 *           and ask again;
 *   evict   that slot really leaves (the policy may keep a ghost of its key);
 *   insert  a missed entry was brought into a free slot;
 *   remove  a slot leaves without being a victim (a dropped relation): no
 *           ghost.
 *
 * The simulator calls victim/evict until the incoming entry fits
 * (`hs_policy_used` + size <= capacity), then insert. The pool, with size 1,
 * calls them once per miss. The policy never holds more than its capacity:
 * insert refuses (HS_ERR_INVALID) if there is no room.
 *
 * Threads: a policy is single-threaded unless its flags say otherwise:
 * HS_POLICY_CONCURRENT (every call may run concurrently: clock-sweep alone)
 * or HS_POLICY_CONCURRENT_HIT (hits need no lock, every other call one
 * lock: fifo, clock, sieve, s3fifo, car, clockpro — their hits only set a
 * bit or bump a counter, while their victim search moves entries). The
 * pool serializes whatever the flags leave unsafe with a lock of its own.
 *
 * Policies are named by a spec "name[:key=value,...]", e.g. "s3fifo:small=0.1"
 * or "slru:segments=4"; hs_policy_names lists them. A name matches in any
 * case, and other simulators' names are aliases (hs_policy_canonical).
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_POLICY_H
#define HOTSET_POLICY_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

typedef enum hs_access_kind { HS_ACCESS_READ = 0, HS_ACCESS_WRITE = 1 } hs_access_kind;

typedef enum hs_access_hint {
  HS_HINT_NORMAL = 0, /* an ordinary access */
  HS_HINT_RING = 1    /* under a ring strategy: never raise the entry's
                         standing beyond "used once" */
} hs_access_hint;

/* "Never accessed again", for hs_access.next. */
#define HS_NEXT_NEVER INT64_MAX
/* The caller does not know the future (only belady needs it). */
#define HS_NEXT_UNKNOWN (-1)

/* One access, as the caller saw it. */
typedef struct hs_access {
  uint64_t key;  /* the entry's identity */
  uint64_t size; /* in capacity units; 1 for pages */
  uint64_t now;  /* the caller's clock, in the units hs_policy_env.clock
                    names; never goes backwards */
  int64_t next;  /* when this key is accessed next, on any count that
                    increases with the accesses (the simulator's request
                    numbers), HS_NEXT_NEVER, or HS_NEXT_UNKNOWN */
  hs_access_kind kind;
  hs_access_hint hint;
  bool recycle_first; /* with HS_HINT_RING: insert at the victim end, where
                         the policy has one (lru) — the 2003 proposal */
  /* Hindsight, for the offline bound fixedset (HS_POLICY_NEEDS_HINDSIGHT):
   * the units taken by every object the whole trace reads more often than
   * this one (or as often, first read earlier), plus this one's; 0 = not
   * known. The simulator sets it for a policy so flagged. */
  uint64_t hindsight_units;
} hs_access;

/* True if the slot must be skipped by this victim search: the caller cannot
 * take it now (its buffer is pinned, or its dirty page could not be written
 * back during this search). A policy passes over such a slot as if it were
 * not there — no second chance spent, no move — and names another; asked
 * again with the same answers it may name the same slot (victim forgets
 * nothing). */
typedef bool (*hs_pinned_fn)(void *ctx, uint32_t slot);

typedef struct hs_policy hs_policy;

enum {
  HS_POLICY_CONCURRENT = 1u << 0,     /* every call is thread-safe */
  HS_POLICY_CONCURRENT_HIT = 1u << 1, /* hit is thread-safe against every call;
                                         the others need one lock */
  HS_POLICY_NEEDS_FUTURE = 1u << 2,   /* needs hs_access.next (belady) */
  HS_POLICY_SIM_ONLY = 1u << 3,       /* not usable in the pool */
  HS_POLICY_NEEDS_TIME = 1u << 4,     /* reads hs_access.now */
  HS_POLICY_NEEDS_HINDSIGHT = 1u << 5 /* needs hs_access.hindsight_units, a
                                         ranking of the whole trace (fixedset) */
};

/* What hs_access.now counts. Durations in policy parameters (midpoint's
 * `time`, lru-k's `crp`) are always milliseconds. */
typedef enum hs_clock_unit {
  HS_CLOCK_UNSPECIFIED = 0, /* the caller does not say (checking a spec) */
  HS_CLOCK_REQUESTS = 1,    /* one tick per request: a trace without time
                               stamps; durations must then be 0 */
  HS_CLOCK_MILLISECONDS = 2 /* milliseconds: the pool's clock, or a
                               trace's time stamps in the simulator */
} hs_clock_unit;

/* The caller's facts that a policy needs and cannot work out from its
 * capacity and slots. Zero-initialise it and fill in what you know: a zero
 * field means "not known", and a NULL env means every field is zero. */
typedef struct hs_policy_env {
  /* Bytes per capacity unit: the page size in the pool, 1 in the
   * simulator's byte mode; 0 when a unit has no size in bytes (the
   * simulator counting objects) or the caller does not know it. twolist
   * reads it, because the kernel sizes its lists by the cache's bytes;
   * when it is 0, twolist's `page` parameter stands in for it. */
  uint64_t unit_bytes;
  /* What hs_access.now counts. The time-reading policies take their
   * durations in milliseconds (midpoint's `time`, lru-k's `crp`), whatever
   * the clock: time=1000 is InnoDB's one second. With HS_CLOCK_REQUESTS a
   * nonzero duration is refused at creation (HS_ERR_INVALID), since a
   * request count is no length of time. */
  hs_clock_unit clock;
  /* Every key is below this (0: any 64-bit key). The simulator's keys are
   * its dense object numbers, 0 .. objects-1, so it says so; the policies
   * that remember evicted keys then index them by a direct array instead
   * of a hash table (4 bytes a possible key, touched only where keys
   * land), one memory access where a probe costs two — where the keys are
   * at most 32 times the keys remembered (or 65,536 in all), so a small
   * cache over a big trace keeps its hash tables. A key at or above it is
   * refused by hs_policy_insert. */
  uint64_t key_space;
} hs_policy_env;

/* Creates the policy named by `spec` for `capacity` units held in at most
 * `max_slots` slots, with the caller's facts in `env` (NULL: none known —
 * units of unknown size in bytes, so twolist takes its `page` parameter,
 * 8192 by default, and a clock of unspecified units: enough to check a spec
 * or to run a policy whose behaviour does not depend on them).
 * Errors: an unknown name or parameter, a bad value, an unknown clock. */
hs_status hs_policy_create(const char *spec, uint64_t capacity, uint32_t max_slots,
                           const hs_policy_env *env, hs_policy **out);
void hs_policy_destroy(hs_policy *p);

void hs_policy_hit(hs_policy *p, uint32_t slot, const hs_access *a);
/* A hint that `key` will be accessed soon: a policy that remembers evicted
 * keys starts fetching the place it would look for this one into the CPU's
 * cache, so that the miss, when it comes, does not wait on memory. Changes
 * nothing; any policy may ignore it. The simulator gives it a few requests
 * ahead. Serialized as the policy's other calls are (it reads the index a
 * miss may be growing). */
void hs_policy_prefetch(const hs_policy *p, uint64_t key);
/* A resident slot to evict so that `incoming` can come in, or -1 when every
 * resident entry is pinned (or none is resident). */
int64_t hs_policy_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned, void *ctx);
/* Evict (may keep a ghost) or remove (no ghost) a resident slot. A slot that
 * is not resident is refused with HS_ERR_INVALID (a debug build stops). */
hs_status hs_policy_evict(hs_policy *p, uint32_t slot);
hs_status hs_policy_insert(hs_policy *p, uint32_t slot, const hs_access *a);
hs_status hs_policy_remove(hs_policy *p, uint32_t slot);

/* Whether a missed entry is to be cached at all. Every policy that runs
 * in a cache takes every entry; an offline bound may not (fixedset caches
 * only its set): the simulator then counts the miss and inserts nothing. */
bool hs_policy_admits(const hs_policy *p, const hs_access *a);

/* What the policy holds: resident units (<= capacity) and entries. */
uint64_t hs_policy_used(const hs_policy *p);
uint64_t hs_policy_capacity(const hs_policy *p);
uint32_t hs_policy_resident(const hs_policy *p);
/* Ghost (history) entries it remembers now. */
uint64_t hs_policy_ghosts(const hs_policy *p);
/* A small number saying how well placed a resident slot is (clock-sweep:
 * its usage count; list policies: which list), for dumps. */
uint32_t hs_policy_standing(const hs_policy *p, uint32_t slot);
/* The resident slots the policy would evict next, in order, as far as it
 * can tell — written to slots[0 .. max-1], their number returned — without
 * changing anything (no hand moves, no bit is cleared, no entry moves).
 * Asked for a victim right after, with nothing changed and nothing pinned,
 * the policy names slots[0]; later entries are a prediction (each policy's
 * file says where it is one). A pool's background writer uses it to write
 * the pages a miss will need next. Same threading rule as hs_policy_victim.
 * 0 for a policy that cannot tell (belady: it needs the incoming access). */
uint32_t hs_policy_upcoming_victims(const hs_policy *p, uint32_t *slots, uint32_t max);
/* Bytes of metadata the policy has allocated. */
size_t hs_policy_memory(const hs_policy *p);

/* The canonical spec: the name and every parameter with its value, e.g.
 * "s3fifo:small=0.1,ghost=0.9,move=2". */
const char *hs_policy_spec(const hs_policy *p);
const char *hs_policy_name(const hs_policy *p);
unsigned hs_policy_flags(const hs_policy *p);

/* Every policy name, comma-separated. */
const char *hs_policy_names(void);
/* The policy's own name for `name`, which may be in any case or another
 * simulator's name for it (libCacheSim's "TwoQ", "S3-FIFO", "Clock-Pro",
 * "fifo-reinsertion"...; docs/simulator.md lists them), or NULL if it names
 * no policy. Specs accept the same names. */
const char *hs_policy_canonical(const char *name);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif

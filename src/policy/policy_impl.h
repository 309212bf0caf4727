/*
 * policy/policy_impl.h — what a replacement policy implements.
 *
 * hotset/policy.h is the callers' view. Each policy is one file in
 * src/policy/ defining a `const hs_policy_ops`; policy.c keeps the registry,
 * parses specs, and keeps the accounting every policy needs (which slots are
 * resident, their sizes, units used), so a policy only implements its
 * algorithm. The generic layer calls the ops only with valid arguments:
 * hit/evict/remove/standing on resident slots, insert on a free slot with
 * room for it (after the caller's victim/evict rounds).
 */
#ifndef HOTSET_POLICY_IMPL_H
#define HOTSET_POLICY_IMPL_H

#include "hotset/policy.h"

#include <stdatomic.h>

#define HS_POLICY_MAX_PARAMS 8

/* A numeric parameter a policy accepts in its spec. */
typedef struct hs_param_def {
  const char *name;
  double def, min, max;
  bool integer;
  const char *help;
  /* A duration in milliseconds (midpoint's time, lru-k's crp): one value
   * means one length of time in the pool and in the simulator alike, so a
   * caller whose clock is not in milliseconds may only give it 0. */
  bool milliseconds;
} hs_param_def;

typedef struct hs_policy_ops {
  const char *name;
  unsigned flags; /* HS_POLICY_* */
  const char *summary;
  hs_param_def params[HS_POLICY_MAX_PARAMS]; /* ends at the first NULL name */

  /* Sets p->impl; p->capacity, p->max_slots, p->env and p->param[] are
   * filled in. */
  hs_status (*create)(hs_policy *p);
  void (*destroy)(hs_policy *p);
  /* Whether a missed entry is cached at all (hs_policy_admits); NULL:
   * every one is. Only an offline bound may refuse (fixedset). */
  bool (*admit)(const hs_policy *p, const hs_access *a);
  void (*hit)(hs_policy *p, uint32_t slot, const hs_access *a);
  int64_t (*victim)(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned, void *ctx);
  void (*evict)(hs_policy *p, uint32_t slot);
  void (*insert)(hs_policy *p, uint32_t slot, const hs_access *a);
  void (*remove)(hs_policy *p, uint32_t slot); /* leaves without a ghost */
  /* The frame cache's victim refilled at once (hs_policy_replace): as
   * evict (remove with `forget`) then insert of the same slot, in one
   * call. May be NULL: then those two. */
  void (*replace)(hs_policy *p, uint32_t slot, bool forget, const hs_access *a);
  uint32_t (*standing)(const hs_policy *p, uint32_t slot); /* may be NULL */
  uint64_t (*ghosts)(const hs_policy *p);                  /* may be NULL */
  /* The slots this policy would evict next, in order, as far as it can
   * tell, written to slots[0 .. max-1]; returns how many. It moves no hand,
   * no list and no bit: a victim search right after it (nothing changed in
   * between, nothing pinned) names slots[0]. It runs under the same lock as
   * victim, so it may read what victim reads; for a policy whose hits run
   * without a lock it reads their bits and counts atomically, as victim
   * does. May be NULL (belady: the future it needs comes with a miss). */
  uint32_t (*upcoming)(const hs_policy *p, uint32_t *slots, uint32_t max);
  size_t (*memory)(const hs_policy *p); /* the impl's bytes */
  /* Fetches where the policy remembers `key` (its ghost index) into the
   * CPU's cache: a lookup of it comes soon. Changes nothing. May be NULL. */
  void (*prefetch)(const hs_policy *p, uint64_t key);
} hs_policy_ops;

struct hs_policy {
  const hs_policy_ops *ops;
  void *impl;
  uint64_t capacity;
  uint32_t max_slots;
  hs_policy_env env; /* the caller's facts; zero fields are not known */
  double param[HS_POLICY_MAX_PARAMS];
  /* Accounting kept by policy.c (atomics: concurrent policies). */
  _Atomic uint64_t used;
  _Atomic uint32_t resident;
  _Atomic uint32_t *size; /* per slot; 0 = not resident */
  char spec[160];
};

/* Every registered policy (policy.c), and lookup by name. */
extern const hs_policy_ops *const hs_all_policies[];
const hs_policy_ops *hs_policy_find(const char *name);
/* The registered policies the pool runs (those not HS_POLICY_SIM_ONLY),
 * ", " between them, for messages. */
const char *policy_pool_names(void);

/* A slot's size as the generic layer recorded it (0 if not resident). */
static inline uint32_t hs_policy_slot_size(const hs_policy *p, uint32_t slot) {
  return atomic_load_explicit(&p->size[slot], memory_order_acquire);
}

/* A caller that fills a slot again as soon as it empties it (the frame
 * cache's victim, a new page in its place, under one lock): the policy's
 * evict (or remove, without a ghost) and, after, its insert, with the
 * generic layer's accounting left as it was — the slot resident, its
 * size and the units used unchanged — since hs_policy_evict and
 * hs_policy_insert would take it out and put it back. Only for a
 * resident slot (a victim) refilled with an entry of the same size, by a
 * caller that holds the policy to itself from the one to the other. */
static inline void hs_policy_vacate(hs_policy *p, uint32_t slot, bool forget) {
  if (forget)
    p->ops->remove(p, slot);
  else
    p->ops->evict(p, slot);
}

static inline void hs_policy_refill(hs_policy *p, uint32_t slot, const hs_access *a) {
  p->ops->insert(p, slot, a);
}

/* hs_policy_vacate then hs_policy_refill, with nothing between them: one
 * call where the policy has its own replace (lru: the slot moves to where
 * an insert would put it, instead of leaving the list and joining it). */
static inline void hs_policy_replace(hs_policy *p, uint32_t slot, bool forget, const hs_access *a) {
  if (p->ops->replace) {
    p->ops->replace(p, slot, forget, a);
    return;
  }
  hs_policy_vacate(p, slot, forget);
  hs_policy_refill(p, slot, a);
}

#endif

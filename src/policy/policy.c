/*
 * policy/policy.c — the policy registry, spec parsing, and the accounting
 * every policy shares (residency, sizes, units used), so that each policy
 * file holds only its algorithm and the capacity rule is checked in one
 * place.
 */
#include "core/debug.h"
#include "core/error.h"
#include "policy/policy_impl.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Other simulators' names for hotset's policies (libCacheSim's cachesim
 * among them), so that a spec written for one reads here; names match in
 * any case. */
static const struct {
  const char *alias, *name;
} policy_aliases[] = {
    {"twoq", "2q"},
    {"fifo-reinsertion", "clock"},
    {"second-chance", "clock"},
    {"s3-fifo", "s3fifo"},
    {"clock-pro", "clockpro"},
    {"lruk", "lru-k"},
    {"gclock", "clock-sweep"},
};

const hs_policy_ops *hs_policy_find(const char *name) {
  for (int i = 0; hs_all_policies[i]; i++)
    if (strcmp(hs_all_policies[i]->name, name) == 0) return hs_all_policies[i];
  for (int i = 0; hs_all_policies[i]; i++)
    if (strcasecmp(hs_all_policies[i]->name, name) == 0) return hs_all_policies[i];
  for (size_t i = 0; i < sizeof policy_aliases / sizeof *policy_aliases; i++)
    if (strcasecmp(policy_aliases[i].alias, name) == 0)
      return hs_policy_find(policy_aliases[i].name);
  return NULL;
}

const char *hs_policy_canonical(const char *name) {
  const hs_policy_ops *ops = name ? hs_policy_find(name) : NULL;
  return ops ? ops->name : NULL;
}

const char *hs_policy_names(void) {
  static char names[512];
  if (!names[0]) {
    size_t off = 0;
    for (int i = 0; hs_all_policies[i]; i++)
      off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? "," : "",
                              hs_all_policies[i]->name);
  }
  return names;
}

static char pool_names[512];

static void fill_pool_names(void) {
  size_t off = 0;
  for (int i = 0; hs_all_policies[i] && off < sizeof pool_names; i++)
    if (!(hs_all_policies[i]->flags & HS_POLICY_SIM_ONLY))
      off += (size_t)snprintf(pool_names + off, sizeof pool_names - off, "%s%s", off ? ", " : "",
                              hs_all_policies[i]->name);
}

const char *policy_pool_names(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, fill_pool_names);
  return pool_names;
}

static int param_count(const hs_policy_ops *ops) {
  int n = 0;
  while (n < HS_POLICY_MAX_PARAMS && ops->params[n].name) n++;
  return n;
}

/* Parses "key=value,key=value" into p->param[]. */
static hs_status parse_params(hs_policy *p, const char *list, const char *spec) {
  const hs_policy_ops *ops = p->ops;
  int n = param_count(ops);
  for (int i = 0; i < n; i++) p->param[i] = ops->params[i].def;
  if (!list || !*list) return HS_OK;
  char buf[256];
  if (strlen(list) >= sizeof buf)
    return hs_fail(HS_ERR_INVALID, 0, "policy \"%s\": parameter list too long", spec);
  strcpy(buf, list);
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (!eq)
      return hs_fail(HS_ERR_INVALID, 0, "policy \"%s\": \"%s\" is not key=value", spec, item);
    *eq = '\0';
    const char *key = item, *val = eq + 1;
    int k = 0;
    while (k < n && strcmp(ops->params[k].name, key) != 0) k++;
    if (k == n) {
      char known[160] = "";
      size_t off = 0;
      for (int i = 0; i < n; i++)
        off += (size_t)snprintf(known + off, sizeof known - off, "%s%s", i ? ", " : "",
                                ops->params[i].name);
      return hs_fail(HS_ERR_INVALID, 0, "policy \"%s\": unknown parameter \"%s\" (%s takes: %s)",
                     spec, key, ops->name, n ? known : "none");
    }
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    const hs_param_def *d = &ops->params[k];
    if (end == val || *end || errno || !isfinite(v))
      return hs_fail(HS_ERR_INVALID, 0, "policy \"%s\": %s=\"%s\" is not a number", spec, key, val);
    /* A whole number: it survives a round trip through an integer (the range
     * check below keeps it small enough to). Avoids libm. */
    if (d->integer && (v > 1e15 || v < -1e15 || v != (double)(long long)v))
      return hs_fail(HS_ERR_INVALID, 0, "policy \"%s\": %s must be a whole number", spec, key);
    if (v < d->min || v > d->max)
      return hs_fail(HS_ERR_INVALID, 0, "policy \"%s\": %s=%g is outside [%g, %g]", spec, key, v,
                     d->min, d->max);
    p->param[k] = v;
  }
  return HS_OK;
}

/* A duration is milliseconds whoever the caller is; a caller whose clock
 * counts requests cannot honour one, so it may only be 0 there (rather
 * than 1000 meaning a second in the pool and 1000 requests in the
 * simulator). An unspecified clock is a caller checking a spec. */
static hs_status check_durations(const hs_policy *p, const char *spec) {
  if (p->env.clock != HS_CLOCK_REQUESTS) return HS_OK;
  for (int i = 0; i < param_count(p->ops); i++)
    if (p->ops->params[i].milliseconds && p->param[i] != 0)
      return hs_fail(HS_ERR_INVALID, 0,
                     "policy \"%s\": %s=%g is in milliseconds, and the caller's clock counts "
                     "requests, not time: give %s=0 or a clock in milliseconds",
                     spec, p->ops->params[i].name, p->param[i], p->ops->params[i].name);
  return HS_OK;
}

static void canonical_spec(hs_policy *p) {
  const hs_policy_ops *ops = p->ops;
  size_t off = (size_t)snprintf(p->spec, sizeof p->spec, "%s", ops->name);
  for (int i = 0; i < param_count(ops) && off < sizeof p->spec; i++)
    off += (size_t)snprintf(p->spec + off, sizeof p->spec - off, "%c%s=%g", i ? ',' : ':',
                            ops->params[i].name, p->param[i]);
}

hs_status hs_policy_create(const char *spec, uint64_t capacity, uint32_t max_slots,
                           const hs_policy_env *env, hs_policy **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_policy_create: out is NULL");
  *out = NULL;
  if (!spec) return hs_fail(HS_ERR_MISUSE, 0, "hs_policy_create: spec is NULL");
  hs_policy_env facts = env ? *env : (hs_policy_env){0};
  if (facts.clock != HS_CLOCK_UNSPECIFIED && facts.clock != HS_CLOCK_REQUESTS &&
      facts.clock != HS_CLOCK_MILLISECONDS)
    return hs_fail(HS_ERR_INVALID, 0, "policy \"%s\": unknown clock %d in hs_policy_env", spec,
                   (int)facts.clock);
  char name[64];
  const char *colon = strchr(spec, ':');
  size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
  if (len == 0 || len >= sizeof name)
    return hs_fail(HS_ERR_INVALID, 0, "bad policy spec \"%s\"", spec);
  memcpy(name, spec, len);
  name[len] = '\0';
  const hs_policy_ops *ops = hs_policy_find(name);
  if (!ops)
    return hs_fail(HS_ERR_INVALID, 0, "unknown replacement policy \"%s\" (known: %s)", name,
                   hs_policy_names());
  if (capacity == 0 || max_slots == 0)
    return hs_fail(HS_ERR_INVALID, 0, "policy %s: capacity and slots must be positive", name);
  hs_policy *p = calloc(1, sizeof *p);
  if (!p) return hs_fail(HS_ERR_NOMEM, 0, "could not allocate policy %s", name);
  p->ops = ops;
  p->capacity = capacity;
  p->max_slots = max_slots;
  p->env = facts;
  atomic_init(&p->used, 0);
  atomic_init(&p->resident, 0);
  hs_status st = parse_params(p, colon ? colon + 1 : NULL, spec);
  if (st == HS_OK) st = check_durations(p, spec);
  if (st == HS_OK) {
    canonical_spec(p);
    p->size = malloc(sizeof *p->size * max_slots);
    if (p->size)
      for (uint32_t i = 0; i < max_slots; i++) atomic_init(&p->size[i], 0);
    st = p->size ? ops->create(p)
                 : hs_fail(HS_ERR_NOMEM, 0, "policy %s: no memory for %u slots", name, max_slots);
  }
  if (st != HS_OK) {
    free((void *)p->size);
    free(p);
    return st;
  }
  *out = p;
  return HS_OK;
}

void hs_policy_destroy(hs_policy *p) {
  if (!p) return;
  p->ops->destroy(p);
  free((void *)p->size);
  free(p);
}

bool hs_policy_admits(const hs_policy *p, const hs_access *a) {
  return !p->ops->admit || p->ops->admit(p, a);
}

void hs_policy_prefetch(const hs_policy *p, uint64_t key) {
  if (p->ops->prefetch) p->ops->prefetch(p, key);
}

void hs_policy_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  /* A concurrent caller may report a hit on a slot whose insertion it raced
   * with (the pool publishes a buffer's new tag just before it tells the
   * policy); such a hit is dropped. */
  if (slot < p->max_slots && hs_policy_slot_size(p, slot) != 0) p->ops->hit(p, slot, a);
}

int64_t hs_policy_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned, void *ctx) {
  if (atomic_load_explicit(&p->resident, memory_order_relaxed) == 0) return -1;
  int64_t v = p->ops->victim(p, incoming, pinned, ctx);
  /* The interface's promise: a victim is resident. Checked only where the
   * caller serializes victim against evict/insert/remove: for a policy with
   * HS_POLICY_CONCURRENT (clock-sweep) another thread may remove the slot
   * between the choice and this line, and the pool checks again under the
   * buffer's header lock. */
  HS_INVARIANT(v < 0 || (p->ops->flags & HS_POLICY_CONCURRENT) ||
                   ((uint64_t)v < p->max_slots && hs_policy_slot_size(p, (uint32_t)v) != 0),
               "policy %s named slot %lld, which is not resident", p->ops->name, (long long)v);
  return v;
}

/* The accounting's counts change with every insert and eviction. Only a
 * concurrent policy's calls race each other there; every other policy's
 * are serialized by the caller, so one writer at a time, and a relaxed
 * load and store keep each count whole for readers without a locked
 * instruction (some twenty cycles each, four per miss). */
#define ACCOUNT_ADD(p, count, delta)                                                               \
  do {                                                                                             \
    if ((p)->ops->flags & HS_POLICY_CONCURRENT)                                                    \
      atomic_fetch_add_explicit(&(p)->count, (delta), memory_order_relaxed);                       \
    else                                                                                           \
      atomic_store_explicit(&(p)->count,                                                           \
                            atomic_load_explicit(&(p)->count, memory_order_relaxed) + (delta),     \
                            memory_order_relaxed);                                                 \
  } while (0)

static void forget_slot(hs_policy *p, uint32_t slot) {
  HS_INVARIANT(atomic_load(&p->resident) > 0 &&
                   atomic_load(&p->used) >= hs_policy_slot_size(p, slot),
               "policy %s: forgetting slot %u of %u units with %llu units in %u entries",
               p->ops->name, slot, hs_policy_slot_size(p, slot),
               (unsigned long long)atomic_load(&p->used), atomic_load(&p->resident));
  /* Unsigned: adding the negation subtracts. */
  ACCOUNT_ADD(p, used, -(uint64_t)hs_policy_slot_size(p, slot));
  ACCOUNT_ADD(p, resident, (uint32_t)-1);
  atomic_store_explicit(&p->size[slot], 0, memory_order_relaxed);
}

/* An evict or remove of a slot that holds nothing: the caller's idea of
 * what is resident has gone wrong (a debug build stops here). */
static hs_status not_resident(const hs_policy *p, const char *call, uint32_t slot) {
  if (HS_DEBUG_CHECKS)
    hs_debug_stop(__FILE__, __LINE__, "%s: policy %s: slot %u is not resident", call, p->ops->name,
                  slot);
  return hs_fail(HS_ERR_MISUSE, 0, "%s: policy %s: slot %u is not resident (refused)", call,
                 p->ops->name, slot);
}

hs_status hs_policy_evict(hs_policy *p, uint32_t slot) {
  if (slot >= p->max_slots || hs_policy_slot_size(p, slot) == 0)
    return not_resident(p, "hs_policy_evict", slot);
  p->ops->evict(p, slot);
  forget_slot(p, slot);
  return HS_OK;
}

hs_status hs_policy_remove(hs_policy *p, uint32_t slot) {
  if (slot >= p->max_slots || hs_policy_slot_size(p, slot) == 0)
    return not_resident(p, "hs_policy_remove", slot);
  p->ops->remove(p, slot);
  forget_slot(p, slot);
  return HS_OK;
}

hs_status hs_policy_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  if (slot >= p->max_slots)
    return hs_fail(HS_ERR_MISUSE, 0, "policy %s: slot %u out of range (%u slots)", p->ops->name,
                   slot, p->max_slots);
  if (hs_policy_slot_size(p, slot) != 0)
    return hs_fail(HS_ERR_MISUSE, 0, "policy %s: slot %u is already resident", p->ops->name, slot);
  if (p->env.key_space && a->key >= p->env.key_space)
    return hs_fail(HS_ERR_INVALID, 0, "policy %s: key %llu is outside the key space (below %llu)",
                   p->ops->name, (unsigned long long)a->key, (unsigned long long)p->env.key_space);
  if (a->size == 0 || a->size > UINT32_MAX || a->size > p->capacity)
    return hs_fail(HS_ERR_INVALID, 0, "policy %s: an entry of %llu units cannot be admitted",
                   p->ops->name, (unsigned long long)a->size);
  if (atomic_load_explicit(&p->used, memory_order_relaxed) + a->size > p->capacity)
    return hs_fail(HS_ERR_INVALID, 0, "policy %s: no room for %llu units (%llu of %llu used)",
                   p->ops->name, (unsigned long long)a->size,
                   (unsigned long long)atomic_load(&p->used), (unsigned long long)p->capacity);
  ACCOUNT_ADD(p, used, a->size);
  ACCOUNT_ADD(p, resident, 1);
  /* The size first, so the policy's insert can read it. A lock-free hit that
   * slips in before the insert only touches the slot's own atomic counters,
   * which the insert then sets afresh. */
  atomic_store_explicit(&p->size[slot], (uint32_t)a->size, memory_order_release);
  p->ops->insert(p, slot, a);
  return HS_OK;
}

uint64_t hs_policy_used(const hs_policy *p) {
  return atomic_load_explicit(&p->used, memory_order_relaxed);
}
uint64_t hs_policy_capacity(const hs_policy *p) {
  return p->capacity;
}
uint32_t hs_policy_resident(const hs_policy *p) {
  return atomic_load_explicit(&p->resident, memory_order_relaxed);
}
uint64_t hs_policy_ghosts(const hs_policy *p) {
  return p->ops->ghosts ? p->ops->ghosts(p) : 0;
}
uint32_t hs_policy_upcoming_victims(const hs_policy *p, uint32_t *slots, uint32_t max) {
  if (!p || !slots || max == 0 || !p->ops->upcoming) return 0;
  if (atomic_load_explicit(&p->resident, memory_order_relaxed) == 0) return 0;
  uint32_t n = p->ops->upcoming(p, slots, max);
  HS_INVARIANT(n <= max, "policy %s listed %u upcoming victims, more than the %u asked for",
               p->ops->name, n, max);
  return n;
}
uint32_t hs_policy_standing(const hs_policy *p, uint32_t slot) {
  if (slot >= p->max_slots || hs_policy_slot_size(p, slot) == 0 || !p->ops->standing) return 0;
  return p->ops->standing(p, slot);
}
size_t hs_policy_memory(const hs_policy *p) {
  return sizeof *p + (size_t)p->max_slots * sizeof *p->size + p->ops->memory(p);
}
const char *hs_policy_spec(const hs_policy *p) {
  return p->spec;
}
const char *hs_policy_name(const hs_policy *p) {
  return p->ops->name;
}
unsigned hs_policy_flags(const hs_policy *p) {
  return p->ops->flags;
}

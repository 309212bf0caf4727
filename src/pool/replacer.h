/*
 * pool/replacer.h — how the pool asks a replacement policy for a victim.
 *
 * The pool's hit path has one fixed shape: look the tag up without locks,
 * pin with one CAS, return. The only policy work it does there is raise the
 * usage count inside that same CAS, up to `pin_usage_cap` (clock-sweep: 5),
 * so a policy that keeps its state in the usage count costs the hit path
 * nothing extra. Everything else a policy does happens on a miss: the pool
 * first takes never-used buffers from its free list, then calls get_victim,
 * which returns an unpinned buffer with its header locked. on_insert and
 * on_remove tell the policy when a buffer gets or loses a page.
 *
 * The replacement-policies issue adds policies that keep their own lists
 * (LRU, ARC, ...) behind this same interface.
 */
#ifndef HOTSET_POOL_REPLACER_H
#define HOTSET_POOL_REPLACER_H

#include "hotset/pool.h"
#include "pool/buf_internal.h"

#include <stdint.h>

/* The pool's answer to "is this buffer pinned?" — the state word's
 * reference count alone does not know about per-thread private pins. Called
 * with the buffer's header locked (locked_state is its state). */
typedef struct hs_pin_probe {
  bool (*pinned)(void *ctx, hs_buf buf, uint32_t locked_state);
  void *ctx;
} hs_pin_probe;

typedef struct hs_replacer_ops {
  const char *name;
  uint32_t pin_usage_cap; /* raise usage up to this on every pin (0: never) */
  uint32_t insert_usage;  /* usage count a newly read page starts with */
  hs_status (*create)(hs_bufdesc_padded *descs, uint32_t nbuffers, hs_pin_probe probe,
                      void **state);
  void (*destroy)(void *state);
  void (*on_insert)(void *state, hs_buf buf); /* may be NULL */
  void (*on_remove)(void *state, hs_buf buf); /* may be NULL */
  /* An unpinned buffer, returned with its header locked (the locked state in
   * *locked_state). HS_ERR_NO_BUFFERS, in bounded time, if every buffer is
   * pinned. */
  hs_status (*get_victim)(void *state, hs_buf *out, uint32_t *locked_state);
} hs_replacer_ops;

extern const hs_replacer_ops hs_clock_sweep_replacer;

/* The policy of that name, or NULL. */
const hs_replacer_ops *replacer_find(const char *name);
/* The names every pool accepts, comma-separated (for messages). */
const char *replacer_names(void);

#endif

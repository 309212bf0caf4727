/*
 * pool/clock_sweep.c — PostgreSQL's clock-sweep, the pool's default policy.
 *
 * The algorithm. Every buffer has a small usage count (0..5). A pin raises
 * it by one, up to 5. To find a victim a single clock hand walks the buffers
 * in a circle: an unpinned buffer with a non-zero count has it lowered by one
 * and is passed over; the first unpinned buffer whose count is 0 is the
 * victim. A page touched k times thus survives about k sweeps of the hand.
 *
 * Where it comes from. It is the GCLOCK family (generalized CLOCK, Smith
 * 1978; Nicola, Dan & Dias 1992), which PostgreSQL 8.1 (2005) adopted in place
 * of its ARC/2Q list, because every hit on a list-based policy must take the
 * list's lock, and that lock had become the bottleneck on multi-core
 * machines. With a clock the hit path touches only the buffer itself.
 *
 * Invariants. 0 <= usage <= 5 on every buffer; the victim returned has
 * refcount 0 and its header locked, so no one can pin it before the pool
 * has pinned it; a buffer whose count is raised past 0 by a pin can only be
 * chosen after the hand has passed it that many times.
 *
 * Cost. A hit: nothing beyond the pin's CAS (the count rides in the state
 * word). A miss: amortized O(1) ticks of the hand when the counts are low; at
 * worst 5 full sweeps when every count is 5. Each tick is one fetch-and-add on
 * the shared hand (the one shared write, as in PostgreSQL) plus a header lock
 * of the buffer looked at. If a whole sweep finds only pinned buffers (with
 * no count lowered on the way) the pool is exhausted: HS_ERR_NO_BUFFERS after
 * at most 6 passes — never a hang.
 */
#include "core/error.h"
#include "pool/replacer.h"

#include <stdatomic.h>
#include <stdlib.h>

#define CLOCK_SWEEP_MAX_USAGE 5u

typedef struct clock_sweep {
  alignas(64) _Atomic uint64_t hand; /* ticks so far; the buffer is hand % n */
  hs_bufdesc_padded *descs;
  uint32_t nbuffers;
  hs_pin_probe probe;
} clock_sweep;

static hs_status clock_sweep_create(hs_bufdesc_padded *descs, uint32_t nbuffers, hs_pin_probe probe,
                                    void **state) {
  clock_sweep *cs = aligned_alloc(64, sizeof *cs);
  if (!cs) return hs_fail(HS_ERR_NOMEM, 0, "could not allocate the clock-sweep state");
  atomic_init(&cs->hand, 0);
  cs->descs = descs;
  cs->nbuffers = nbuffers;
  cs->probe = probe;
  *state = cs;
  return HS_OK;
}

static void clock_sweep_destroy(void *state) {
  free(state);
}

static hs_status clock_sweep_get_victim(void *state, hs_buf *out, uint32_t *locked_state) {
  clock_sweep *cs = state;
  /* Ticks left before giving up; reset whenever a count is lowered, since
   * that is progress towards a victim. */
  uint32_t tries = cs->nbuffers;
  for (;;) {
    uint64_t tick = atomic_fetch_add_explicit(&cs->hand, 1, memory_order_relaxed);
    hs_buf b = (hs_buf)(tick % cs->nbuffers);
    hs_bufdesc *d = &cs->descs[b].d;
    /* Skip buffers pinned the shared way without taking their header lock;
     * the probe (under the lock) also sees the threads' private pins. */
    if (buf_refcount(atomic_load_explicit(&d->state, memory_order_relaxed)) == 0) {
      uint32_t s = buf_hdr_lock(d);
      if (!cs->probe.pinned(cs->probe.ctx, b, s)) {
        if (buf_usage(s) == 0) {
          *out = b;
          *locked_state = s;
          return HS_OK;
        }
        buf_hdr_unlock(d, s - BUF_USAGE_ONE);
        tries = cs->nbuffers;
        continue;
      }
      buf_hdr_unlock(d, s);
    }
    if (--tries == 0)
      return hs_fail(HS_ERR_NO_BUFFERS, 0, "no unpinned buffers available (all %u are pinned)",
                     cs->nbuffers);
  }
}

const hs_replacer_ops hs_clock_sweep_replacer = {
    .name = "clock-sweep",
    .pin_usage_cap = CLOCK_SWEEP_MAX_USAGE,
    .insert_usage = 1,
    .create = clock_sweep_create,
    .destroy = clock_sweep_destroy,
    .on_insert = NULL,
    .on_remove = NULL,
    .get_victim = clock_sweep_get_victim,
};

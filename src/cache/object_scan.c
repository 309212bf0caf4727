/*
 * cache/object_scan.c — the object cache's scan detector: which of a
 * thread's accesses belong to a scan, so that their entries reach the
 * policy as "used once" (HS_HINT_RING) and do not push out what other
 * threads keep using.
 *
 * State. Each thread keeps, for each of the last few caches it used, the
 * streams it is reading (OT_STREAMS of them, the least lately missed one
 * replaced), in a C11 thread-local table indexed by the cache's id. Ids
 * come from a process-wide counter and are never reused, so the state a
 * thread kept for a destroyed cache is never taken for a new cache's: it
 * is reset on first use instead. No lock is taken: only the thread itself
 * reads or writes its state.
 *
 * What counts. Misses only: a lookup that missed, and the insert of the
 * same key that follows it (RocksDB reads a block that way: Lookup, a
 * miss, the read, Insert), count once: the thread remembers the hash of
 * its last missed key and the verdict given it, and an insert of that key
 * takes the verdict. An insert of another key counts as a miss of its own.
 * Hits feed nothing, but a hit within OT_HIT_SPAN hits of a scan's miss is
 * the scan's (a scan over a range partly cached hits too): on a scan's
 * entry it keeps it "used once"; on an ordinary entry it is a plain hit.
 *
 * The rule. `locate` names a key's stream and position. A miss whose
 * position is near the stream's last one (|p1 - p2| <= scan_gap, or p1 ^
 * p2 below 2^bitlen(scan_gap): keys that XOR an offset into a per-file
 * base move that way) extends the stream's run; one that is not is a
 * stray, and the run survives up to OT_STRAYS strays in a row (an index
 * block read at the file's end, a block skipped by readahead). Two strays
 * near each other start a new run there (the scan jumped: a new range, or
 * a backward scan's next stretch; a block read again at the same place is
 * no progress either way) — unless the first stray came right after the
 * run and differs from its last position in every bit from just above
 * the run's last step up to its highest (`carried`): with XOR-ed keys that is the scan
 * crossing a power-of-two boundary of the offset (every 256 KiB of file
 * for RocksDB's, more bits at 1 MiB, 4 MiB, ...), and the run goes on,
 * counting both. A random read passes neither test but by chance (the
 * next miss near it, and the bits). More than OT_STRAYS end the run, and so
 * do OT_IDLE misses of the thread elsewhere (two short range reads that
 * happen to be near each other, far apart in time, are not one scan). A
 * miss is inside a scan when its stream's run is longer than scan_run. So:
 *  - forward and backward scans of one or many streams, interleaved, are
 *    scans (each stream has its own run);
 *  - point reads (an index block at the file's end, then a data block
 *    anywhere) and random reads, however often they miss, are strays: their
 *    positions are far apart, runs stay at one or two;
 *  - a short range read (a seek and up to scan_run next blocks) never gets
 *    past scan_run.
 *
 * Scans that fit. A scan over a range the cache could hold, read again,
 * should end up cached. The shard remembers the keys of scan entries it
 * evicted (object_cache.c's ghost table) with how many bytes of scan
 * inserts it had seen then; a miss on one evicted within the last 3/4 of
 * the shard's capacity of scan bytes means the scan comes back to a key
 * sooner than the cache would have lost it. OT_GHOSTS such misses in a run
 * and the run "fits": its misses are ordinary from then on, for one
 * cache's worth of misses (then the verdict is taken again, so a range
 * that grew past the cache stops being kept).
 */
#include "cache/object_cache_internal.h"
#include "core/debug.h"

#include <stdatomic.h>
#include <string.h>

#define OT_CACHES   4u  /* caches a thread follows at once */
#define OT_STREAMS  8u  /* streams a thread follows in one cache */
#define OT_STRAYS   4u  /* strays in a row a run survives */
#define OT_GHOSTS   4u  /* misses on remembered scan keys that make a run fit */
#define OT_HIT_SPAN 64u /* hits after a scan's miss that are the scan's */
#define OT_IDLE     64u /* misses elsewhere after which a stream's run is over */

typedef struct ot_stream {
  uint64_t stream, pos, alt; /* alt: the last stray's position */
  uint64_t step;             /* the bits the run's last step flipped (pos ^ the one before) */
  uint64_t fits_left;        /* misses the "fits" verdict still holds */
  uint32_t run, strays, ghosts, used;
  bool counted; /* the run was counted in hs_object_cache_stats.scans */
} ot_stream;

struct oc_thread {
  uint64_t cache; /* the cache's id; 0: unused */
  uint64_t last_hash;
  bool has_last, last_scan;
  uint32_t hits_left, misses;
  ot_stream streams[OT_STREAMS];
};

static _Thread_local struct oc_thread ot_threads[OT_CACHES];

struct oc_thread *oc_scan_thread(const hs_object_cache *c) {
  struct oc_thread *t = &ot_threads[c->id & (OT_CACHES - 1)];
  if (__builtin_expect(t->cache != c->id, 0)) {
    memset(t, 0, sizeof *t);
    t->cache = c->id;
  }
  return t;
}

bool oc_scan_hitting(const struct oc_thread *t) {
  return t->hits_left != 0;
}

bool oc_scan_hit(struct oc_thread *t) {
  if (!t->hits_left) return false;
  t->hits_left--;
  return true;
}

static inline bool near(const hs_object_cache *c, uint64_t a, uint64_t b) {
  return (a > b ? a - b : b - a) <= c->scan_gap || (a ^ b) <= c->scan_mask;
}

/* Whether a jump from a to b, in a run whose last step flipped the bits
 * of `step`, is a carry across a power-of-two boundary of an offset
 * XOR-ed into a per-file base (RocksDB's block keys): the offset's step
 * then carries through every bit from just above the step's up to the
 * boundary, so a and b differ in all of those (and anything below). A
 * random pair of positions does with a chance of 2^-(bits between). */
static inline bool carried(const hs_object_cache *c, uint64_t a, uint64_t b, uint64_t step) {
  uint64_t low = step ? (2ull << (63 - __builtin_clzll(step))) - 1 : c->scan_mask;
  if (low > c->scan_mask) low = c->scan_mask;
  uint64_t x = (a ^ b) | low;
  return (a ^ b) > c->scan_mask && (x & (x + 1)) == 0;
}

static void run_start(ot_stream *s, uint64_t pos, uint32_t run) {
  s->pos = pos;
  s->step = 0;
  s->run = run;
  s->strays = s->ghosts = 0;
  s->fits_left = 0;
  s->counted = false;
}

static ot_stream *stream_of(struct oc_thread *t, uint64_t stream, uint64_t pos, bool *fresh) {
  ot_stream *oldest = &t->streams[0];
  for (uint32_t i = 0; i < OT_STREAMS; i++) {
    ot_stream *s = &t->streams[i];
    if (s->run && s->stream == stream) {
      /* A run the thread left for OT_IDLE misses elsewhere is over: a
       * merge of many streams comes back to each sooner. */
      *fresh = t->misses - s->used > OT_IDLE;
      if (*fresh) run_start(s, pos, 1);
      return s;
    }
    if (!s->run || (oldest->run && s->used < oldest->used)) oldest = s;
  }
  *fresh = true;
  oldest->stream = stream;
  run_start(oldest, pos, 1);
  return oldest;
}

/* One miss (the rule in the essay). */
static bool note_miss(hs_object_cache *c, struct oc_thread *t, const void *key, size_t key_len,
                      bool ghost) {
  uint64_t stream, pos;
  if (!c->locate(key, key_len, &stream, &pos, c->ctx)) return false;
  bool fresh;
  ot_stream *s = stream_of(t, stream, pos, &fresh);
  s->used = ++t->misses;
  if (fresh) {
    /* the run begins here */
  } else if (pos == s->pos) {
    /* the same block again (evicted and read anew): no progress */
  } else if (near(c, pos, s->pos)) {
    s->run++;
    s->step = pos ^ s->pos;
    s->pos = pos;
    s->strays = 0;
  } else if (s->strays && pos != s->alt && near(c, pos, s->alt)) {
    if (s->strays == 1 && carried(c, s->pos, s->alt, s->step)) { /* crossed a boundary */
      s->run += 2;
      s->pos = pos;
      s->strays = 0;
    } else {
      run_start(s, pos, 2);
    }
  } else if (++s->strays > OT_STRAYS) {
    run_start(s, pos, 1);
  } else {
    s->alt = pos;
  }
  if (s->fits_left && --s->fits_left == 0) s->ghosts = 0; /* take the verdict again */
  if (ghost && s->run > 1 && ++s->ghosts == OT_GHOSTS) {
    uint64_t cap = atomic_load(&c->capacity) / c->expected_charge;
    s->fits_left = cap > OT_GHOSTS ? cap : OT_GHOSTS;
  }
  bool scan = s->run > c->scan_run && !s->fits_left;
  HS_INVARIANT(s->run >= 1, "object cache: a stream's run is empty");
  if (scan && !s->counted) {
    s->counted = true;
    atomic_fetch_add_explicit(&c->scans, 1, memory_order_relaxed);
  }
  if (scan) atomic_fetch_add_explicit(&c->scan_accesses, 1, memory_order_relaxed);
  t->hits_left = scan ? OT_HIT_SPAN : 0;
  return scan;
}

bool oc_scan_miss(hs_object_cache *c, struct oc_thread *t, const void *key, size_t key_len,
                  uint64_t hash, bool ghost) {
  bool scan = note_miss(c, t, key, key_len, ghost);
  t->last_hash = hash;
  t->has_last = true;
  t->last_scan = scan;
  return scan;
}

bool oc_scan_insert(hs_object_cache *c, struct oc_thread *t, const void *key, size_t key_len,
                    uint64_t hash) {
  if (t->has_last && t->last_hash == hash) {
    t->has_last = false;
    if (t->last_scan) atomic_fetch_add_explicit(&c->scan_accesses, 1, memory_order_relaxed);
    return t->last_scan;
  }
  t->has_last = false;
  return note_miss(c, t, key, key_len, false);
}

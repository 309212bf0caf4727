/*
 * cache/object_cache.c — a concurrent keyed cache of the engine's objects,
 * each charged in bytes against a capacity (hotset/object_cache.h): the
 * entries, the shards, their key tables and policies, references, and the
 * capacity. The scan detector is object_scan.c; docs/object-cache.md is
 * the contract.
 *
 * An entry is a block of two cache lines, the key's bytes inline (up to
 * OC_INLINE_KEY; a longer key is malloc'd beside it), and the handle the
 * engine holds is its address. Blocks are never given back to malloc
 * before the cache is destroyed (rule 11). Most entries sit in their
 * shard's home array, in the window of OC_WINDOW blocks that starts where
 * the key's hash points (rule 12): a hit reads the block there — state
 * word, hash, key, value and charge share its first line — and nothing
 * else, one cache miss where a table of pointers costs two (the bucket,
 * then the entry it names). An entry whose window is full lives in a
 * block of the cache's chunks, found through the shard's overflow table
 * (open addressing; each bucket holds the hash, so a probe compares
 * hashes before it touches an entry). The key's 64-bit hash is computed
 * once per call; its bits 32 and up pick the shard, its low 32 bits the
 * window and the bucket.
 *
 * A shard is a mutex, a home array and an overflow table, a slot array and one
 * hotset policy whose capacity is the shard's share of the cache's, in
 * bytes (hs_policy_env.unit_bytes 1, as the simulator's byte mode): an
 * entry's access size is its charge. The policy names entries by slot;
 * an entry holds one slot of its shard from its insert until it leaves the
 * table, and slot i in the policy is slot i in the array. The policy is
 * sized for capacity / expected_charge entries with a quarter more; when
 * the slots run out the array doubles and the policy is made again with
 * the new count, the residents inserted in the old one's victim order and
 * hit back to the standing they had (as the frame cache resizes,
 * frame_cache_resize.c), so thousands of tiny entries fit a cache sized
 * for large ones. A capacity change rebuilds it the same way.
 *
 * The rules (each asserted where it matters with HS_INVARIANT):
 *
 *  1. Where an entry is. In the table and in the policy (OE_POLICY); in
 *     the table outside the policy (OE_OUT: no room for it in the policy
 *     when it came or when the policy was rebuilt smaller), and then, when
 *     no one references it, OE_LOOSE, the first thing to go when room is
 *     needed; out of the table but referenced (erased, replaced or evicted
 *     while held, or kept out at birth by rule 13: the shard counts them
 *     in `nout`); or freed. Nothing else.
 *  2. Usage is the sum of the charges of the entries not yet freed, the
 *     table's and the `nout` ones; pinned usage the sum of the charges of
 *     the referenced ones. Both are exact whenever no call is running.
 *  3. A referenced entry is never evicted. The victim search skips slots
 *     whose entry has references, and the eviction itself is claim(): one
 *     compare-and-swap from "in the table, 0 references" to "out of it",
 *     which fails if a lock-free lookup (rule 11) took a reference since
 *     the search looked — the search then asks again. An entry with
 *     OS_SLOW or OS_SCAN set is taken from 0 references to 1 only by a
 *     lookup holding the lock, so for those (the loose ones, the scan
 *     ring's) a count of 0 read under the lock stays 0 until the unlock
 *     (hs_object_ref needs a reference already).
 *  4. Zero charges: the policy refuses a size of 0, so an entry counts
 *     max(charge, 1) inside the policy while usage counts its true charge;
 *     a zero-charge entry thus takes a byte of the policy's room (the
 *     policy's capacity is at least 1, even for a capacity of 0). An entry
 *     the policy can never hold (a charge above its capacity or 4 GiB)
 *     lives outside it (rule 1).
 *  5. The release fast path. An entry's state word holds its references,
 *     the hits it owes the policy (rule 11) and three bits, OS_IN_TABLE,
 *     OS_SLOW (set while OE_OUT, and from an insert's publication until
 *     the entry is in the policy) and OS_SCAN (set while OE_SCAN). A
 *     release that leaves references, or that takes the last one from an
 *     entry in the table, not OS_SLOW, without erase_if_last, while its
 *     shard is within capacity, is one compare-and-swap and no lock. Every
 *     other release takes the shard's lock, and takes the last reference
 *     and (erasing, or over capacity) OS_IN_TABLE in one compare-and-swap,
 *     since a lock-free lookup may add one meanwhile. OS_IN_TABLE is
 *     cleared only under the lock, by an atomic and or a compare-and-swap;
 *     whoever clears it when the count is 0 frees the entry, and a release
 *     that takes the count to 0 when it is clear frees it. The word orders
 *     the two: exactly one frees.
 *  6. free_object runs with no lock held: entries to free are put on a
 *     list under the lock (`doomed`) and freed after the unlock.
 *  7. Room. An insert first evicts loose entries, then the policy's
 *     victims, until the shard's usage plus the charge fits its capacity
 *     and the policy has room for the entry. If it cannot (the rest are
 *     referenced): strict and a handle asked for, refused with nothing
 *     inserted; strict without a handle, freed at once through
 *     free_object; otherwise inserted outside the policy (rule 1) with the
 *     usage past the capacity — unless, without a handle, the charge is
 *     more than the shard's whole capacity: then it is freed at once too
 *     (it could never fit, and no one holds it).
 *  8. Over capacity at a release. The last reference to an entry let go
 *     while its shard's usage is past its capacity (the capacity shrank,
 *     or an overfilled insert) frees it, as RocksDB's LRUCache does; an
 *     OE_OUT entry whose last reference goes enters the policy if there is
 *     room now, and is freed otherwise when over capacity, loose when not.
 *     The release's fast path reads a shard's usage and capacity only while
 *     the cache's count of shards over capacity (shards_over, in the
 *     line every lookup reads; note_over keeps it under each shard's lock
 *     where usage or capacity change) is not 0: an evicting cache keeps
 *     its shards at or under capacity, so a release reads no shard line.
 *  9. for_each walks the slot arrays, which keep every entry's slot for
 *     its life in the table (growth appends), so no entry is seen twice.
 * 10. Scans: an insert the detector places inside a scan (or a LOW one)
 *     reaches the policy with HS_HINT_RING and recycle_first; the scan's
 *     entries carry OE_SCAN until an access outside a scan finds one, and
 *     an OE_SCAN entry evicted leaves its key's hash in the shard's ghost
 *     table, which tells the detector a scan that comes back fits. The
 *     hint alone does not protect a clock: its hand lowers every count it
 *     passes, and a scan that drives it round and round drains the hot
 *     entries' counts however low the scan's own stand; and a policy that
 *     keeps new entries in a FIFO until they come back (2q) gives up the
 *     hot entries still there. So, as the frame cache's ring does, an
 *     insert that needs room first evicts the shard's oldest scan entry
 *     among the last ring_size (capacity / expected_charge / 8, 1 .. 32)
 *     scan entries inserted, if still OE_SCAN and unreferenced: a scan
 *     recycles its own entries, and the entries it brought are the first
 *     victims of anyone's insert.
 * 11. Lock-free hits. For a policy whose hits only set a bit or bump a
 *     counter (HS_POLICY_CONCURRENT_HIT or _CONCURRENT, and not
 *     NEEDS_TIME: s3fifo, clock, sieve, fifo, car, clockpro, clock-sweep,
 *     clock-admit; c->lockfree), a lookup first tries without the lock:
 *     it probes the key's home window comparing the blocks' hashes, then,
 *     unless the window counts none of its keys there, the overflow table (its
 *     pointer read once: the mask travels in it) comparing bucket hashes,
 *     and on a match takes a reference with one
 *     compare-and-swap on the entry's state word that requires OS_IN_TABLE
 *     and neither OS_SLOW nor OS_SCAN, adding one hit owed to the policy
 *     (OS_HITS, saturating at 15). Then, holding the reference, it checks
 *     the entry's own hash and key: the block may have been freed and
 *     reused for another key between the bucket and the compare-and-swap;
 *     a mismatch drops the reference (an ordinary release) and the lookup
 *     takes the lock. So does a miss in the overflow, an empty bucket, a
 *     torn bucket, a probe racing a backward shift, an entry with OS_SLOW
 *     or OS_SCAN, and a thread inside a scan (rule 10's hits take the
 *     lock): a lock-free lookup returns an entry only when it holds a
 *     reference to an entry that was in the table with its key at the
 *     compare-and-swap. A miss of the home window is a miss without the
 *     lock when the window counts none of its keys in the overflow: an
 *     entry in the table stays in its block, with its tag and hash, from
 *     its insert (which happens before any lookup that follows it) until
 *     it leaves, so a probe that finds no block of the key while the
 *     window spills nothing finds what a locked probe would have found at
 *     some moment of the lookup; the miss is counted on the thread's
 *     stripe. Unless the detector may need the ghost table (rule 10): it
 *     is asked under the lock while the newest ghost is recent. What makes the stale
 *     pointers safe: entry blocks are never given back to malloc before
 *     destroy (a thread's freed blocks go to its own list, then to the
 *     cache's stack; a free block's word has no OS_IN_TABLE, so no
 *     compare-and-swap takes it; an insert writes a block's fields before
 *     it publishes the word with a release store, still OS_SLOW, and the
 *     lookup's compare-and-swap acquires), and replaced tables are kept
 *     until destroy (they only double, so they add up to less than the
 *     current one). A block with a reference cannot be freed, so its key
 *     is stable while the lookup compares it. The policy hears the owed
 *     hits under the lock: the victim search's pinned callback tells them
 *     when it comes to the entry and has the search step over it this
 *     time (if it then finds no victim it is asked again), and a rebuild
 *     tells every entry's first; so the policy judges the entry with its
 *     hits, a search later than if told at once. claim() (rule 3) fails
 *     on an entry with hits owed, so a hit between the search and the
 *     eviction is told too — except after 2 * nslots + 64 retries in one
 *     insert. The lock-free hit, and a reference's charge in the pinned
 *     usage, are counted on the thread's own stripe of c->stripes, a line
 *     no other thread writes while there are at most 16. Policies
 *     that move entries on each hit (lru, 2q, arc, ...) keep every hit
 *     under the lock.
 * 12. Home windows. Each shard has a home array of nhome + OC_WINDOW - 1
 *     blocks (nhome: its first slot count, capacity / expected_charge and
 *     a quarter more), mapped at creation for the cache's life: a window
 *     is rarely full at the expected charge, and the array never moves, so
 *     handles into it stay valid and a stale probe reads a block of the
 *     cache. A key's window is the OC_WINDOW blocks from oc_window(hash);
 *     the shards' arrays are one mapping, so a lock-free lookup finds the
 *     window from the cache's first line (oc_cache_window, the same block)
 *     and reads no shard: a hit writes no line and reads none that a lock
 *     holder writes.
 *     An entry is in the table either in a block of its window, with
 *     OS_IN_TABLE (no bucket: the window is its place), or in a chunk
 *     block with a bucket in the overflow table; never both, and a key has
 *     at most one entry in the table (an insert takes the old one out
 *     first). An insert prepares the entry in a chunk block outside the
 *     lock and, under it, moves it to the first free block of its window
 *     if there is one (block_move), else keeps the chunk block and puts it
 *     in the overflow; entries never move after that. A home block is free
 *     when its state word has no OS_LIVE: set by the insert that
 *     publishes an entry there, cleared by free_doomed with a release
 *     store only after free_object has had the value and the key (rule 6:
 *     after the unlock), and read by the insert with an acquire; so an
 *     entry erased while referenced, or freed but not yet given back,
 *     keeps its block, and free_object reads a key no insert is writing.
 *     A home block's hash is read by lock-free probes before they hold a
 *     reference, so it is written (block_move) and read there atomically;
 *     everything else of the block is read only after the probe's
 *     compare-and-swap (which needs OS_IN_TABLE, published with a release
 *     after the fields) or under the lock. A probe goes on past a block
 *     whose hash matches but that is not in the table (the key's old
 *     entry, still held, while its new one is elsewhere). Beside the home
 *     arrays, two small arrays, one element per home block, that stay in
 *     the CPU's caches where the blocks do not: the blocks' 1-byte tags
 *     (7 bits of oc_tag of the entry's hash, set by block_move, cleared by
 *     detach), and the 2-byte oc_meta whose `spill` counts, at a window's
 *     first block, that window's entries in the overflow; whether that
 *     count is 0 is also the high bit of the window's first tag byte
 *     (OC_SPILLS), set and cleared by spill_count. The tags are an array
 *     of their own, not beside the counts, because every hit reads them:
 *     a quarter of the bytes is a quarter of the lines, and a line of it
 *     comes back to the core's L1 or L2 four times as often between the
 *     engine's own reads; and the spill bit in them spares a miss the
 *     count's line. Both are hints, written under the lock and
 *     read by lock-free probes atomically: a probe reads a window's four
 *     tags (one small read, a cache hit) while it prefetches the window's
 *     first block, reads only blocks whose tag matches — a hit costs the
 *     one miss of its block, a miss costs no miss at all — and skips the
 *     overflow when the spill bit is clear. A stale tag or bit only costs
 *     a read or sends a lookup to the lock, and a miss without the lock
 *     is one only where a locked probe would have missed too (rule 11). Under the
 *     lock the tags are exact (each in-table home entry's is set by
 *     block_move before its OS_IN_TABLE and cleared by detach before it
 *     leaves, both under the lock), so table_find too reads only the
 *     blocks whose tag matches: a miss under the lock reads no block.
 *     The home array is not resized: a capacity raised
 *     later, or entries smaller than expected, put the excess in the
 *     overflow, which doubles as before (a lookup there costs the bucket's
 *     miss and the entry's, as every lookup did before the windows).
 * 13. Kept, not replaced (keep_cached). An insert of a key the table holds
 *     leaves that entry where it is and hits it under the lock as a lookup
 *     would; the new entry never enters the table nor the policy and
 *     holds no slot nor home block (it stays in the chunk block it was
 *     prepared in). Without `out` its value goes to free_object after the
 *     unlock; with it, it is rule 1's "out of the table but referenced"
 *     from birth: in `nout` and the usage, freed by its last release like
 *     an erased entry still held. A key thus has one entry in the table
 *     and any number of such outsiders, as after a replace. The insert's
 *     outcome says KEPT, where one that took an old entry out says
 *     REPLACED: RocksDB counts either as a redundant insert.
 *
 * The hit path: hash the key; with a lock-free policy, rule 11's probe of
 * the home window (rule 12) and compare-and-swap, no lock, no write but
 * the entry's state word and the thread's own counter. Otherwise (or when
 * that path declines): prefetch the blocks whose tag matches, take the shard's
 * lock, probe, add a reference with an atomic add, tell the
 * policy (the policy object is touched only under the lock: a slot growth
 * replaces it), unlock. The release is rule 5's compare-and-swap. The
 * detector costs a thread-local lookup on a hit.
 */
#include "hotset/object_cache.h"

#include "cache/object_cache_internal.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/seams.h"
#include "hotset/policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define DEFAULT_POLICY      "s3fifo"
#define DEFAULT_CHARGE      4096u
#define MAX_RESTORE_HITS    5u
#define MIN_SLOTS           16u
#define MIN_SHARD_BYTES     (512u * 1024u) /* shard_bits -1: one shard per this much */
#define MAX_AUTO_SHARD_BITS 6
#define MAX_SHARD_BITS      16

static _Atomic uint64_t cache_ids = 1; /* hs_object_cache.id: never reused */

/* ---- small helpers ------------------------------------------------------- */

static inline uint32_t refs_of(uint32_t state) {
  return state & OS_REFS;
}

/* Bytes a charge takes inside the policy (rule 4). */
static inline uint64_t policy_size(size_t charge) {
  return charge ? charge : 1;
}

/* usage + extra > capacity, without overflow. */
static inline bool over(uint64_t usage, uint64_t extra, uint64_t capacity) {
  return extra > capacity || usage > capacity - extra;
}

static uint64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static inline hs_access make_access(const hs_object_cache *c, uint64_t hash, uint64_t size,
                                    bool ring) {
  return (hs_access){.key = hash,
                     .size = size,
                     .now = c->needs_time ? now_ms() : 0,
                     .next = HS_NEXT_UNKNOWN,
                     .kind = HS_ACCESS_READ,
                     .hint = ring ? HS_HINT_RING : HS_HINT_NORMAL,
                     .recycle_first = ring};
}

/* A broken rule (not a NULL argument): a debug build stops here. */
__attribute__((format(printf, 1, 2))) static hs_status broken_rule(const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (HS_DEBUG_CHECKS) hs_debug_stop(__FILE__, __LINE__, "%s", msg);
  return hs_fail(HS_ERR_MISUSE, 0, "%s", msg);
}

/* The key's hash: eight bytes at a time, each mixed in with a multiply,
 * then fmix64 over the whole. */
static inline uint64_t key_hash(const void *key, size_t len) {
  const unsigned char *p = key;
  uint64_t h = 0x243f6a8885a308d3ull ^ ((uint64_t)len * 0x9e3779b97f4a7c15ull);
  while (len >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
    p += 8;
    len -= 8;
  }
  if (len) {
    uint64_t w = 0;
    memcpy(&w, p, len);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  }
  return hs_mix64(h);
}

uint64_t oc_hash(const void *key, size_t len) {
  return key_hash(key, len);
}

static inline oc_shard *shard_of(const hs_object_cache *c, uint64_t hash) {
  return &c->shards[(uint32_t)(hash >> 32) & c->shard_mask];
}

/* The calling thread's stripe of the cache's lock-free counters. */
static _Atomic unsigned stripe_ids;
/* initial-exec: no __tls_get_addr call when built into a shared library */
static _Thread_local unsigned stripe_id
    __attribute__((tls_model("initial-exec"))); /* 0: none yet */

static inline oc_stripe *thread_stripe(hs_object_cache *c) {
  if (__builtin_expect(!stripe_id, 0))
    stripe_id = atomic_fetch_add_explicit(&stripe_ids, 1, memory_order_relaxed) % OC_STRIPES + 1;
  return &c->stripes[stripe_id - 1];
}

/* Pinned usage: a relaxed add on the thread's own stripe when an entry
 * goes from 0 references to 1, a subtraction when back (another thread's
 * stripe may take it: the sum is what counts). */
static inline void pinned_add(hs_object_cache *c, uint64_t charge) {
  atomic_fetch_add_explicit(&thread_stripe(c)->pinned, charge, memory_order_relaxed);
}
static inline void pinned_sub(hs_object_cache *c, uint64_t charge) {
  atomic_fetch_sub_explicit(&thread_stripe(c)->pinned, charge, memory_order_relaxed);
}

/* One more lock-free hit or miss: a relaxed load and store on the
 * thread's own stripe (threads sharing a stripe may lose a count:
 * statistics). */
static inline void count_on_stripe(_Atomic uint64_t *n) {
  atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1, memory_order_relaxed);
}
static inline void count_hit(hs_object_cache *c) {
  count_on_stripe(&thread_stripe(c)->hits);
}
static inline void count_miss(hs_object_cache *c) {
  count_on_stripe(&thread_stripe(c)->misses);
}

/* Under s's lock, after its usage or capacity changed: keeps the cache's
 * count of shards over capacity (rule 8's hint for the release). */
static inline void note_over(oc_shard *s) {
  bool now = over(s->usage, 0, s->capacity);
  if (now == s->over) return;
  s->over = now;
  if (now)
    atomic_fetch_add_explicit(s->shards_over, 1, memory_order_relaxed);
  else
    atomic_fetch_sub_explicit(s->shards_over, 1, memory_order_relaxed);
}

static void doom(oc_shard *s, hs_object *e, hs_object **doomed) {
  HS_INVARIANT((atomic_load(&e->state) & (OS_REFS | OS_IN_TABLE | OS_LIVE)) == OS_LIVE,
               "object cache: freeing an entry with references, still in the table, or freed");
  HS_INVARIANT(s->usage >= e->charge, "object cache: usage %llu below a charge of %zu",
               (unsigned long long)s->usage, e->charge);
  STORE(s->usage, s->usage - e->charge);
  note_over(s);
  e->next = *doomed;
  *doomed = e;
}

/* ---- entry blocks (rule 11) ----------------------------------------------- */

/* Blocks are the cache's: they come in chunks (freed at destroy) and are
 * never given back to malloc before. A thread keeps the blocks it freed
 * last in a list of its own (up to TL_BLOCKS, per cache, for the last few
 * caches it used: no atomic, and the next insert reuses a block still in
 * the cache); beyond that they go to the cache's `returned` stack, which
 * a thread with none left takes whole. A block on a list has no
 * OS_IN_TABLE: no lookup takes a reference to it. */
#define CHUNK_MIN (4u << 10)
#define CHUNK_MAX (2u << 20) /* a huge page */
#define TL_BLOCKS 64u
#define TL_CACHES 4u

typedef struct tl_blocks {
  uint64_t cache;  /* the cache's id (never reused); 0: none */
  hs_object *list; /* blocks this thread freed, last first */
  uint32_t n;
  hs_object *fresh, *fresh_end; /* the rest of a chunk, never used yet */
} tl_blocks;
static _Thread_local tl_blocks tl_lists[TL_CACHES] __attribute__((tls_model("initial-exec")));

static inline tl_blocks *thread_blocks(const hs_object_cache *c) {
  tl_blocks *t = &tl_lists[c->id & (TL_CACHES - 1)];
  if (__builtin_expect(t->cache != c->id, 0)) /* another cache's blocks: left to it */
    *t = (tl_blocks){.cache = c->id};
  return t;
}

/* A block for a new entry, no lock held; NULL without memory. The
 * blocks freed last first (still in the cache), then the cache's stack,
 * then a chunk's fresh blocks. */
static hs_object *block_take(hs_object_cache *c) {
  tl_blocks *t = thread_blocks(c);
  if (!t->list && atomic_load_explicit(&c->returned, memory_order_relaxed)) {
    t->list = atomic_exchange_explicit(&c->returned, NULL, memory_order_acquire);
    for (hs_object *e = t->list; e; e = e->next) t->n++;
  }
  if (t->list) {
    hs_object *e = t->list;
    t->list = e->next;
    t->n--;
    return e;
  }
  if (t->fresh == t->fresh_end) {
    /* Chunks grow with the cache, to a huge page each (a lookup's TLB
     * miss is then rare): half the bytes the cache's blocks take. */
    size_t bytes = CHUNK_MIN;
    while (bytes < CHUNK_MAX &&
           bytes * 2 <= atomic_load_explicit(&c->block_bytes, memory_order_relaxed) / 2)
      bytes *= 2;
    oc_chunk *k = aligned_alloc(bytes, bytes);
    if (!k) return NULL;
    if (bytes == CHUNK_MAX) (void)madvise(k, bytes, MADV_HUGEPAGE);
    atomic_fetch_add_explicit(&c->block_bytes, bytes, memory_order_relaxed);
    k->next = atomic_load_explicit(&c->chunks, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&c->chunks, &k->next, k, memory_order_release,
                                                  memory_order_relaxed)) {
    }
    t->fresh = &k->blocks[0];
    t->fresh_end = t->fresh + (bytes - sizeof *k) / sizeof(hs_object);
  }
  hs_object *e = t->fresh++;
  atomic_init(&e->state, 0); /* before any bucket can point at it */
  return e;
}

/* Blocks back (a list from `first` to `last`): the thread's list first,
 * the rest to the cache's stack. */
static void blocks_put(hs_object_cache *c, hs_object *first, hs_object *last) {
  tl_blocks *t = thread_blocks(c);
  while (first && t->n < TL_BLOCKS) {
    hs_object *next = first == last ? NULL : first->next;
    first->next = t->list;
    t->list = first;
    t->n++;
    first = next;
  }
  if (!first) return;
  hs_object *head = atomic_load_explicit(&c->returned, memory_order_relaxed);
  do last->next = head;
  while (!atomic_compare_exchange_weak_explicit(&c->returned, &head, first, memory_order_release,
                                                memory_order_relaxed));
}

/* Rule 6: called with no lock held. A home block is free for the next
 * insert into its window once its value is given back (rule 12): the
 * release store orders free_object's reads of it before the insert's
 * writes (home_free's acquire). Chunk blocks go back to the lists. */
static void free_doomed(hs_object_cache *c, hs_object *e) {
  hs_object *first = NULL, *last = NULL;
  while (e) {
    hs_object *next = e->next;
    if (c->free_object) c->free_object(oc_key(e), e->key_len, e->value, e->tag, c->ctx);
    if (e->key_len > OC_INLINE_KEY) free(e->key.out);
    if (oc_is_home(shard_of(c, e->hash), e)) {
      atomic_store_explicit(&e->state, 0, memory_order_release);
    } else {
      e->next = first;
      first = e;
      if (!last) last = e;
    }
    e = next;
  }
  if (first) blocks_put(c, first, last);
}

/* ---- the key table ------------------------------------------------------- */

#define BHASH(b)  atomic_load_explicit(&(b)->hash, memory_order_relaxed)
#define BENTRY(b) atomic_load_explicit(&(b)->e, memory_order_relaxed)
#define BSET(b, h, x)                                                                              \
  (atomic_store_explicit(&(b)->hash, (h), memory_order_relaxed),                                   \
   atomic_store_explicit(&(b)->e, (x), memory_order_release))

static inline oc_table *table_of(const oc_shard *s) {
  return atomic_load_explicit(&((oc_shard *)s)->table, memory_order_relaxed);
}

static inline bool key_is(const hs_object *e, uint64_t hash, const void *key, size_t len) {
  if (e->hash != hash || e->key_len != len) return false;
  if (len == 16) { /* RocksDB's keys: two words, no call */
    uint64_t a[2], b[2];
    memcpy(a, e->key.in, 16);
    memcpy(b, key, 16);
    return ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0;
  }
  return len == 0 || memcmp(oc_key(e), key, len) == 0;
}

/* A home block's hash, and its metadata: read by lock-free probes with no
 * reference held, so written and read atomically (rule 12). */
#define HHASH(e)   __atomic_load_n(&(e)->hash, __ATOMIC_RELAXED)
#define TAG(t)     (__atomic_load_n(t, __ATOMIC_RELAXED) & OC_TAG_BITS)
#define SPILLS(wt) (__atomic_load_n(wt, __ATOMIC_RELAXED) & OC_SPILLS) /* wt: a window's tags */

/* Under the lock: one more (`up`) or one fewer entry of hash's window in
 * the overflow; the window's first tag byte says whether there are any. */
static inline void spill_count(oc_shard *s, uint64_t hash, bool up) {
  oc_meta *m = oc_window_meta(s, hash);
  uint16_t n = m->spill;
  if (n == UINT16_MAX) return;
  uint16_t now = (uint16_t)(up ? n + 1 : n - 1);
  m->spill = now;
  if ((n == 0) != (now == 0)) {
    uint8_t *t = &s->tags[oc_window_at(s, hash)];
    uint8_t old = __atomic_load_n(t, __ATOMIC_RELAXED);
    __atomic_store_n(t, (uint8_t)(now ? old | OC_SPILLS : old & ~OC_SPILLS), __ATOMIC_RELAXED);
  }
}

/* Under the lock: the tag of home block `h` (its entry's, or 0), its
 * window's OC_SPILLS kept. */
static inline void home_tag(const oc_shard *s, const hs_object *h, uint8_t tag) {
  uint8_t *t = &s->tags[h - s->home];
  uint8_t old = __atomic_load_n(t, __ATOMIC_RELAXED);
  __atomic_store_n(t, (uint8_t)((old & OC_SPILLS) | tag), __ATOMIC_RELAXED);
}

/* Under the lock: the key's entry in its home window, else in the
 * overflow (rule 12). Under the lock a home block's tag is exact — every
 * entry of the table there has its own, set and cleared under the lock —
 * so only the blocks whose tag matches are read: a miss reads none. */
static inline hs_object *table_find(const oc_shard *s, uint64_t hash, const void *key, size_t len) {
  hs_object *h = oc_window(s, hash);
  const uint8_t *tags = s->tags + (h - s->home), tag = oc_tag(hash);
  for (uint32_t j = 0; j < OC_WINDOW; j++, h++)
    if (TAG(tags + j) == tag && HHASH(h) == hash &&
        (atomic_load_explicit(&h->state, memory_order_relaxed) & OS_IN_TABLE) &&
        key_is(h, hash, key, len))
      return h;
  HS_INVARIANT(!SPILLS(tags) == !oc_window_meta(s, hash)->spill,
               "object cache: a window's spill bit is not its overflow count");
  if (!SPILLS(tags)) return NULL;
  const oc_table *t = table_of(s);
  for (uint32_t i = (uint32_t)hash & t->mask;; i = (i + 1) & t->mask) {
    const oc_bucket *b = &t->b[i];
    hs_object *e = BENTRY(b);
    if (!e) return NULL;
    if (BHASH(b) == hash && key_is(e, hash, key, len)) return e;
  }
}

/* A home block is in the table by its OS_IN_TABLE bit alone: its window
 * is its place. Any other goes to the overflow (rule 12). */
static void table_put(oc_shard *s, hs_object *e) {
  STORE(s->count, s->count + 1);
  if (oc_is_home(s, e)) return;
  oc_table *t = table_of(s);
  uint32_t i = (uint32_t)e->hash & t->mask;
  while (BENTRY(&t->b[i])) i = (i + 1) & t->mask;
  BSET(&t->b[i], e->hash, e);
  STORE(s->ocount, s->ocount + 1);
  spill_count(s, e->hash, true);
}

/* Backward-shift deletion: no tombstones. A lock-free lookup racing a
 * shift may miss the key or see a torn bucket; it then takes the lock. */
static void table_remove(oc_shard *s, hs_object *e) {
  STORE(s->count, s->count - 1);
  if (oc_is_home(s, e)) return;
  oc_table *t = table_of(s);
  uint32_t i = (uint32_t)e->hash & t->mask;
  while (BENTRY(&t->b[i]) != e) i = (i + 1) & t->mask;
  for (uint32_t j = (i + 1) & t->mask;; j = (j + 1) & t->mask) {
    hs_object *x = BENTRY(&t->b[j]);
    if (!x) break;
    uint64_t h = BHASH(&t->b[j]);
    uint32_t home = (uint32_t)h & t->mask;
    if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
      BSET(&t->b[i], h, x);
      i = j;
    }
  }
  BSET(&t->b[i], 0, NULL);
  STORE(s->ocount, s->ocount - 1);
  HS_INVARIANT(oc_window_meta(s, e->hash)->spill,
               "object cache: an overflow entry its window missed");
  spill_count(s, e->hash, false);
}

static bool table_resize(oc_shard *s, uint32_t size) {
  oc_table *old = table_of(s);
  oc_table *t = aligned_alloc(64, (sizeof *t + sizeof(oc_bucket) * size + 63) / 64 * 64);
  if (!t) return false;
  t->mask = size - 1;
  t->retired = old;
  for (uint32_t i = 0; i < size; i++) {
    atomic_init(&t->b[i].hash, 0);
    atomic_init(&t->b[i].e, NULL);
  }
  for (uint32_t i = 0; old && i <= old->mask; i++) {
    hs_object *e = BENTRY(&old->b[i]);
    if (!e) continue;
    uint32_t j = (uint32_t)e->hash & t->mask;
    while (atomic_load_explicit(&t->b[j].e, memory_order_relaxed)) j = (j + 1) & t->mask;
    atomic_init(&t->b[j].hash, e->hash);
    atomic_init(&t->b[j].e, e);
  }
  atomic_store_explicit(&s->table, t, memory_order_release); /* the old one stays (rule 11) */
  return true;
}

static void table_free(oc_table *t) {
  while (t) {
    oc_table *next = t->retired;
    free(t);
    t = next;
  }
}

/* Room for one more key in the overflow at a load of at most 1/2: a
 * lookup's probe is then a bucket or two, one line. */
static bool table_reserve(oc_shard *s) {
  uint64_t size = (uint64_t)table_of(s)->mask + 1;
  if ((uint64_t)(s->ocount + 1) * 2 <= size) return true;
  return size < (1ull << 31) && table_resize(s, (uint32_t)size * 2);
}

/* ---- home windows (rule 12) ---------------------------------------------- */

/* The window's first lines, before the lock is taken. */
static inline void prefetch_window(const oc_shard *s, uint64_t hash) {
  const hs_object *h = oc_window(s, hash);
  for (uint32_t j = 0; j < OC_WINDOW; j++) __builtin_prefetch(h + j);
}

/* The blocks of the key's window whose tag matches (a hint: read without
 * the lock), fetched while the lock is taken: what table_find reads. */
static inline void prefetch_matches(const oc_shard *s, uint64_t hash) {
  const hs_object *h = oc_window(s, hash);
  const uint8_t *tags = s->tags + (h - s->home), tag = oc_tag(hash);
  for (uint32_t j = 0; j < OC_WINDOW; j++)
    if (TAG(tags + j) == tag) __builtin_prefetch(h + j);
}

/* Under the lock: a free block of the key's home window (no entry in it
 * not yet freed), or NULL when the window is full. The acquire pairs with
 * free_doomed's release: the last value's free_object is done. */
static hs_object *home_free(const oc_shard *s, uint64_t hash) {
  hs_object *h = oc_window(s, hash);
  for (uint32_t j = 0; j < OC_WINDOW; j++, h++)
    if (!(atomic_load_explicit(&h->state, memory_order_acquire) & OS_LIVE)) return h;
  return NULL;
}

/* Under the lock: the entry prepared in chunk block `from` (not yet
 * published) moves to the free home block `to`, its slot with it. Not
 * the state word (published by the insert) and, for lock-free probes, the
 * hash with an atomic store. */
static hs_object *block_move(oc_shard *s, hs_object *to, const hs_object *from) {
  HS_INVARIANT(oc_is_home(s, to) && !(atomic_load(&to->state) & (OS_LIVE | OS_IN_TABLE | OS_REFS)),
               "object cache: an entry moved to a home block not free");
  to->key_len = from->key_len;
  __atomic_store_n(&to->hash, from->hash, __ATOMIC_RELAXED);
  to->value = from->value;
  to->charge = from->charge;
  to->slot = from->slot;
  to->flags = from->flags;
  memcpy(&to->key, &from->key, sizeof to->key);
  to->tag = from->tag;
  to->next = NULL;
  s->slots[to->slot] = to;
  home_tag(s, to, oc_tag(from->hash));
  return to;
}

/* ---- the policy ---------------------------------------------------------- */

static hs_status policy_make(const hs_object_cache *c, uint64_t capacity, uint32_t slots,
                             hs_policy **out) {
  hs_policy_env env = {.unit_bytes = 1, .clock = HS_CLOCK_MILLISECONDS};
  hs_status st = hs_policy_create(c->spec, capacity ? capacity : 1, slots, &env, out);
  if (st != HS_OK) return st;
  if (hs_policy_flags(*out) &
      (HS_POLICY_SIM_ONLY | HS_POLICY_NEEDS_FUTURE | HS_POLICY_NEEDS_HINDSIGHT)) {
    hs_policy_destroy(*out);
    *out = NULL;
    return hs_fail(HS_ERR_INVALID, 0,
                   "object cache: policy \"%s\" runs only in the simulator (it needs to know the "
                   "future)",
                   c->spec);
  }
  return HS_OK;
}

static bool fits_policy(const oc_shard *s, size_t charge) {
  return charge <= UINT32_MAX && policy_size(charge) <= hs_policy_capacity(s->policy);
}

/* The victim search's pinned callback. It also tells the policy the hits
 * lock-free lookups owe it for the entry (rule 11) when the search comes
 * to it, and has the search step over it this time: the next search
 * judges it with its hits (a hit is safe during a search for the
 * policies lookups skip the lock for: HS_POLICY_CONCURRENT_HIT, another
 * thread's hit may come at any point of one). */
static bool slot_pinned(void *ctx, uint32_t slot) {
  oc_shard *s = ctx;
  hs_object *e = s->slots[slot];
  uint32_t st = atomic_load_explicit(&e->state, memory_order_relaxed);
  if (st & OS_HITS) {
    st = atomic_fetch_and_explicit(&e->state, ~OS_HITS, memory_order_relaxed);
    hs_access a = make_access(s->cache, e->hash, policy_size(e->charge), false);
    for (uint32_t n = (st & OS_HITS) / OS_HIT1; n; n--) hs_policy_hit(s->policy, slot, &a);
    s->told++;
    return true;
  }
  return refs_of(st) != 0;
}

/* The shard's ghost table (rule 10). */
static inline oc_ghost *ghost_of(const oc_shard *s, uint64_t hash) {
  return &s->ghost[(uint32_t)hs_mix64(hash ^ 0x5ca9u) & s->ghost_mask];
}

/* A ghost written when the shard had seen `at` bytes of scan inserts (0:
 * none) is recent while fewer than 3/4 of its capacity's worth have come
 * since (object_scan.c, "fits"). */
static inline bool ghost_at_recent(const oc_shard *s, uint64_t at) {
  return at && (LOAD(s->scan_bytes) - at) / 3 <= LOAD(s->capacity) / 4;
}

/* Whether some ghost of s may still be recent: every ghost's `at` is at
 * most the newest's, so when that one is too old, all are. Read without
 * the lock by a lock-free miss (rule 11), under it by ghost_recent. */
static inline bool ghosts_may_be_recent(const oc_shard *s) {
  return ghost_at_recent(s, LOAD(s->ghost_newest_at));
}

static bool ghost_recent(const oc_shard *s, uint64_t hash) {
  if (!s->ghost || !ghosts_may_be_recent(s)) return false;
  const oc_ghost *g = ghost_of(s, hash);
  return g->hash == hash && ghost_at_recent(s, g->at);
}

/* Takes an entry out of the table, the policy and its slot (rule 1);
 * `evicted`: the policy may keep a ghost, and a scan's entry leaves one in
 * the shard's ghost table. leave() then decides who frees it. */
static void detach(oc_shard *s, hs_object *e, bool evicted) {
  if (e->flags & OE_POLICY) {
    hs_status st =
        evicted ? hs_policy_evict(s->policy, e->slot) : hs_policy_remove(s->policy, e->slot);
    HS_INVARIANT(st == HS_OK, "object cache: slot %u was not in the policy", e->slot);
    (void)st;
  }
  if (e->flags & OE_LOOSE) s->nloose--;
  if (evicted && (e->flags & OE_SCAN) && s->ghost) {
    uint64_t at = s->scan_bytes ? s->scan_bytes : 1;
    *ghost_of(s, e->hash) = (oc_ghost){.hash = e->hash, .at = at};
    STORE(s->ghost_newest_at, at);
    if (!atomic_load_explicit(s->ghosts_written, memory_order_relaxed))
      atomic_store_explicit(s->ghosts_written, true, memory_order_relaxed);
  }
  table_remove(s, e);
  if (oc_is_home(s, e)) home_tag(s, e, 0); /* no probe reads it for this key now */
  s->slots[e->slot] = NULL;
  s->free_slots[s->nfree++] = e->slot;
  e->flags &= OE_SCAN;
}

/* Rule 5: the entry leaves the table; freed now if no one references it,
 * else by the release of its last reference. */
static void leave(oc_shard *s, hs_object *e, hs_object **doomed) {
  uint32_t old = atomic_fetch_and(&e->state, ~(OS_IN_TABLE | OS_HITS));
  HS_INVARIANT(old & OS_IN_TABLE, "object cache: an entry left the table twice");
  if (refs_of(old) == 0)
    doom(s, e, doomed);
  else
    s->nout++;
}

/* Rule 3 with lock-free lookups (rule 11): takes an unreferenced entry
 * out of the table in one compare-and-swap, so no lookup can take a
 * reference between the check and the removal; false (nothing changed)
 * when it has references, or, unless `force`, hits owed to the policy. */
static bool claim(hs_object *e, bool force) {
  uint32_t old = atomic_load_explicit(&e->state, memory_order_relaxed);
  uint32_t busy = OS_REFS | (force ? 0 : OS_HITS);
  do {
    HS_INVARIANT(old & OS_IN_TABLE, "object cache: claiming an entry not in the table");
    if (old & busy) return false;
  } while (!atomic_compare_exchange_weak_explicit(&e->state, &old, old & ~(OS_IN_TABLE | OS_HITS),
                                                  memory_order_acq_rel, memory_order_relaxed));
  return true;
}

/* A claimed entry leaves: detached, freed after the unlock. */
static void evict_claimed(oc_shard *s, hs_object *e, hs_object **doomed) {
  detach(s, e, true);
  doom(s, e, doomed);
  INC(s->evictions);
}

/* Up to n hits on an entry in the policy, stopping at the first that does
 * not raise its standing (more would change nothing). */
static void policy_hits(const hs_object_cache *c, oc_shard *s, const hs_object *e, uint32_t n) {
  hs_access a = make_access(c, e->hash, policy_size(e->charge), false);
  for (uint32_t i = 0, before = hs_policy_standing(s->policy, e->slot), now; i < n; i++) {
    hs_policy_hit(s->policy, e->slot, &a);
    if ((now = hs_policy_standing(s->policy, e->slot)) <= before) break;
    before = now;
  }
}

/* Rule 11: the hits lock-free lookups owed the policy for `e`, told it
 * now (policy_hits); whether there were any. */
static bool deliver_hits(const hs_object_cache *c, oc_shard *s, hs_object *e) {
  if (!(atomic_load_explicit(&e->state, memory_order_relaxed) & OS_HITS)) return false;
  uint32_t n =
      (atomic_fetch_and_explicit(&e->state, ~OS_HITS, memory_order_relaxed) & OS_HITS) / OS_HIT1;
  if (!(e->flags & OE_POLICY)) return false;
  policy_hits(c, s, e, n);
  return true;
}

static void drop_loose(oc_shard *s, hs_object **doomed) {
  for (uint32_t i = 0; i < s->nslots; i++) {
    hs_object *e = s->slots[i];
    if (e && (e->flags & OE_LOOSE)) {
      HS_INVARIANT(refs_of(atomic_load(&e->state)) == 0, "object cache: a loose entry is held");
      detach(s, e, true);
      leave(s, e, doomed);
      INC(s->evictions);
      return;
    }
  }
  HS_INVARIANT(false, "object cache: %u loose entries counted, none found", s->nloose);
}

static void ring_push(oc_shard *s, const hs_object *e) {
  if (s->ring_len == s->ring_size) {
    s->ring_head = (s->ring_head + 1) % OC_RING_MAX;
    s->ring_len--;
  }
  s->ring[(s->ring_head + s->ring_len++) % OC_RING_MAX] =
      (oc_ring_item){.hash = e->hash, .slot = e->slot};
}

/* Rule 10: evicts the oldest of the shard's last scan entries that is
 * still one and unreferenced; false when there is none. */
static bool ring_take(oc_shard *s, hs_object **doomed) {
  while (s->ring_len) {
    oc_ring_item it = s->ring[s->ring_head];
    s->ring_head = (s->ring_head + 1) % OC_RING_MAX;
    s->ring_len--;
    hs_object *e = it.slot < s->nslots ? s->slots[it.slot] : NULL;
    if (!e || e->hash != it.hash || (e->flags & (OE_SCAN | OE_POLICY)) != (OE_SCAN | OE_POLICY) ||
        refs_of(atomic_load_explicit(&e->state, memory_order_relaxed)))
      continue;
    detach(s, e, true);
    leave(s, e, doomed);
    INC(s->evictions);
    return true;
  }
  return false;
}

static uint32_t ring_size_for(const hs_object_cache *c, uint64_t capacity) {
  uint64_t n = capacity / c->expected_charge / 8;
  return n < 1 ? 1 : n > OC_RING_MAX ? OC_RING_MAX : (uint32_t)n;
}

/* Rule 7: evicts until `extra` more bytes fit the shard's capacity and
 * `psize` the policy's (0: nothing enters the policy): loose entries,
 * then the last scan entries (rule 10), then the policy's victims. False
 * when only referenced entries are left. */
static bool make_room(const hs_object_cache *c, oc_shard *s, uint64_t extra, uint64_t psize,
                      uint64_t hash, hs_object **doomed) {
  /* Past this many victims that lookups took back, one goes with a hit
   * owed (lookups keep hitting it). */
  uint64_t tries = 0, most = 2ull * s->nslots + 64;
  for (;;) {
    bool full = over(hs_policy_used(s->policy), psize, hs_policy_capacity(s->policy));
    if (!over(s->usage, extra, s->capacity) && !full) return true;
    if (s->nloose) {
      drop_loose(s, doomed);
      continue;
    }
    if (ring_take(s, doomed)) continue;
    hs_access in = make_access(c, hash, psize ? psize : 1, false);
    s->told = 0;
    int64_t v = hs_policy_victim(s->policy, &in, slot_pinned, s);
    if (v < 0 && s->told && ++tries <= most) continue; /* stepped over only for hits owed */
    if (v < 0) return false;
    hs_object *e = s->slots[v];
    HS_INVARIANT(e && (e->flags & OE_POLICY),
                 "object cache: the policy named slot %lld, not an entry of it", (long long)v);
    if (claim(e, ++tries > most)) evict_claimed(s, e, doomed);
    /* else a lookup referenced it, or hit it, since the search looked:
     * ask again (the callback skips it, or tells the hit) */
  }
}

/* An entry outside the policy: OS_SLOW so its lookups and last release
 * lock, and OE_LOOSE while unreferenced — read from the word the bit was
 * set in: from then on no reference comes or goes without the lock. */
static void make_outsider(oc_shard *s, hs_object *e) {
  e->flags = (uint8_t)((e->flags & OE_SCAN) | OE_OUT);
  if (refs_of(atomic_fetch_or(&e->state, OS_SLOW)) == 0) {
    e->flags |= OE_LOOSE;
    s->nloose++;
  }
}

/* OE_SCAN and its mirror OS_SCAN, under the lock. */
static void set_scan(hs_object *e, bool scan) {
  if (!!(e->flags & OE_SCAN) == scan) return;
  e->flags = (uint8_t)(scan ? e->flags | OE_SCAN : e->flags & ~OE_SCAN);
  if (scan)
    atomic_fetch_or_explicit(&e->state, OS_SCAN, memory_order_relaxed);
  else
    atomic_fetch_and_explicit(&e->state, ~OS_SCAN, memory_order_relaxed);
}

/* Brings an entry into the policy; false (nothing changed) when the
 * policy refuses it. */
static bool policy_enter(const hs_object_cache *c, oc_shard *s, hs_object *e, bool ring) {
  hs_access a = make_access(c, e->hash, policy_size(e->charge), ring);
  if (hs_policy_insert(s->policy, e->slot, &a) != HS_OK) return false;
  if (e->flags & OE_LOOSE) s->nloose--;
  e->flags = (uint8_t)((e->flags & OE_SCAN) | OE_POLICY);
  atomic_fetch_and_explicit(&e->state, ~OS_SLOW, memory_order_release);
  return true;
}

/* The residents of a policy, in its victim order as far as it tells. */
static uint32_t victim_order(const oc_shard *s, uint32_t *order, uint8_t *seen) {
  uint32_t n = hs_policy_upcoming_victims(s->policy, order, s->nslots), k = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t slot = order[i];
    if (slot < s->nslots && s->slots[slot] && (s->slots[slot]->flags & OE_POLICY) && !seen[slot]) {
      seen[slot] = 1;
      order[k++] = slot;
    }
  }
  for (uint32_t slot = 0; slot < s->nslots; slot++)
    if (!seen[slot] && s->slots[slot] && (s->slots[slot]->flags & OE_POLICY)) order[k++] = slot;
  return k;
}

/* A new policy of `capacity` bytes and `nslots` slots (s->nslots <=
 * nslots) takes the residents in the old one's victim order, each hit
 * back up to its old standing; the ones it cannot hold are evicted if
 * unreferenced, else held outside the policy (rule 1). */
static hs_status policy_rebuild(const hs_object_cache *c, oc_shard *s, uint64_t capacity,
                                uint32_t nslots, hs_object **doomed) {
  hs_policy *p = NULL;
  uint32_t n = s->nslots;
  uint32_t *order = malloc(sizeof *order * n), *standing = malloc(sizeof *standing * n);
  uint8_t *seen = calloc(n, 1);
  hs_status st = order && standing && seen
                     ? policy_make(c, capacity, nslots, &p)
                     : hs_fail(HS_ERR_NOMEM, ENOMEM, "object cache: no memory to rebuild a policy");
  if (st != HS_OK) {
    free(order), free(standing), free(seen);
    return st;
  }
  for (uint32_t slot = 0; slot < s->nslots; slot++) /* owed hits first (rule 11) */
    if (s->slots[slot]) (void)deliver_hits(c, s, s->slots[slot]);
  uint32_t k = victim_order(s, order, seen);
  for (uint32_t i = 0; i < k; i++) standing[i] = hs_policy_standing(s->policy, order[i]);
  hs_policy *old = s->policy;
  s->policy = p;
  for (uint32_t i = 0; i < k; i++) {
    hs_object *e = s->slots[order[i]];
    e->flags &= (uint8_t)~OE_POLICY; /* not in the new policy yet */
    hs_access a = make_access(c, e->hash, policy_size(e->charge), e->flags & OE_SCAN);
    if (fits_policy(s, e->charge) && !over(hs_policy_used(p), a.size, capacity ? capacity : 1) &&
        policy_enter(c, s, e, e->flags & OE_SCAN)) {
      for (unsigned h = 0; h < MAX_RESTORE_HITS; h++) {
        uint32_t now = hs_policy_standing(p, e->slot);
        if (now >= standing[i]) break;
        hs_policy_hit(p, e->slot, &a);
        if (hs_policy_standing(p, e->slot) <= now) break; /* hits do not raise it */
      }
    } else if (claim(e, true)) {
      evict_claimed(s, e, doomed);
    } else {
      make_outsider(s, e);
    }
  }
  hs_policy_destroy(old);
  free(order), free(standing), free(seen);
  return HS_OK;
}

/* Doubles the slot array and rebuilds the policy with as many slots. */
static bool slots_grow(const hs_object_cache *c, oc_shard *s, hs_object **doomed) {
  if (s->nslots >= (1u << 30)) return false;
  uint32_t n = s->nslots * 2;
  hs_object **slots = realloc(s->slots, sizeof *slots * n);
  if (!slots) return false;
  s->slots = slots;
  uint32_t *free_slots = realloc(s->free_slots, sizeof *free_slots * n);
  if (!free_slots) return false;
  s->free_slots = free_slots;
  if (policy_rebuild(c, s, hs_policy_capacity(s->policy), n, doomed) != HS_OK) return false;
  for (uint32_t i = s->nslots; i < n; i++) s->slots[i] = NULL;
  for (uint32_t i = n; i-- > s->nslots;) s->free_slots[s->nfree++] = i;
  s->nslots = n;
  return true;
}

static bool slot_take(const hs_object_cache *c, oc_shard *s, hs_object *e, hs_object **doomed) {
  if (!s->nfree && !slots_grow(c, s, doomed)) return false;
  e->slot = s->free_slots[--s->nfree];
  HS_INVARIANT(!s->slots[e->slot], "object cache: free slot %u holds an entry", e->slot);
  s->slots[e->slot] = e;
  return true;
}

/* ---- create and destroy -------------------------------------------------- */

void hs_object_cache_options_init(hs_object_cache_options *o) {
  if (!o) return;
  *o = (hs_object_cache_options){.capacity = 64ull << 20,
                                 .shard_bits = -1,
                                 .strict_capacity = false,
                                 .policy = NULL,
                                 .expected_charge = DEFAULT_CHARGE,
                                 .scan_run = 16,
                                 .scan_gap = 64u << 10,
                                 .keep_cached = false};
}

/* shard_bits -1: one shard per 512 KiB, at most 64. */
static int auto_shard_bits(uint64_t capacity) {
  int bits = 0;
  for (uint64_t n = capacity / MIN_SHARD_BYTES; n > 1 && bits < MAX_AUTO_SHARD_BITS; n >>= 1)
    bits++;
  return bits;
}

static uint64_t shard_share(uint64_t capacity, uint32_t nshards) {
  return capacity / nshards + (capacity % nshards != 0);
}

static uint32_t pow2_at_least(uint64_t n) {
  uint32_t p = 1;
  while (p < n && p < (1u << 30)) p *= 2;
  return p;
}

/* A shard's first slot count: its expected entries and a quarter more. */
static uint32_t slots_for(const hs_object_cache *c, uint64_t capacity) {
  uint64_t want = capacity / c->expected_charge;
  uint32_t nslots = (uint32_t)(want + want / 4 > (1u << 24) ? (1u << 24) : want + want / 4);
  return nslots < MIN_SLOTS ? MIN_SLOTS : nslots;
}

/* Rule 12: every shard's home array, one anonymous mapping (zero: every
 * block free, no OS_LIVE), given back only at destroy. As many windows
 * as the shard's first slots (its expected entries and a quarter more:
 * at the expected charge a window of OC_WINDOW blocks is rarely full),
 * plus OC_WINDOW - 1 blocks so the last window does not wrap. A mapping
 * dense enough to be touched whole is aligned and advised as huge pages:
 * a lookup's one miss is then rarely a TLB miss too. */
#define HUGE_PAGE (2u << 20)
static bool homes_map(hs_object_cache *c, uint32_t nhome) {
  size_t per = sizeof(hs_object) * ((size_t)nhome + OC_WINDOW - 1);
  size_t bytes = per * c->nshards;
  bool huge = bytes >= HUGE_PAGE && per >= (64u << 10);
  size_t whole = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  size_t map = huge ? whole + HUGE_PAGE : bytes;
  void *p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  c->home_map = p;
  c->home_bytes = map;
  uintptr_t base = (uintptr_t)p;
  if (huge) {
    base = (base + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    (void)madvise((void *)base, whole, MADV_HUGEPAGE);
  }
  c->home = (hs_object *)base;
  c->home_per = nhome + OC_WINDOW - 1;
  c->nhome = nhome;
  c->meta = calloc((size_t)c->home_per * c->nshards, sizeof *c->meta);
  c->tags = calloc((size_t)c->home_per * c->nshards, sizeof *c->tags);
  if (!c->meta || !c->tags) return false;
  for (uint32_t i = 0; i < c->nshards; i++) {
    c->shards[i].home = (hs_object *)(base + per * i);
    c->shards[i].meta = c->meta + (size_t)c->home_per * i;
    c->shards[i].tags = c->tags + (size_t)c->home_per * i;
    c->shards[i].nhome = nhome;
  }
  return true;
}

static hs_status shard_init(const hs_object_cache *c, oc_shard *s, uint64_t capacity) {
  uint32_t nslots = slots_for(c, capacity);
  s->cache = c;
  s->capacity = capacity;
  s->shards_over = (_Atomic uint32_t *)&c->shards_over;
  s->ghosts_written = (_Atomic bool *)&c->ghosts_written;
  s->ring_size = ring_size_for(c, capacity);
  s->nslots = nslots;
  s->slots = calloc(nslots, sizeof *s->slots);
  s->free_slots = malloc(sizeof *s->free_slots * nslots);
  if (c->detect) {
    uint32_t g = pow2_at_least((uint64_t)nslots * 2);
    s->ghost = calloc(g, sizeof *s->ghost);
    s->ghost_mask = g - 1;
  }
  if (!s->slots || !s->free_slots || (c->detect && !s->ghost) ||
      !table_resize(s, pow2_at_least(nslots / 8 < 16 ? 16 : nslots / 8))) /* grows with ocount */
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "object cache: no memory for a shard of %u slots", nslots);
  for (uint32_t i = nslots; i-- > 0;) s->free_slots[s->nfree++] = i;
  if (pthread_mutex_init(&s->mu, NULL) != 0)
    return hs_fail(HS_ERR_NOMEM, 0, "object cache: could not make a shard's mutex");
  return policy_make(c, capacity, nslots, &s->policy);
}

static void shard_free(hs_object_cache *c, oc_shard *s) {
  hs_object *doomed = NULL;
  for (uint32_t i = 0; s->slots && i < s->nslots; i++) {
    hs_object *e = s->slots[i];
    if (!e) continue;
    atomic_fetch_and(&e->state, ~OS_IN_TABLE);
    doom(s, e, &doomed);
  }
  free_doomed(c, doomed);
  hs_policy_destroy(s->policy);
  table_free(table_of(s));
  free(s->slots), free(s->free_slots), free(s->ghost);
}

static void cache_free(hs_object_cache *c, uint32_t inited) {
  for (uint32_t i = 0; i < c->nshards; i++) {
    shard_free(c, &c->shards[i]);
    if (i < inited) pthread_mutex_destroy(&c->shards[i].mu);
  }
  for (oc_chunk *k = atomic_load(&c->chunks), *next; k; k = next) {
    next = k->next;
    free(k);
  }
  if (c->home_map) munmap(c->home_map, c->home_bytes);
  free(c->meta);
  free(c->tags);
  free(c->shards);
  free(c->spec);
  pthread_mutex_destroy(&c->resize_mu);
  free(c);
}

hs_status hs_object_cache_create(const hs_object_cache_options *o, hs_object_cache **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_object_cache_create: out is NULL");
  *out = NULL;
  hs_object_cache_options defaults;
  if (!o) {
    hs_object_cache_options_init(&defaults);
    o = &defaults;
  }
  if (o->shard_bits < -1 || o->shard_bits > MAX_SHARD_BITS)
    return hs_fail(HS_ERR_INVALID, 0, "object cache: shard_bits %d is outside -1 .. %d",
                   o->shard_bits, MAX_SHARD_BITS);
  hs_object_cache *c = aligned_alloc(64, (sizeof *c + 63) / 64 * 64);
  if (!c) return hs_fail(HS_ERR_NOMEM, ENOMEM, "object cache: no memory");
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->resize_mu, NULL);
  int bits = o->shard_bits < 0 ? auto_shard_bits(o->capacity) : o->shard_bits;
  c->nshards = 1u << bits;
  c->shard_mask = c->nshards - 1;
  c->id = atomic_fetch_add(&cache_ids, 1);
  c->spec = strdup(o->policy ? o->policy : DEFAULT_POLICY);
  c->expected_charge = o->expected_charge ? o->expected_charge : DEFAULT_CHARGE;
  c->scan_run = o->scan_run;
  c->scan_gap = o->scan_gap;
  c->scan_mask = o->scan_gap ? (2ull << (63 - __builtin_clzll(o->scan_gap))) - 1 : 0;
  c->locate = o->locate;
  c->detect = o->locate && o->scan_run;
  c->keep_cached = o->keep_cached;
  c->free_object = o->free_object;
  c->ctx = o->ctx;
  atomic_init(&c->strict, o->strict_capacity);
  atomic_init(&c->capacity, o->capacity);
  atomic_init(&c->next_id, 1);
  c->shards = aligned_alloc(64, sizeof *c->shards * c->nshards);
  if (!c->spec || !c->shards) {
    uint32_t n = c->nshards;
    pthread_mutex_destroy(&c->resize_mu);
    free(c->spec), free(c->shards), free(c);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "object cache: no memory for %u shards", n);
  }
  memset(c->shards, 0, sizeof *c->shards * c->nshards);
  uint64_t share = shard_share(o->capacity, c->nshards);
  if (!homes_map(c, slots_for(c, share))) {
    cache_free(c, 0);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "object cache: no memory for the home arrays");
  }
  hs_status st = HS_OK;
  uint32_t inited = 0;
  for (; inited < c->nshards && st == HS_OK; inited++)
    st = shard_init(c, &c->shards[inited], share);
  if (st != HS_OK) {
    cache_free(c, inited);
    return st;
  }
  unsigned flags = hs_policy_flags(c->shards[0].policy);
  c->needs_time = (flags & HS_POLICY_NEEDS_TIME) != 0;
  /* Rule 11: policies whose hits only set a bit or bump a counter take
   * them late; the others (lru, 2q, ...) hear each hit under the lock. */
  c->lockfree = (flags & (HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT)) && !c->needs_time;
  *out = c;
  return HS_OK;
}

hs_status hs_object_cache_destroy(hs_object_cache *c) {
  if (!c) return HS_OK;
  for (uint32_t i = 0; i < c->nshards; i++) {
    const oc_shard *s = &c->shards[i];
    if (s->nout)
      return broken_rule("hs_object_cache_destroy: %u erased entries are still referenced "
                         "(nothing freed)",
                         s->nout);
    for (uint32_t j = 0; j < s->nslots; j++)
      if (s->slots[j] && refs_of(atomic_load(&s->slots[j]->state)))
        return broken_rule("hs_object_cache_destroy: an entry of %zu bytes is still referenced "
                           "(nothing freed)",
                           s->slots[j]->charge);
  }
  cache_free(c, c->nshards);
  return HS_OK;
}

/* ---- insert -------------------------------------------------------------- */

/* An entry an insert prepared and does not keep: its key's copy and its
 * block go back (its value is the caller's, or already freed). */
static void entry_discard(hs_object_cache *c, hs_object *e) {
  if (e->key_len > OC_INLINE_KEY) free(e->key.out);
  blocks_put(c, e, e);
}

/* Rule 7's refusal under the strict limit, said. */
static hs_status strict_refusal(const oc_shard *s, size_t charge) {
  return hs_fail(HS_ERR_NO_BUFFERS, 0,
                 "object cache: no room for %zu bytes under the strict limit (%llu of %llu bytes "
                 "in use, referenced)",
                 charge, (unsigned long long)LOAD(s->usage), (unsigned long long)LOAD(s->capacity));
}

/* Rule 13, under s's lock, which it releases. The cached entry is hit as
 * a lookup hits (a scan's hit keeps a scan's entry "used once"; HIGH
 * counts two hits, as on arrival). Room is made for a held outsider's
 * charge as for any insert's; under the strict limit, when there is
 * none, refused (rule 7), the value still the caller's. */
static hs_status insert_kept(hs_object_cache *c, oc_shard *s, hs_object *cached, hs_object *e,
                             bool ring, hs_object_priority priority, hs_object **out) {
  INC(s->kept);
  if (!ring) set_scan(cached, false);
  if (cached->flags & OE_POLICY) {
    if (ring && (cached->flags & OE_SCAN)) {
      hs_access a = make_access(c, cached->hash, policy_size(cached->charge), true);
      hs_policy_hit(s->policy, cached->slot, &a);
    } else {
      policy_hits(c, s, cached, priority == HS_OBJECT_HIGH ? 2 : 1);
    }
  }
  hs_object *doomed = NULL;
  /* `cached` may be a victim here: it is not used after this. */
  bool room = out && make_room(c, s, e->charge, 0, e->hash, &doomed);
  bool refused = out && !room && over(s->usage, e->charge, s->capacity) &&
                 atomic_load_explicit(&c->strict, memory_order_relaxed);
  if (out && !refused) {
    atomic_store_explicit(&e->state, OS_LIVE | 1u, memory_order_relaxed);
    STORE(s->usage, s->usage + e->charge);
    note_over(s);
    s->nout++;
    pinned_add(c, e->charge);
  } else if (refused) {
    INC(s->refusals);
  }
  pthread_mutex_unlock(&s->mu);
  free_doomed(c, doomed);
  if (out && !refused) {
    *out = e;
    return HS_OK;
  }
  size_t charge = e->charge;
  if (!refused && c->free_object) c->free_object(oc_key(e), e->key_len, e->value, e->tag, c->ctx);
  entry_discard(c, e);
  if (refused) return strict_refusal(s, charge);
  return HS_OK;
}

hs_status hs_object_cache_insert(hs_object_cache *c, const void *key, size_t key_len, void *value,
                                 size_t charge, void *tag, hs_object_priority priority,
                                 hs_object **out, hs_object_insert_outcome *outcome) {
  if (out) *out = NULL;
  if (outcome) *outcome = HS_OBJECT_ADDED;
  if (!c) return hs_fail(HS_ERR_MISUSE, 0, "hs_object_cache_insert: the cache is NULL");
  if (!key && key_len)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_object_cache_insert: key is NULL, key_len %zu", key_len);
  if ((unsigned)priority > HS_OBJECT_LOW)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_object_cache_insert: priority %u is not one",
                   (unsigned)priority);
  if (key_len > UINT32_MAX)
    return hs_fail(HS_ERR_INVALID, 0, "hs_object_cache_insert: a key of %zu bytes (at most 4 GiB)",
                   key_len);
  uint64_t hash = key_hash(key, key_len);
  bool scan = c->detect && oc_scan_insert(c, oc_scan_thread(c), key, key_len, hash);
  /* A LOW entry is a scan's from the start (rule 11): "used once", the
   * first victim, ordinary again at its first lookup outside a scan. */
  bool ring = scan || priority == HS_OBJECT_LOW;
  hs_object *e = block_take(c);
  if (!e) return hs_fail(HS_ERR_NOMEM, ENOMEM, "object cache: no memory for an entry");
  e->hash = hash;
  e->value = value;
  e->tag = tag;
  e->charge = charge;
  e->next = NULL;
  e->key_len = (uint32_t)key_len;
  e->flags = ring ? OE_SCAN : 0;
  if (key_len > OC_INLINE_KEY) {
    if (!(e->key.out = malloc(key_len))) {
      blocks_put(c, e, e);
      return hs_fail(HS_ERR_NOMEM, ENOMEM, "object cache: no memory for a key of %zu bytes",
                     key_len);
    }
    memcpy(e->key.out, key, key_len);
  } else if (key_len) {
    memcpy(e->key.in, key, key_len);
  }

  oc_shard *s = shard_of(c, hash);
  hs_object *doomed = NULL;
  prefetch_window(s, hash);
  pthread_mutex_lock(&s->mu);
  INC(s->inserts);
  if (c->keep_cached) {
    hs_object *cached = table_find(s, hash, key, key_len);
    if (cached) {
      hs_status st = insert_kept(c, s, cached, e, ring, priority, out);
      if (st == HS_OK && outcome) *outcome = HS_OBJECT_KEPT;
      return st;
    }
  }
  bool room = fits_policy(s, charge) && make_room(c, s, charge, policy_size(charge), hash, &doomed);
  bool strict = atomic_load_explicit(&c->strict, memory_order_relaxed);
  /* Rule 7: no room. Strict: refused. Not strict, without a handle, and
   * more than the whole shard could ever hold: nothing to keep it for. */
  bool refused =
      !room && over(s->usage, charge, s->capacity) && (strict || (!out && charge > s->capacity));
  /* Rule 12: a free block of the key's home window, else the overflow. */
  hs_object *home = refused ? NULL : home_free(s, hash);
  bool nomem = !refused && ((!home && !table_reserve(s)) || !slot_take(c, s, e, &doomed));
  if (refused || nomem) {
    if (refused) INC(*(strict ? &s->refusals : &s->evictions));
    pthread_mutex_unlock(&s->mu);
    free_doomed(c, doomed);
    entry_discard(c, e);
    if (nomem)
      return hs_fail(HS_ERR_NOMEM, ENOMEM, "object cache: no memory for the key table or slots");
    if (out) return strict_refusal(s, charge);
    /* as if inserted and evicted at once */
    if (c->free_object) c->free_object(key, key_len, value, tag, c->ctx);
    return HS_OK;
  }
  hs_object *old = table_find(s, hash, key, key_len);
  if (old) {
    detach(s, old, false);
    leave(s, old, &doomed);
    INC(s->erasures);
    if (outcome) *outcome = HS_OBJECT_REPLACED;
  }
  hs_object *spare = NULL; /* the chunk block it was prepared in */
  if (home) {
    spare = e;
    e = block_move(s, home, e);
  }
  /* Published OS_SLOW (and OS_SCAN): no lookup takes it without the lock
   * until it is in the policy (rule 11). The release orders the fields
   * above before any lock-free lookup's reference. HIGH: as if looked up
   * twice on arrival (what S3-FIFO asks before it keeps an entry past its
   * probation queue), the way lookups hit: owed, where they hit without
   * the lock, else at once (below). */
  bool high = priority == HS_OBJECT_HIGH;
  atomic_store_explicit(&e->state,
                        OS_IN_TABLE | OS_LIVE | OS_SLOW | (ring ? OS_SCAN : 0) | (out ? 1u : 0u) |
                            (high && c->lockfree ? 2 * OS_HIT1 : 0),
                        memory_order_release);
  table_put(s, e);
  STORE(s->usage, s->usage + charge);
  note_over(s);
  if (out) pinned_add(c, charge);
  if (scan) STORE(s->scan_bytes, s->scan_bytes + charge);
  if (room && policy_enter(c, s, e, ring)) {
    if (ring) ring_push(s, e);
    if (high && !c->lockfree) policy_hits(c, s, e, 2);
  } else {
    HS_INVARIANT(!room, "object cache: the policy refused an entry it had room for");
    make_outsider(s, e);
  }
  pthread_mutex_unlock(&s->mu);
  free_doomed(c, doomed);
  if (spare) blocks_put(c, spare, spare);
  if (out) *out = e;
  return HS_OK;
}

/* ---- lookup, ref, release ------------------------------------------------ */

bool hs_object_release(hs_object_cache *c, hs_object *h, bool erase_if_last);

/* Rule 11: a reference to `e` with no lock, found by a hash match,
 * and a hit owed to the policy, in one compare-and-swap that requires it
 * to be in the table and neither OS_SLOW nor OS_SCAN; then, holding it,
 * the entry's own hash and key are checked (the block may hold another
 * key by now). 1: referenced, the key's; 0: the block holds no entry of
 * the table (one that left, still referenced or not yet freed: a window
 * looks on); -1: the lock is needed. */
static inline __attribute__((always_inline)) int
take_hit(hs_object_cache *c, hs_object *e, uint64_t hash, const void *key, size_t len) {
  if (HS_DEBUG_CHECKS && seams.object_probe) seams.object_probe();
  uint32_t old = atomic_load_explicit(&e->state, memory_order_relaxed), new;
  do {
    if (!(old & OS_IN_TABLE)) return 0;
    if ((old & (OS_SLOW | OS_SCAN)) || refs_of(old) == OS_REFS) return -1;
    new = old + 1 + ((old & OS_HITS) != OS_HITS ? OS_HIT1 : 0);
  } while (!atomic_compare_exchange_weak_explicit(&e->state, &old, new, memory_order_acquire,
                                                  memory_order_relaxed));
  if (refs_of(old) == 0) pinned_add(c, e->charge);
  if (!key_is(e, hash, key, len)) { /* the block was reused: not ours */
    hs_object_release(c, e, false);
    return -1;
  }
  count_hit(c);
  return 1;
}

/* Rule 11 on rule 12's layout: the key's home window first (its first
 * block is the one cache miss of a hit), each block whose hash matches
 * tried; then the overflow, unless it is empty. NULL: not found this way;
 * *absent then says whether that is a miss (the window holds no entry of
 * the key and counts none of its keys in the overflow), else (a race, an
 * entry that needs the lock, the overflow) the caller takes the lock. */
static hs_object *lookup_lockfree(hs_object_cache *c, oc_shard *s, uint64_t hash, const void *key,
                                  size_t len, bool *absent) {
  size_t at = oc_cache_window(c, hash);
  hs_object *w = c->home + at;
  const uint8_t *tags = c->tags + at;
  HS_INVARIANT(w == oc_window(s, hash), "object cache: two home windows for one hash");
  __builtin_prefetch(w); /* the likeliest block, fetched while the tags are read */
  uint8_t tag = oc_tag(hash);
  *absent = false;
  for (uint32_t j = 0; j < OC_WINDOW; j++) {
    if (TAG(tags + j) != tag || HHASH(w + j) != hash) continue;
    int got = take_hit(c, w + j, hash, key, len);
    if (got) return got > 0 ? w + j : NULL;
  }
  if (!SPILLS(tags)) { /* none of the window's keys in the overflow */
    *absent = true;
    return NULL;
  }
  const oc_table *t = atomic_load_explicit(&s->table, memory_order_acquire);
  for (uint32_t i = (uint32_t)hash & t->mask, n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
    const oc_bucket *b = &t->b[i];
    hs_object *e = atomic_load_explicit(&b->e, memory_order_acquire);
    if (!e) return NULL;
    if (BHASH(b) != hash) continue;
    return take_hit(c, e, hash, key, len) > 0 ? e : NULL;
  }
  return NULL;
}

hs_object *hs_object_cache_lookup(hs_object_cache *c, const void *key, size_t key_len) {
  if (!c || (!key && key_len)) {
    (void)hs_fail(HS_ERR_MISUSE, 0, "hs_object_cache_lookup: %s is NULL", c ? "key" : "the cache");
    return NULL;
  }
  uint64_t hash = key_hash(key, key_len);
  struct oc_thread *t = c->detect ? oc_scan_thread(c) : NULL;
  oc_shard *s = shard_of(c, hash);
  /* Inside a scan a hit is the scan's (rule 10): that takes the lock. */
  if (c->lockfree && !(t && oc_scan_hitting(t))) {
    bool absent;
    hs_object *e = lookup_lockfree(c, s, hash, key, key_len, &absent);
    if (e) return e;
    /* A miss of the window needs no lock, unless the detector must ask
     * the ghost table, which may hold the key only while some ghost is
     * recent (rule 11). */
    if (absent && !(t && atomic_load_explicit(&c->ghosts_written, memory_order_relaxed) &&
                    ghosts_may_be_recent(s))) {
      count_miss(c);
      if (t) (void)oc_scan_miss(c, t, key, key_len, hash, false);
      return NULL;
    }
  }
  /* The window's lines, and the bucket's, are fetched while the lock is
   * taken. The table may be replaced meanwhile: a prefetch into a kept
   * old one is harmless. */
  prefetch_matches(s, hash);
  if (SPILLS(s->tags + oc_window_at(s, hash))) {
    const oc_table *tb = atomic_load_explicit(&s->table, memory_order_acquire); /* no lock yet */
    __builtin_prefetch(&tb->b[(uint32_t)hash & tb->mask]);
  }
  pthread_mutex_lock(&s->mu);
  INC(s->lookups);
  hs_object *e = table_find(s, hash, key, key_len);
  if (e) {
    if (refs_of(atomic_fetch_add_explicit(&e->state, 1, memory_order_acquire)) == 0)
      pinned_add(c, e->charge);
    INC(s->hits);
    if (e->flags & OE_LOOSE) { /* referenced now: not loose (rule 1) */
      e->flags &= (uint8_t)~OE_LOOSE;
      s->nloose--;
    }
    /* A scan's hit keeps a scan's entry at "used once"; an ordinary entry
     * it hits is hit as any (a range read again that fits is cached), and
     * an access outside a scan makes a scan's entry ordinary (rule 10). */
    bool scanning = t && oc_scan_hit(t);
    bool ring = scanning && (e->flags & OE_SCAN);
    if (!scanning) set_scan(e, false);
    if (e->flags & OE_POLICY) {
      hs_access a = make_access(c, hash, policy_size(e->charge), ring);
      hs_policy_hit(s->policy, e->slot, &a);
    }
    pthread_mutex_unlock(&s->mu);
    if (scanning) atomic_fetch_add_explicit(&c->scan_accesses, 1, memory_order_relaxed);
    return e;
  }
  INC(s->misses);
  bool ghost = t && ghost_recent(s, hash);
  pthread_mutex_unlock(&s->mu);
  if (t) (void)oc_scan_miss(c, t, key, key_len, hash, ghost);
  return NULL;
}

hs_status hs_object_ref(hs_object_cache *c, hs_object *h) {
  if (!c || !h)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_object_ref: %s is NULL", c ? "the handle" : "the cache");
  uint32_t old = atomic_load_explicit(&h->state, memory_order_relaxed);
  if (refs_of(old) == 0)
    return broken_rule("hs_object_ref: the entry (%zu bytes) is not referenced", h->charge);
  atomic_fetch_add_explicit(&h->state, 1, memory_order_relaxed);
  return HS_OK;
}

/* Every release rule 5's fast path does not take (rules 5 and 8). An
 * entry in the table without OS_SLOW may gain references from lock-free
 * lookups meanwhile (rule 11), so the last reference and the way out of
 * the table go in one compare-and-swap. */
__attribute__((noinline)) static bool release_locked(hs_object_cache *c, hs_object *e,
                                                     bool erase_if_last) {
  oc_shard *s = shard_of(c, e->hash);
  hs_object *doomed = NULL;
  bool freed = false, out_now;
  pthread_mutex_lock(&s->mu);
  uint32_t old = atomic_load_explicit(&e->state, memory_order_relaxed), new;
  do {
    HS_INVARIANT(refs_of(old) > 0, "object cache: a release found no reference");
    out_now = refs_of(old) == 1 && (old & OS_IN_TABLE) &&
              (erase_if_last || over(s->usage, 0, s->capacity));
    new = out_now ? (old - 1) & ~(OS_IN_TABLE | OS_HITS) : old - 1;
  } while (!atomic_compare_exchange_weak_explicit(&e->state, &old, new, memory_order_acq_rel,
                                                  memory_order_relaxed));
  if (refs_of(old) == 1) {
    pinned_sub(c, e->charge);
    if (!(old & OS_IN_TABLE)) {
      s->nout--;
      doom(s, e, &doomed);
      freed = true;
    } else if (out_now) {
      detach(s, e, !erase_if_last);
      doom(s, e, &doomed);
      INC(*(erase_if_last ? &s->erasures : &s->evictions));
      freed = true;
    } else if (e->flags & OE_OUT) { /* OS_SLOW: no reference comes without the lock */
      bool in = fits_policy(s, e->charge) &&
                make_room(c, s, 0, policy_size(e->charge), e->hash, &doomed) &&
                policy_enter(c, s, e, e->flags & OE_SCAN);
      if (!in) {
        e->flags |= OE_LOOSE;
        s->nloose++;
      }
    }
  }
  pthread_mutex_unlock(&s->mu);
  free_doomed(c, doomed);
  return freed;
}

bool hs_object_release(hs_object_cache *c, hs_object *h, bool erase_if_last) {
  if (!c || !h) {
    (void)hs_fail(HS_ERR_MISUSE, 0, "hs_object_release: %s is NULL",
                  c ? "the handle" : "the cache");
    return false;
  }
  const oc_shard *s = shard_of(c, h->hash);
  size_t charge = h->charge; /* read before the entry may be freed by another thread */
  uint32_t old = atomic_load_explicit(&h->state, memory_order_relaxed);
  for (;;) {
    uint32_t refs = refs_of(old);
    if (refs == 0) {
      (void)broken_rule("hs_object_release: the entry (%zu bytes) is not referenced", charge);
      return false;
    }
    if (refs == 1 && ((old & (OS_IN_TABLE | OS_SLOW)) != OS_IN_TABLE || erase_if_last ||
                      (atomic_load_explicit(&c->shards_over, memory_order_relaxed) &&
                       over(LOAD(s->usage), 0, LOAD(s->capacity)))))
      return release_locked(c, h, erase_if_last);
    if (atomic_compare_exchange_weak_explicit(&h->state, &old, old - 1, memory_order_release,
                                              memory_order_relaxed))
      break;
  }
  if (refs_of(old) == 1) pinned_sub(c, charge);
  return false;
}

void *hs_object_value(const hs_object *h) {
  return h ? h->value : NULL;
}
size_t hs_object_charge(const hs_object *h) {
  return h ? h->charge : 0;
}
void *hs_object_tag(const hs_object *h) {
  return h ? h->tag : NULL;
}
const void *hs_object_key(const hs_object *h, size_t *key_len) {
  if (key_len) *key_len = h ? h->key_len : 0;
  return h ? oc_key(h) : NULL;
}

/* ---- erase, capacity ------------------------------------------------------ */

void hs_object_cache_erase(hs_object_cache *c, const void *key, size_t key_len) {
  if (!c || (!key && key_len)) {
    (void)hs_fail(HS_ERR_MISUSE, 0, "hs_object_cache_erase: %s is NULL", c ? "key" : "the cache");
    return;
  }
  uint64_t hash = key_hash(key, key_len);
  oc_shard *s = shard_of(c, hash);
  hs_object *doomed = NULL;
  pthread_mutex_lock(&s->mu);
  hs_object *e = table_find(s, hash, key, key_len);
  if (e) {
    detach(s, e, false);
    leave(s, e, &doomed);
    INC(s->erasures);
  }
  pthread_mutex_unlock(&s->mu);
  free_doomed(c, doomed);
}

void hs_object_cache_erase_unreferenced(hs_object_cache *c) {
  if (!c) return;
  for (uint32_t i = 0; i < c->nshards; i++) {
    oc_shard *s = &c->shards[i];
    hs_object *doomed = NULL;
    pthread_mutex_lock(&s->mu);
    for (uint32_t j = 0; j < s->nslots; j++) {
      hs_object *e = s->slots[j];
      if (!e || !claim(e, true)) continue; /* referenced (rule 11: atomically) */
      detach(s, e, false);
      doom(s, e, &doomed);
      INC(s->erasures);
    }
    pthread_mutex_unlock(&s->mu);
    free_doomed(c, doomed);
  }
}

void hs_object_cache_set_capacity(hs_object_cache *c, uint64_t capacity) {
  if (!c) return;
  pthread_mutex_lock(&c->resize_mu);
  atomic_store(&c->capacity, capacity);
  uint64_t share = shard_share(capacity, c->nshards);
  for (uint32_t i = 0; i < c->nshards; i++) {
    oc_shard *s = &c->shards[i];
    hs_object *doomed = NULL;
    pthread_mutex_lock(&s->mu);
    STORE(s->capacity, share);
    note_over(s);
    s->ring_size = ring_size_for(c, share);
    s->ring_len = 0;
    /* Victims first, by the old policy; then a policy of the new size.
     * Without memory for it the old one stays, at its old size. */
    (void)make_room(c, s, 0, 0, 0, &doomed);
    if (hs_policy_capacity(s->policy) != (share ? share : 1))
      (void)policy_rebuild(c, s, share, s->nslots, &doomed);
    pthread_mutex_unlock(&s->mu);
    free_doomed(c, doomed);
  }
  pthread_mutex_unlock(&c->resize_mu);
}

void hs_object_cache_set_strict(hs_object_cache *c, bool strict) {
  if (c) atomic_store(&c->strict, strict);
}
bool hs_object_cache_strict(const hs_object_cache *c) {
  return c && atomic_load(&((hs_object_cache *)c)->strict);
}
uint64_t hs_object_cache_capacity(const hs_object_cache *c) {
  return c ? atomic_load(&((hs_object_cache *)c)->capacity) : 0;
}

uint64_t hs_object_cache_usage(const hs_object_cache *c) {
  uint64_t sum = 0;
  for (uint32_t i = 0; c && i < c->nshards; i++) sum += LOAD(c->shards[i].usage);
  return sum;
}
uint64_t hs_object_cache_pinned_usage(const hs_object_cache *c) {
  uint64_t sum = 0;
  for (uint32_t i = 0; c && i < OC_STRIPES; i++)
    sum += atomic_load_explicit(&c->stripes[i].pinned, memory_order_relaxed);
  return sum;
}
uint64_t hs_object_cache_count(const hs_object_cache *c) {
  uint64_t sum = 0;
  for (uint32_t i = 0; c && i < c->nshards; i++) sum += LOAD(c->shards[i].count);
  return sum;
}
uint64_t hs_object_cache_new_id(hs_object_cache *c) {
  return c ? atomic_fetch_add(&c->next_id, 1) : 0;
}

void hs_object_cache_for_each(hs_object_cache *c,
                              void (*fn)(const void *key, size_t key_len, void *value,
                                         size_t charge, void *tag, void *arg),
                              void *arg, size_t per_lock) {
  if (!c || !fn) return;
  if (!per_lock) per_lock = 256;
  for (uint32_t i = 0; i < c->nshards; i++) {
    oc_shard *s = &c->shards[i];
    for (uint32_t next = 0, done = 0; !done;) {
      pthread_mutex_lock(&s->mu);
      size_t seen = 0;
      while (next < s->nslots && seen < per_lock) {
        const hs_object *e = s->slots[next++];
        if (!e) continue;
        fn(oc_key(e), e->key_len, e->value, e->charge, e->tag, arg);
        seen++;
      }
      done = next >= s->nslots;
      pthread_mutex_unlock(&s->mu);
    }
  }
}

hs_status hs_object_cache_stats_get(const hs_object_cache *c, hs_object_cache_stats *out) {
  if (!c || !out)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_object_cache_stats_get: %s is NULL",
                   c ? "out" : "the cache");
  memset(out, 0, sizeof *out);
  for (uint32_t i = 0; i < c->nshards; i++) {
    const oc_shard *s = &c->shards[i];
    out->lookups += LOAD(s->lookups);
    out->hits += LOAD(s->hits);
    out->misses += LOAD(s->misses);
    out->inserts += LOAD(s->inserts);
    out->refusals += LOAD(s->refusals);
    out->evictions += LOAD(s->evictions);
    out->erasures += LOAD(s->erasures);
    out->kept += LOAD(s->kept);
  }
  for (uint32_t i = 0; i < OC_STRIPES; i++) { /* lock-free hits and misses (rule 11) */
    uint64_t h = atomic_load_explicit(&c->stripes[i].hits, memory_order_relaxed);
    uint64_t m = atomic_load_explicit(&c->stripes[i].misses, memory_order_relaxed);
    out->lookups += h + m;
    out->hits += h;
    out->misses += m;
  }
  out->scan_accesses = atomic_load(&((hs_object_cache *)c)->scan_accesses);
  out->scans = atomic_load(&((hs_object_cache *)c)->scans);
  out->usage = hs_object_cache_usage(c);
  out->pinned_usage = hs_object_cache_pinned_usage(c);
  out->capacity = hs_object_cache_capacity(c);
  out->count = hs_object_cache_count(c);
  out->shards = c->nshards;
  return HS_OK;
}

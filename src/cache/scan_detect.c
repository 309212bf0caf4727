/*
 * cache/scan_detect.c — the frame cache's scan detector (fc_scan_note):
 * which fetches belong to a scan, so that their pages reach the policy as
 * a ring's and recycle their own frames instead of the hot set's.
 * frame_cache.c's essay, "Scans", and docs/frame-cache.md give the rules.
 */
#include "cache/frame_cache_internal.h"

/* ---- the scan detector --------------------------------------------------- */

/* What the history says of a scan beginning at `start`: 1 it was longer
 * than three quarters of the cache, 0 shorter (it fits), -1 not known. */
static int hist_long(const hs_frame_cache *c, uint64_t start) {
  const fc_scan *s = &c->scan;
  if (!(s->hist_bits & hist_bit(start))) return -1;
  /* Starts in the history are distinct: the entry the bit names, if it
   * is this start's, is the only one; if not, there is no other unless
   * the bit is shared. */
  uint32_t w = s->hist_where[hist_slot(start)];
  if (s->hist[w].len && s->hist[w].start == start)
    return (uint64_t)s->hist[w].len * 4 > (uint64_t)c->capacity * 3;
  if (!(s->hist_shared & hist_bit(start))) return -1;
  for (uint32_t i = 0; i < SCAN_HIST; i++)
    if (s->hist[i].len && s->hist[i].start == start)
      return (uint64_t)s->hist[i].len * 4 > (uint64_t)c->capacity * 3;
  return -1;
}

/* hist_bits, hist_shared and hist_where from the entries. */
static void hist_index(fc_scan *s) {
  s->hist_bits = s->hist_shared = 0;
  for (uint32_t i = 0; i < SCAN_HIST; i++)
    if (s->hist[i].len) {
      s->hist_shared |= s->hist_bits & hist_bit(s->hist[i].start);
      s->hist_bits |= hist_bit(s->hist[i].start);
      s->hist_where[hist_slot(s->hist[i].start)] = (uint8_t)i;
    }
}

/* A scan (a run, or a run of new pages, longer than scan_run) has ended.
 * Only runs longer than scan_run are remembered, or a start marked as one
 * whose scan fits (a length of 1, which no remembered run has): a run of
 * one new page that ends is no news, and recording it as "fits" would
 * push real scans out of the eight places. */
static void hist_put(hs_frame_cache *c, uint64_t start, uint32_t len, bool fits) {
  fc_scan *s = &c->scan;
  if (fits)
    len = 1; /* the mark hist_long reads as "fits" */
  else if (len <= c->scan_run)
    return;
  uint32_t at = s->hist_next;
  bool known = false;
  if (s->hist_bits & hist_bit(start))
    for (uint32_t i = 0; i < SCAN_HIST; i++)
      if (s->hist[i].len && s->hist[i].start == start) at = i, known = true;
  /* A scan marked as fitting stays so when it ends short again (its run
   * is remembered when it ends, after the mark); only one too long for
   * the cache unmarks it. */
  if (known && s->hist[at].len == 1 && !fits && (uint64_t)len * 4 <= (uint64_t)c->capacity * 3)
    return;
  /* The start that goes, if any: its bit goes with it, unless shared
   * (then the bits are worked out again from every entry). */
  uint64_t gone = !known && s->hist[at].len ? hist_bit(s->hist[at].start) : 0;
  if (!known) s->hist_next = (s->hist_next + 1) % SCAN_HIST;
  s->hist[at].start = start;
  s->hist[at].len = len;
  if (known) return;
  if (gone & s->hist_shared) {
    hist_index(s);
    return;
  }
  s->hist_bits &= ~gone;
  s->hist_shared |= s->hist_bits & hist_bit(start);
  s->hist_bits |= hist_bit(start);
  s->hist_where[hist_slot(start)] = (uint8_t)at;
}

void fc_scan_run_ended(hs_frame_cache *c) {
  hist_put(c, c->scan.run_start, c->scan.run, false);
}

__attribute__((noinline)) static void run_restart(hs_frame_cache *c, uint64_t start, uint32_t run,
                                                  uint64_t pos) {
  fc_scan *s = &c->scan;
  fc_scan_run_ended(c);
  s->run = run;
  s->run_start = start;
  s->pos = pos;
  s->outl = s->outl_total = 0;
  s->dir = run > 1 ? (pos > start ? 1 : -1) : 0;
  s->run_long = s->run_small = s->run_known = false;
}

/* The run of new pages has ended: remembered by its first pages, if it
 * was long enough to be remembered at all. */
void fc_scan_novel_end(hs_frame_cache *c) {
  fc_scan *s = &c->scan;
  if (s->novel > c->scan_run) /* hist_put keeps only runs longer */
    for (uint32_t i = 0; i < SCAN_HEADS && i < s->novel; i++)
      hist_put(c, s->heads[i], s->novel, false);
  s->novel = s->misses = 0;
}

/* The engine's boundary key: a statement begins. Whatever run the
 * detector was following ends here (remembered if it was long), and the
 * next page begins the next. */
__attribute__((noinline)) static void scan_boundary(hs_frame_cache *c, uint64_t key) {
  fc_scan *s = &c->scan;
  hist_put(c, s->run_start, s->run, false);
  s->run = s->outl = s->outl_total = 0;
  s->dir = 0;
  s->pos = s->alt = key;
  s->run_long = s->run_small = s->run_known = false;
  fc_scan_novel_end(c);
  s->hits = s->ghost_hits = 0;
  s->miss_long = s->miss_small = s->heads_known = false;
  s->tick++;
  s->any = true;
  s->prev = s->last;
  s->last = key;
  s->last_scan = false;
}

/* A start known from a long scan needs a few pages of progress too:
 * lookups restart runs and runs of misses all the time, some of them at
 * a page where a scan once began (page 1, a root). So the history is
 * asked about the run once it has SCAN_CONFIRM pages (or the run of new
 * pages SCAN_CONFIRM_NEW). */
void fc_scan_ask_run(hs_frame_cache *c) {
  fc_scan *s = &c->scan;
  int h = hist_long(c, s->run_start);
  s->run_long = h == 1;
  s->run_small = h == 0;
  s->run_known = true;
}

/* Any of the first three new pages may be where a known scan began:
 * without a boundary key the run may begin at the last lookup's leaf,
 * before the scan's root. */
void fc_scan_ask_heads(hs_frame_cache *c) {
  fc_scan *s = &c->scan;
  for (uint32_t i = 0; i < SCAN_HEADS; i++) {
    int h = hist_long(c, s->heads[i]);
    s->miss_long |= h == 1;
    s->miss_small |= h == 0;
  }
  s->heads_known = true;
}

/* True when this fetch is inside a scan. */
bool fc_scan_note(hs_frame_cache *c, uint64_t key, fc_frame *f) {
  fc_scan *s = &c->scan;
  bool hit = f != NULL;
  if (c->scan_run == 0) return false;
  if (c->has_boundary_key && key == c->boundary_key) {
    if (!(s->any && key == s->last)) scan_boundary(c, key);
    return false;
  }
  /* Rule 1: idle (the last run of new pages ended with pages fetched
   * lately coming back, and no new page since), a hit on a page fetched
   * lately is nothing at all: a lookup going over the pages it uses; the
   * detector's tick stands still. A hit on a page not fetched lately is
   * the first page of a new run of new pages and nothing else
   * (fc_scan_wake: a lookup's next leaf, most often, or a scan's head
   * still cached); a miss or the boundary key is taken as any. */
  if (hit && s->hits == SCAN_IDLE) {
    if (!fc_scan_idle_hit(s, f)) fc_scan_wake(s, key);
    return false;
  }
  if (s->any && key == s->last) return s->last_scan;
  if (s->any && key == s->prev) {
    /* Rule 2: back to the page before: a scan reading a row's overflow pages
     * twice, a page and its overflow page in turn. Neither extends nor
     * breaks anything. */
    s->prev = s->last;
    s->last = key;
    return s->last_scan;
  }
  /* Rule 3: a reuse, a hit on a page fetched a few pages ago while a run
   * of new pages is open: something is coming back to pages it uses (a
   * lookup to page 1 and the root), which a scan does not do. It counts
   * towards the end of the run of new pages (fc_scan_reuse: the second
   * since the last miss ends it) and nothing else: the run of keys does
   * not see it (a B-tree's descent through interior pages fetched lately
   * neither extends nor breaks the run of the leaves), and it is no
   * scan's page. A hit on another page (one still cached from before)
   * tells nothing of that kind, and goes on below as a new page. */
  /* Fetched within the last SCAN_RECENT distinct fetches: the frame
   * remembers its tick, so this is one subtraction, not a search. */
  if (hit && s->novel && f->seen && s->tick + 1 - f->seen <= SCAN_RECENT + 1) {
    fc_scan_reuse(c, key);
    return false;
  }
  s->tick++;
  s->any = true;
  s->prev = s->last;
  s->last = key;
  bool along = true;
  uint64_t up = key > s->pos ? key - s->pos : 0, down = key < s->pos ? s->pos - key : 0;
  if ((up && up <= SCAN_FWD && s->dir >= 0) || (down && down <= SCAN_FWD && s->dir <= 0)) {
    /* SQLite scans a table forwards, or backwards (ORDER BY ... DESC, a
     * table whose pages went out in reverse order). */
    s->run++;
    s->pos = key;
    s->outl = 0;
    s->dir = up ? 1 : -1;
  } else if (!(up && up <= SCAN_BACK) && !(down && down <= SCAN_BACK)) {
    along = false;
    s->outl++;
    s->outl_total++;
    uint64_t from_alt = key > s->alt ? key - s->alt : s->alt - key;
    if (s->outl > 1 && from_alt && from_alt <= SCAN_FWD) {
      run_restart(c, s->alt, 2, key); /* a new run began at the last outlier */
      along = true;
    } else if (s->outl > SCAN_OUTLIERS || 2 * s->outl_total > s->run + 8) {
      run_restart(c, key, 1, key);
    }
    s->alt = key;
  }
  /* A run of new pages: fetches of pages not fetched lately, hits or
   * misses, until something comes back to the pages it uses. It begins at
   * the first new page, so a scan that starts with pages still cached from
   * its last time (the head of a table read again and again, which such
   * hits would otherwise keep and lengthen round after round) begins its
   * run where it began before, and the history knows it from its first
   * page. */
  fc_scan_count_new(s, key, hit);
  /* Too short yet to be anything (most runs: a lookup's few pages). */
  if (s->run < SCAN_CONFIRM && s->novel < SCAN_CONFIRM_NEW && s->run <= c->scan_run &&
      s->misses <= c->scan_run) {
    s->last_scan = false;
    return false;
  }
  /* The history, asked once per run (fc_scan_ask_run says when). */
  if (!s->run_known && (s->run >= SCAN_CONFIRM || s->novel >= SCAN_CONFIRM_NEW)) fc_scan_ask_run(c);
  if (!s->heads_known && s->novel >= SCAN_CONFIRM_NEW) fc_scan_ask_heads(c);
  bool seq = (s->run_long && s->run >= SCAN_CONFIRM) || (s->run > c->scan_run && !s->run_small);
  /* A run of new pages is a scan past scan_run misses, or, begun where a
   * long scan began, past SCAN_CONFIRM_NEW pages, hits or not (more than a
   * point lookup starting at that root fetches). A run of keys known to
   * fit vetoes it — a small table read again and again is all new pages
   * too — unless the run of new pages is itself known to be long: then the
   * run of keys is only a piece of it (an ordered table's scan breaks into
   * runs where pages went out of order, the same pieces every time). */
  bool miss = (!s->run_small || s->miss_long) && !s->miss_small &&
              ((s->miss_long && s->novel >= SCAN_CONFIRM_NEW) || s->misses > c->scan_run);
  /* Misses in a row on pages the ring recycled not long ago (a scan
   * reading a page again now and then, an interior page's overflow, does
   * not make a row of them). */
  if ((seq || miss) && !hit) s->ghost_hits = ghost_recent(c, key) ? s->ghost_hits + 1 : 0;
  if (s->ghost_hits >= SCAN_AGAIN) {
    /* The scan came back to pages its ring recycled not long ago: it
     * fits in the cache, and is read again. Not a scan: from now on (and
     * the next time it starts here) its pages are cached as any. */
    hist_put(c, s->run_start, 0, true);
    for (uint32_t i = 0; i < SCAN_HEADS && i < s->novel; i++) hist_put(c, s->heads[i], 0, true);
    s->run_small = s->miss_small = true;
    s->run_long = s->miss_long = false;
    s->run_known = s->heads_known = true;
    s->ghost_hits = 0;
    seq = miss = false;
  }
  /* In a run of new pages taken for a scan, a miss is the scan's, and so
   * is a hit on a page not fetched lately (a page of the table still
   * cached: it must not climb the policy for being read by the scan). */
  s->last_scan = (seq && along) || (miss && (s->misses >= 2 || s->miss_long));
  return s->last_scan;
}

bool fc_scan_same(const fc_scan *a, const fc_scan *b) {
  bool same = a->last == b->last && a->prev == b->prev && a->pos == b->pos && a->alt == b->alt &&
              a->tick == b->tick && a->run == b->run && a->outl_total == b->outl_total &&
              a->novel == b->novel && a->misses == b->misses && a->hits == b->hits &&
              a->outl == b->outl && a->ghost_hits == b->ghost_hits && a->dir == b->dir &&
              a->run_long == b->run_long && a->run_small == b->run_small &&
              a->miss_long == b->miss_long && a->miss_small == b->miss_small &&
              a->run_known == b->run_known && a->heads_known == b->heads_known &&
              a->last_scan == b->last_scan && a->any == b->any && a->run_start == b->run_start &&
              a->hist_next == b->hist_next && a->hist_bits == b->hist_bits &&
              a->hist_shared == b->hist_shared;
  /* Only the heads the run of new pages has written are ever read. */
  for (uint32_t i = 0; i < SCAN_HEADS && i < a->novel; i++) same &= a->heads[i] == b->heads[i];
  for (uint32_t i = 0; i < SCAN_HIST; i++)
    same &= a->hist[i].start == b->hist[i].start && a->hist[i].len == b->hist[i].len;
  for (unsigned i = 0; i < 64; i++)
    if (a->hist_bits >> i & 1) same &= a->hist_where[i] == b->hist_where[i];
  return same;
}

bool fc_scan_index_ok(const fc_scan *s) {
  uint64_t bits = 0, shared = 0;
  for (uint32_t i = 0; i < SCAN_HIST; i++)
    if (s->hist[i].len) {
      shared |= bits & hist_bit(s->hist[i].start);
      bits |= hist_bit(s->hist[i].start);
    }
  if (bits != s->hist_bits || shared != s->hist_shared) return false;
  for (unsigned b = 0; b < 64; b++) {
    const uint32_t w = s->hist_where[b];
    if ((bits >> b & 1) && (w >= SCAN_HIST || !s->hist[w].len || hist_slot(s->hist[w].start) != b))
      return false;
  }
  return true;
}

bool fc_scan_checked(hs_frame_cache *c, uint64_t key, fc_frame *f) {
  fc_scan before = c->scan;
  int r = fc_scan_fast(c, key, f);
  if (r == FC_SCAN_SLOW) {
    HS_INVARIANT(fc_scan_same(&before, &c->scan),
                 "scan detector: the fast path bailed out of "
                 "key %llu having changed the state",
                 (unsigned long long)key);
    return fc_scan_note(c, key, f);
  }
  fc_scan fast = c->scan;
  c->scan = before;
  bool slow = fc_scan_note(c, key, f);
  HS_INVARIANT(fc_scan_index_ok(&c->scan), "scan detector: the history's index is stale");
  HS_INVARIANT(slow == (r == 1) && fc_scan_same(&fast, &c->scan),
               "scan detector: the fast path and fc_scan_note differ on key %llu (%d against %d)",
               (unsigned long long)key, r, (int)slow);
  return slow;
}

/*
 * adapters/sqlite/hotset_sqlite.c — hotset as SQLite's page cache: the
 * sqlite3_pcache_methods2 callbacks, each a thin call into one
 * hs_frame_cache (hotset/frame_cache.h), which holds the pages, pins them
 * and replaces them by a hotset policy. Nothing here caches anything
 * itself; this file maps SQLite's words onto the frame cache's, keeps the
 * options every new cache gets, and adds up the caches' statistics.
 * docs/sqlite.md explains the mapping method by method.
 */
#include "hotset_sqlite.h"

#include "hotset/frame_cache.h"
#include "hotset/policy.h"
#include "hotset_sqlite_internal.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* SQLite reads the page and its extra through the first two pointers of
 * what xFetch returns; the frame is handed out as that page handle, so
 * nothing is copied and no second object exists per page. */
_Static_assert(offsetof(hs_frame, data) == offsetof(sqlite3_pcache_page, pBuf),
               "hs_frame.data must sit where sqlite3_pcache_page.pBuf does");
_Static_assert(offsetof(hs_frame, extra) == offsetof(sqlite3_pcache_page, pExtra),
               "hs_frame.extra must sit where sqlite3_pcache_page.pExtra does");
_Static_assert(sizeof(hs_frame) >= sizeof(sqlite3_pcache_page),
               "an hs_frame must hold a whole sqlite3_pcache_page");

/* The default policy; docs/sqlite.md gives the measurement behind it. */
#define DEFAULT_POLICY   "lru"
#define DEFAULT_SCAN_RUN 32
/* The capacity a cache starts with until SQLite's xCachesize, which comes
 * right after xCreate: SQLite's own default, 2 MiB of pages. */
#define DEFAULT_CACHE_BYTES (2u << 20)
/* A purgeable cache is granted at most this many frames beyond what it
 * holds, and doubles as it fills up to SQLite's cache_size: the frame
 * cache allocates its slot table and the policy's metadata for the whole
 * capacity at once (tens of bytes a frame), and "PRAGMA cache_size =
 * 2000000000", SQLite's way of saying "no limit", would otherwise cost
 * gigabytes before a single page is read. */
#define GROW_FROM 1024u

/* One SQLite cache: its frame cache, its place among the live caches (for
 * the statistics), its counts at the last reset, and its capacity: the
 * one SQLite asked for (`wanted`) and the one the frame cache has now
 * (`granted`, below `wanted` while a purgeable cache grows). */
typedef struct sqlite_cache {
  hs_frame_cache *fc;
  struct sqlite_cache *prev, *next;
  hs_frame_cache_stats base;
  bool purgeable;
  pthread_mutex_t capacity_lock; /* changes of wanted and granted */
  _Atomic uint32_t wanted, granted;
  /* granted below wanted, as the two were left by the last change: the
   * one test a fetch makes (pc_fetch). */
  _Atomic bool growing;
} sqlite_cache;

/* Everything global is under `lock`: the options a new cache gets, the
 * live caches, and the counts of the caches destroyed since the last reset.
 * The order is `lock`, then a cache's own mutex (stats reads); no cache
 * call is made with `lock` held other than reading or creating stats. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char cfg_policy[256] = DEFAULT_POLICY;
static uint32_t cfg_scan_run = DEFAULT_SCAN_RUN;
static bool installed, atexit_done;
static sqlite3_pcache_methods2 saved_methods;
static sqlite_cache *live;
static hotset_sqlite_stats gone; /* destroyed caches, and caches created */
static uint64_t caches_ever;     /* never reset: did this process use us? */

static void stats_add(hotset_sqlite_stats *to, const hs_frame_cache_stats *s,
                      const hs_frame_cache_stats *base) {
  to->fetches += s->fetches - base->fetches;
  to->hits += s->hits - base->hits;
  to->misses += s->misses - base->misses;
  to->creates += s->creates - base->creates;
  to->refusals += s->refusals - base->refusals;
  to->evictions += s->evictions - base->evictions;
  to->overflows += s->overflows - base->overflows;
  to->discards += s->discards - base->discards;
  to->scan_fetches += s->scan_fetches - base->scan_fetches;
}

static int pc_init(void *arg) {
  (void)arg;
  return SQLITE_OK;
}

static void pc_shutdown(void *arg) {
  (void)arg;
}

/* The frame cache's capacity becomes `granted`; one it cannot take (no
 * memory) leaves the one it has: xCachesize is advisory. Under
 * capacity_lock. */
static void grant(sqlite_cache *c, uint32_t granted) {
  if (granted != atomic_load(&c->granted) && hs_frame_cache_set_capacity(c->fc, granted) == HS_OK)
    atomic_store(&c->granted, granted);
}

/* After a change of wanted or granted, under capacity_lock. */
static void note_growing(sqlite_cache *c) {
  atomic_store_explicit(&c->growing, atomic_load(&c->granted) < atomic_load(&c->wanted),
                        memory_order_relaxed);
}

/* SQLite's cache_size, as pcache1 takes it: down to 0 (nothing kept once
 * unpinned) and 1, where every createFlag-1 fetch is refused and SQLite
 * spills a dirty page before it asks again with createFlag 2. */
static void set_capacity(sqlite_cache *c, int pages) {
  uint32_t wanted = pages < 0 ? 0 : (uint32_t)pages;
  pthread_mutex_lock(&c->capacity_lock);
  atomic_store(&c->wanted, wanted);
  uint32_t granted = atomic_load(&c->granted);
  /* A non-purgeable cache allocates nothing for its capacity (it has no
   * policy); a purgeable one grows to `wanted` as it fills (grow). */
  if (c->purgeable && granted < GROW_FROM) granted = GROW_FROM; /* capped by wanted below */
  grant(c, c->purgeable && granted < wanted ? granted : wanted);
  note_growing(c);
  pthread_mutex_unlock(&c->capacity_lock);
}

/* After a frame was created: a purgeable cache that is full while SQLite
 * allows it more doubles, before its next fetch would have to evict (or
 * refuse) for want of a capacity SQLite never set. */
/* Out of line: the fetch that calls it stays a tail call. */
__attribute__((noinline)) static void grow(sqlite_cache *c) {
  if (atomic_load(&c->granted) >= atomic_load(&c->wanted)) return;
  pthread_mutex_lock(&c->capacity_lock);
  uint32_t granted = atomic_load(&c->granted), wanted = atomic_load(&c->wanted);
  /* + 1: the frame cache recycles once count + 1 reaches its capacity
   * (recycle_early), so a cache that needs more stops one short of it. */
  if (granted < wanted && hs_frame_cache_count(c->fc) + 1 >= granted)
    grant(c, granted > wanted / 2 ? wanted : granted * 2);
  note_growing(c);
  pthread_mutex_unlock(&c->capacity_lock);
}

/* Page memory is SQLite's (sqlite3_malloc64 / sqlite3_free), as pcache1's
 * is: sqlite3_memory_used counts it, the heap limits bound it, and SQLite's
 * out-of-memory tests reach it. */
static void *sqlite_alloc(size_t bytes, void *ctx) {
  (void)ctx;
  return sqlite3_malloc64(bytes);
}

static void sqlite_free(void *block, void *ctx) {
  (void)ctx;
  sqlite3_free(block);
}

/* pcache1's "under memory pressure" without its SQLITE_CONFIG_PAGECACHE
 * slots (a custom cache never gets them): the heap at its soft limit. */
static bool sqlite_short_of_memory(void *ctx) {
  (void)ctx;
  sqlite3_int64 soft = sqlite3_soft_heap_limit64(-1);
  return soft > 0 && sqlite3_memory_used() >= soft;
}

static sqlite3_pcache *pc_create(int page_size, int extra_size, int purgeable) {
  sqlite_cache *c = sqlite3_malloc64(sizeof *c); /* as pcache1's: OOM tests reach it */
  if (!c) return NULL;
  memset(c, 0, sizeof *c);
  hs_frame_cache_options o;
  hs_frame_cache_options_init(&o);
  o.frame_bytes = (uint32_t)page_size;
  o.extra_bytes = (uint32_t)extra_size;
  /* As pcache1: SQLite finds a new page by the first pointer of its extra
   * (PgHdr.pPage) being NULL, and then sets up the rest itself. */
  o.extra_zeroed = sizeof(void *);
  o.purgeable = purgeable != 0;
  /* SQLite calls a page cache only under the lock of the connection (or
   * shared cache) that owns it, as its own cache relies on: no mutex of the
   * frame cache's on the fetch path. Statistics readers on other threads
   * are safe without it (hotset/frame_cache.h). */
  o.caller_serializes = true;
  o.capacity = DEFAULT_CACHE_BYTES / (uint32_t)page_size;
  o.recycle_early = true; /* pcache1 allocates only while count + 1 < cache_size */
  o.alloc_block = sqlite_alloc;
  o.free_block = sqlite_free;
  o.under_pressure = sqlite_short_of_memory;
  /* SQLite reads page 1 at the start of every read transaction (the
   * change counter and schema cookie in its header): a statement's first
   * page. */
  o.boundary_key = 1;
  o.has_boundary_key = true;
  c->purgeable = o.purgeable;
  pthread_mutex_init(&c->capacity_lock, NULL);
  atomic_init(&c->wanted, o.capacity);
  atomic_init(&c->granted, o.capacity);
  atomic_init(&c->growing, false);
  pthread_mutex_lock(&lock);
  o.policy = cfg_policy;
  o.scan_run = cfg_scan_run;
  /* Created under the lock, which keeps cfg_policy still while it is read. */
  hs_status st = hs_frame_cache_create(&o, &c->fc);
  if (st == HS_OK) {
    c->next = live;
    if (live) live->prev = c;
    live = c;
    gone.caches++;
    caches_ever++;
  }
  pthread_mutex_unlock(&lock);
  if (st != HS_OK) {
    pthread_mutex_destroy(&c->capacity_lock);
    sqlite3_free(c);
    return NULL; /* SQLite reports SQLITE_NOMEM */
  }
  return (sqlite3_pcache *)c;
}

static void pc_cachesize(sqlite3_pcache *p, int pages) {
  set_capacity((sqlite_cache *)p, pages);
}

static int pc_pagecount(sqlite3_pcache *p) {
  return (int)hs_frame_cache_count(((sqlite_cache *)p)->fc);
}

_Static_assert(HS_FETCH_LOOKUP == 0 && HS_FETCH_CREATE == 1 && HS_FETCH_CREATE_HARD == 2,
               "SQLite's createFlag 0/1/2 are the frame cache's modes, value for value");

/* A fetch while the cache may grow (granted below wanted): whether it
 * created a frame says whether the cache is full yet. */
__attribute__((noinline)) static sqlite3_pcache_page *fetch_growing(sqlite_cache *c, unsigned key,
                                                                    int create_flag) {
  bool created = false;
  hs_frame *f = hs_frame_cache_get(c->fc, key, (hs_fetch_mode)create_flag, &created);
  if (created && c->purgeable) grow(c);
  return (sqlite3_pcache_page *)f;
}

/* SQLite's xFetch has no error code: NULL is its "no page" whether the
 * cache refused or memory ran out, and SQLite reports SQLITE_NOMEM then;
 * so the lean fetch, which tells neither apart, is all it needs. Once the
 * cache has all the capacity SQLite asked for (not growing: grow would do
 * nothing), nothing follows the fetch, and it is a tail call.
 * Only SQLite's calls on this cache, which it serializes, change it. */
static sqlite3_pcache_page *pc_fetch(sqlite3_pcache *p, unsigned key, int create_flag) {
  sqlite_cache *c = (sqlite_cache *)p;
  if (__builtin_expect(atomic_load_explicit(&c->growing, memory_order_relaxed), 0))
    return fetch_growing(c, key, create_flag);
  return (sqlite3_pcache_page *)hs_frame_cache_get(c->fc, key, (hs_fetch_mode)create_flag, NULL);
}

static void pc_unpin(sqlite3_pcache *p, sqlite3_pcache_page *page, int discard) {
  hs_frame_cache_unpin(((sqlite_cache *)p)->fc, (hs_frame *)page, discard != 0);
}

static void pc_rekey(sqlite3_pcache *p, sqlite3_pcache_page *page, unsigned old_key,
                     unsigned new_key) {
  (void)old_key; /* the frame knows its key */
  hs_frame_cache_rekey(((sqlite_cache *)p)->fc, (hs_frame *)page, new_key);
}

static void pc_truncate(sqlite3_pcache *p, unsigned limit) {
  hs_frame_cache_truncate(((sqlite_cache *)p)->fc, limit);
}

static void pc_destroy(sqlite3_pcache *p) {
  sqlite_cache *c = (sqlite_cache *)p;
  pthread_mutex_lock(&lock);
  hs_frame_cache_stats s;
  hs_frame_cache_stats_get(c->fc, &s);
  stats_add(&gone, &s, &c->base);
  if (c->prev)
    c->prev->next = c->next;
  else
    live = c->next;
  if (c->next) c->next->prev = c->prev;
  pthread_mutex_unlock(&lock);
  hs_frame_cache_destroy(c->fc);
  pthread_mutex_destroy(&c->capacity_lock);
  sqlite3_free(c);
}

static void pc_shrink(sqlite3_pcache *p) {
  hs_frame_cache_shrink(((sqlite_cache *)p)->fc);
}

static const sqlite3_pcache_methods2 methods = {
    .iVersion = 1,
    .pArg = NULL,
    .xInit = pc_init,
    .xShutdown = pc_shutdown,
    .xCreate = pc_create,
    .xCachesize = pc_cachesize,
    .xPagecount = pc_pagecount,
    .xFetch = pc_fetch,
    .xUnpin = pc_unpin,
    .xRekey = pc_rekey,
    .xTruncate = pc_truncate,
    .xDestroy = pc_destroy,
    .xShrink = pc_shrink,
};

void hotset_sqlite_stats_get(hotset_sqlite_stats *out) {
  pthread_mutex_lock(&lock);
  *out = gone;
  for (sqlite_cache *c = live; c; c = c->next) {
    hs_frame_cache_stats s;
    hs_frame_cache_stats_get(c->fc, &s);
    stats_add(out, &s, &c->base);
  }
  pthread_mutex_unlock(&lock);
}

void hotset_sqlite_stats_reset(void) {
  pthread_mutex_lock(&lock);
  memset(&gone, 0, sizeof gone);
  for (sqlite_cache *c = live; c; c = c->next) hs_frame_cache_stats_get(c->fc, &c->base);
  pthread_mutex_unlock(&lock);
}

static void print_stats_at_exit(void) {
  pthread_mutex_lock(&lock);
  bool used = caches_ever > 0;
  char policy[sizeof cfg_policy];
  memcpy(policy, cfg_policy, sizeof policy);
  uint32_t scan_run = cfg_scan_run;
  pthread_mutex_unlock(&lock);
  /* A process that never opened a database (a shell between two programs
   * under the same LD_PRELOAD) says nothing. */
  if (!used) return;
  hotset_sqlite_stats s;
  hotset_sqlite_stats_get(&s);
  fprintf(stderr,
          "hotset-sqlite: policy=%s scan_run=%u caches=%llu fetches=%llu hits=%llu (%.2f%%) "
          "misses=%llu creates=%llu refusals=%llu evictions=%llu overflows=%llu discards=%llu "
          "scan_fetches=%llu\n",
          policy, scan_run, (unsigned long long)s.caches, (unsigned long long)s.fetches,
          (unsigned long long)s.hits, s.fetches ? 100.0 * (double)s.hits / (double)s.fetches : 0.0,
          (unsigned long long)s.misses, (unsigned long long)s.creates,
          (unsigned long long)s.refusals, (unsigned long long)s.evictions,
          (unsigned long long)s.overflows, (unsigned long long)s.discards,
          (unsigned long long)s.scan_fetches);
}

/* HOTSET_SQLITE_SCAN: a page count, or 0 / "off". A value that is neither
 * is said on stderr and the default kept. */
static uint32_t scan_from_env(const char *v) {
  if (!v || !*v) return DEFAULT_SCAN_RUN;
  if (strcasecmp(v, "off") == 0) return 0;
  char *end;
  unsigned long n = strtoul(v, &end, 10);
  if (*end || v[0] == '-' || n > UINT32_MAX) {
    fprintf(stderr,
            "hotset-sqlite: HOTSET_SQLITE_SCAN=%s is not a page count or \"off\"; using %u\n", v,
            DEFAULT_SCAN_RUN);
    return DEFAULT_SCAN_RUN;
  }
  return (uint32_t)n;
}

static bool flag_from_env(const char *v) {
  return v && *v && strcmp(v, "0") != 0 && strcasecmp(v, "off") != 0 && strcasecmp(v, "no") != 0 &&
         strcasecmp(v, "false") != 0;
}

void hotset_sqlite_options_init(hotset_sqlite_options *o) {
  const char *policy = getenv("HOTSET_SQLITE_POLICY");
  o->policy = policy && *policy ? policy : NULL;
  o->scan_run = scan_from_env(getenv("HOTSET_SQLITE_SCAN"));
  o->stats_at_exit = flag_from_env(getenv("HOTSET_SQLITE_STATS"));
}

/* A frame cache made and dropped with the spec: the same check every
 * xCreate will make, so a spec that passes here cannot fail there. */
static bool policy_usable(const char *spec, uint32_t scan_run, const char *what_stays) {
  if (strlen(spec) >= sizeof cfg_policy) {
    fprintf(stderr, "hotset-sqlite: policy spec \"%.40s...\" is too long; %s\n", spec, what_stays);
    return false;
  }
  hs_frame_cache_options o;
  hs_frame_cache_options_init(&o);
  o.policy = spec;
  o.scan_run = scan_run;
  hs_frame_cache *fc;
  if (hs_frame_cache_create(&o, &fc) != HS_OK) {
    fprintf(stderr, "hotset-sqlite: policy \"%s\" refused: %s; %s\n", spec, hs_last_error(),
            what_stays);
    return false;
  }
  hs_frame_cache_destroy(fc);
  return true;
}

/* The spec with the policy's own name (the registry's: "lru" for "LRU",
 * "2q" for "TwoQ"), so that the statistics name it as every other hotset
 * output does; the parameters stay as given. */
static void canonical_spec(const char *spec, char *out, size_t len) {
  const char *colon = strchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
  char name[64];
  const char *canonical = NULL;
  if (n < sizeof name) {
    memcpy(name, spec, n);
    name[n] = 0;
    canonical = hs_policy_canonical(name);
  }
  if (canonical)
    snprintf(out, len, "%s%s", canonical, spec + n);
  else
    snprintf(out, len, "%s", spec);
}

int hotset_sqlite_install_ex(const hotset_sqlite_options *o) {
  hotset_sqlite_options defaults;
  if (!o) {
    hotset_sqlite_options_init(&defaults);
    o = &defaults;
  }
  const char *spec = o->policy ? o->policy : DEFAULT_POLICY;
  pthread_mutex_lock(&lock);
  bool was_installed = installed;
  pthread_mutex_unlock(&lock);
  if (!policy_usable(spec, o->scan_run,
                     was_installed ? "hotset's cache stays as it was"
                                   : "SQLite's own page cache stays"))
    return SQLITE_ERROR;
  pthread_mutex_lock(&lock);
  int rc = SQLITE_OK;
  /* SQLite's own methods are saved once: installing again (another
   * policy) must not save ours in their place. Both calls answer
   * SQLITE_MISUSE once SQLite is initialized. */
  if (!installed) rc = sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &saved_methods);
  if (rc == SQLITE_OK) rc = sqlite3_config(SQLITE_CONFIG_PCACHE2, &methods);
  if (rc == SQLITE_OK) {
    installed = true;
    canonical_spec(spec, cfg_policy, sizeof cfg_policy);
    cfg_scan_run = o->scan_run;
    if (o->stats_at_exit && !atexit_done) atexit_done = atexit(print_stats_at_exit) == 0;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

int hotset_sqlite_install(const char *policy) {
  hotset_sqlite_options o;
  hotset_sqlite_options_init(&o);
  if (policy) o.policy = policy;
  return hotset_sqlite_install_ex(&o);
}

int hotset_sqlite_uninstall(void) {
  pthread_mutex_lock(&lock);
  int rc = SQLITE_OK;
  if (installed) rc = sqlite3_config(SQLITE_CONFIG_PCACHE2, &saved_methods);
  if (rc == SQLITE_OK) installed = false;
  pthread_mutex_unlock(&lock);
  return rc;
}

int hotset_sqlite_preload_install(void) {
  hotset_sqlite_options o;
  hotset_sqlite_options_init(&o);
  int rc = hotset_sqlite_install_ex(&o);
  /* A bad policy has been said by install_ex already. */
  if (rc == SQLITE_MISUSE)
    fprintf(stderr, "hotset-sqlite: not installed: SQLite was initialized before "
                    "libhotset-sqlite's constructor ran; SQLite's own page cache stays\n");
  else if (rc != SQLITE_OK && rc != SQLITE_ERROR)
    fprintf(stderr,
            "hotset-sqlite: not installed: sqlite3_config said %s; SQLite's own page "
            "cache stays\n",
            sqlite3_errstr(rc));
  return rc;
}

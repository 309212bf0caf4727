/*
 * storage/smgr_catalog.c — the storage manager's list of the relation files
 * that must exist, kept up to date (storage/smgr_catalog.h).
 *
 * Every change copies the list, changes the copy, writes it durably and
 * only then takes it as the list: a failed write leaves the list as the
 * file still says it is.
 */
#include "storage/smgr_catalog.h"

#include "core/error.h"
#include "hotset/control.h"
#include "hotset/page.h"
#include "storage/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct smgr_catalog {
  pthread_mutex_t mu; /* guards everything below, and orders the list's changes */
  bool kept;          /* `list` is the directory's list, and changes go to it */
  bool marks_moved;   /* a mark changed since the list was last written */
  catalog list;
};

smgr_catalog *smgr_catalog_new(void) {
  smgr_catalog *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  if (pthread_mutex_init(&c->mu, NULL) != 0) {
    free(c);
    return NULL;
  }
  return c;
}

void smgr_catalog_free(smgr_catalog *c) {
  if (!c) return;
  catalog_free(&c->list);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

/* Writes `next` as the directory's list and, once that is durable, takes it
 * as c's (freeing the old); on failure `next` is freed and c's list stays. */
static hs_status install(hs_smgr *smgr, smgr_catalog *c, catalog *next) {
  hs_status st = catalog_write(hs_smgr_dir(smgr), next);
  if (st != HS_OK) {
    catalog_free(next);
    return st;
  }
  catalog_free(&c->list);
  c->list = *next;
  return HS_OK;
}

/* ---- loading and checking ---------------------------------------------- */

typedef struct first_problem {
  bool have;
  catalog_problem p;
} first_problem;

static void keep_first(void *ctx, const catalog_problem *p) {
  first_problem *f = ctx;
  if (!f->have) f->p = *p;
  f->have = true;
}

hs_status smgr_catalog_load(hs_smgr *smgr, bool required, const char *who) {
  const char *dir = hs_smgr_dir(smgr);
  char path[PATH_MAX + 32], dir_word[PATH_MAX + 64];
  catalog_path(dir, path, sizeof path);
  catalog_shell_word(dir, dir_word, sizeof dir_word);
  catalog list;
  hs_status st = catalog_read(dir, &list);
  if (st == HS_ERR_NOENT) {
    catalog_free(&list);
    if (!required) return HS_OK;
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s: %s is missing, but %s/%s says this directory keeps it: the list of the "
                   "relation files the directory must hold is lost, so one that is missing could "
                   "not be noticed; restore it from a backup, or list the files there now with "
                   "`hotset relations --dir %s --rebuild --force` (a file already lost then goes "
                   "unnoticed)",
                   who, path, dir, HS_CONTROL_FILE, dir_word);
  }
  if (st != HS_OK) {
    catalog_free(&list);
    char why[1024];
    snprintf(why, sizeof why, "%s", hs_last_error());
    return hs_fail(st, hs_last_errno(), "%s: %s", who, why);
  }
  /* Sizes of 0 blocks mean the same in any unit: a directory that took a
   * new page size (it had no relation file yet) keeps its list. */
  bool any_size = false;
  for (uint32_t i = 0; i < list.n; i++) any_size |= list.entries[i].min_blocks > 0;
  if (!any_size) list.page_size = hs_smgr_page_size(smgr);
  if (list.page_size != hs_smgr_page_size(smgr)) {
    uint32_t theirs = list.page_size;
    catalog_free(&list);
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s: %s counts blocks of %u bytes, but the directory's pages are %u bytes: it "
                   "is another directory's; restore this one's from a backup, or list the files "
                   "there now with `hotset relations --dir %s --rebuild --force`",
                   who, path, theirs, hs_smgr_page_size(smgr), dir_word);
  }
  first_problem first = {0};
  size_t bad = catalog_check(dir, &list, keep_first, &first);
  if (bad) {
    char what[PATH_MAX * 2 + 256], name[32], more[96] = "";
    catalog_describe(dir, &list, &first.p, what, sizeof what);
    hs_smgr_fork_filename(first.p.want.rel, first.p.want.fork, name, sizeof name);
    if (bad > 1)
      snprintf(more, sizeof more, " (and %zu more listed files are missing or short)", bad - 1);
    catalog_free(&list);
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s: %s%s: restore it from a backup, or accept losing what it held with "
                   "`hotset relations --dir %s --forget %s --force`; `hotset relations --dir %s` "
                   "lists every file and what is on disk",
                   who, what, more, dir_word, name, dir_word);
  }
  smgr_catalog *c = smgr_catalog_of(smgr);
  pthread_mutex_lock(&c->mu);
  catalog_free(&c->list);
  c->list = list;
  c->kept = true;
  pthread_mutex_unlock(&c->mu);
  return HS_OK;
}

/* ---- starting a list: the files already there -------------------------- */

/* The main and init forks in `dir` that `list` lacks, into `found`. */
static hs_status unlisted_files(const char *dir, const catalog *list, catalog *found) {
  DIR *d = opendir(dir);
  if (!d) return hs_fail(HS_ERR_IO, errno, "cannot list %s: %s", dir, strerror(errno));
  hs_status st = HS_OK;
  for (struct dirent *e; st == HS_OK && (e = readdir(d)) != NULL;) {
    hs_relid rel;
    hs_fork fork;
    if (!hs_smgr_parse_fork_filename(e->d_name, &rel, &fork) || !catalog_fork_listed(fork) ||
        catalog_find(list, rel, fork))
      continue;
    st = catalog_put(found, rel, fork, 0);
  }
  closedir(d);
  return st;
}

hs_status smgr_catalog_adopt(hs_smgr *smgr) {
  smgr_catalog *c = smgr_catalog_of(smgr);
  const char *dir = hs_smgr_dir(smgr);
  pthread_mutex_lock(&c->mu);
  catalog found, next;
  catalog_init(&found, hs_smgr_page_size(smgr));
  catalog_init(&next, hs_smgr_page_size(smgr));
  if (!c->kept) {
    catalog_free(&c->list);
    catalog_init(&c->list, hs_smgr_page_size(smgr));
  }
  hs_status st = unlisted_files(dir, &c->list, &found);
  if (st == HS_OK && (found.n || !c->kept)) {
    /* Listed means durable: each file and its name on disk first. */
    for (uint32_t i = 0; st == HS_OK && i < found.n; i++)
      st = hs_smgr_sync(smgr, found.entries[i].rel, found.entries[i].fork);
    if (st == HS_OK && found.n) st = smgr_sync_dir_now(smgr);
    if (st == HS_OK) st = catalog_copy(&next, &c->list);
    for (uint32_t i = 0; st == HS_OK && i < found.n; i++)
      st = catalog_put(&next, found.entries[i].rel, found.entries[i].fork, 0);
    if (st == HS_OK)
      st = install(smgr, c, &next);
    else
      catalog_free(&next);
  }
  if (st == HS_OK) c->kept = true;
  catalog_free(&found);
  pthread_mutex_unlock(&c->mu);
  return st;
}

/* ---- changes ------------------------------------------------------------ */

hs_status smgr_catalog_note_created(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  if (!catalog_fork_listed(fork)) return HS_OK;
  smgr_catalog *c = smgr_catalog_of(smgr);
  pthread_mutex_lock(&c->mu);
  hs_status st = HS_OK;
  if (c->kept && !catalog_find(&c->list, rel, fork)) {
    /* The file and its directory entry durable before the entry: a list
     * naming a file a power cut could still take away would refuse a
     * directory that lost nothing. */
    st = hs_smgr_sync(smgr, rel, fork);
    if (st == HS_OK) st = smgr_sync_dir_now(smgr);
    catalog next;
    if (st == HS_OK) st = catalog_copy(&next, &c->list);
    if (st == HS_OK) {
      st = catalog_put(&next, rel, fork, 0);
      if (st == HS_OK)
        st = install(smgr, c, &next);
      else
        catalog_free(&next);
    }
  }
  pthread_mutex_unlock(&c->mu);
  return st;
}

/* Lowers or removes (rel, fork)'s entry in the directory's file, for a
 * handle that does not keep the list. */
static hs_status shrink_on_disk(hs_smgr *smgr, hs_relid rel, hs_fork fork, bool remove,
                                hs_blockno nblocks) {
  const char *dir = hs_smgr_dir(smgr);
  catalog list;
  hs_status st = catalog_read(dir, &list);
  if (st == HS_ERR_NOENT) {
    catalog_free(&list);
    return HS_OK;
  }
  catalog_entry *e = st == HS_OK ? catalog_find(&list, rel, fork) : NULL;
  if (e && !remove && list.page_size != hs_smgr_page_size(smgr)) {
    char path[PATH_MAX + 32];
    catalog_path(dir, path, sizeof path);
    st = hs_fail(HS_ERR_INVALID, 0,
                 "cannot cut relation %u: %s counts blocks of %u bytes, this storage manager's "
                 "are %u bytes",
                 rel, path, list.page_size, hs_smgr_page_size(smgr));
  } else if (e &&
             (remove || e->min_blocks > nblocks || (e->mark_lsn && e->mark_block >= nblocks))) {
    if (remove) {
      catalog_remove(&list, rel, fork);
    } else {
      if (e->min_blocks > nblocks) e->min_blocks = nblocks;
      if (e->mark_block >= nblocks) e->mark_block = 0, e->mark_lsn = 0;
    }
    st = catalog_write(dir, &list);
  }
  catalog_free(&list);
  return st;
}

hs_status smgr_catalog_begin_shrink(hs_smgr *smgr, hs_relid rel, hs_fork fork, bool remove,
                                    hs_blockno nblocks) {
  smgr_catalog *c = smgr_catalog_of(smgr);
  pthread_mutex_lock(&c->mu);
  if (!catalog_fork_listed(fork)) return HS_OK;
  if (!c->kept) return shrink_on_disk(smgr, rel, fork, remove, nblocks);
  catalog_entry *e = catalog_find(&c->list, rel, fork);
  bool mark_cut = e && e->mark_lsn && e->mark_block >= nblocks;
  if (!e || (!remove && e->min_blocks <= nblocks && !mark_cut)) return HS_OK;
  catalog next;
  hs_status st = catalog_copy(&next, &c->list);
  if (st != HS_OK) return st;
  if (remove) {
    catalog_remove(&next, rel, fork);
  } else {
    catalog_entry *n = catalog_find(&next, rel, fork);
    if (n->min_blocks > nblocks) n->min_blocks = nblocks;
    if (mark_cut) n->mark_block = 0, n->mark_lsn = 0; /* its page is gone */
  }
  return install(smgr, c, &next);
}

void smgr_catalog_end_shrink(hs_smgr *smgr) {
  pthread_mutex_unlock(&smgr_catalog_of(smgr)->mu);
}

/* ---- checkpoints -------------------------------------------------------- */

hs_status smgr_catalog_record_sizes(hs_smgr *smgr) {
  smgr_catalog *c = smgr_catalog_of(smgr);
  pthread_mutex_lock(&c->mu);
  if (!c->kept) {
    pthread_mutex_unlock(&c->mu);
    return HS_OK;
  }
  catalog next;
  hs_status st = catalog_copy(&next, &c->list);
  bool changed = false;
  for (uint32_t i = 0; st == HS_OK && i < next.n; i++) {
    catalog_entry *e = &next.entries[i];
    hs_blockno n;
    st = hs_smgr_nblocks(smgr, e->rel, e->fork, &n);
    if (st != HS_OK) break;
    if (n < e->min_blocks) {
      char name[32];
      hs_smgr_fork_filename(e->rel, e->fork, name, sizeof name);
      st = hs_fail(HS_ERR_CORRUPT, 0,
                   "checkpoint: \"%s/%s\" has %u blocks, but had %u at the last checkpoint: it "
                   "was cut short behind the storage manager's back",
                   hs_smgr_dir(smgr), name, n, e->min_blocks);
      break;
    }
    if (n == e->min_blocks) continue;
    /* Recorded only once durable: sync_all ran before this, but a block
     * added since then (or whose writer had not yet marked the file for
     * syncing) need not be. */
    st = hs_smgr_sync(smgr, e->rel, e->fork);
    e->min_blocks = n;
    changed = true;
  }
  if (st == HS_OK && (changed || c->marks_moved)) {
    st = install(smgr, c, &next);
    if (st == HS_OK) c->marks_moved = false;
  } else {
    catalog_free(&next);
  }
  pthread_mutex_unlock(&c->mu);
  return st;
}

/* ---- marks: the newest page a checkpoint wrote ------------------------- */

void smgr_catalog_note_write(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno block,
                             uint64_t lsn) {
  if (!catalog_fork_listed(fork) || lsn == 0) return;
  smgr_catalog *c = smgr_catalog_of(smgr);
  pthread_mutex_lock(&c->mu);
  catalog_entry *e = c->kept ? catalog_find(&c->list, rel, fork) : NULL;
  if (e && lsn > e->mark_lsn) {
    e->mark_block = block;
    e->mark_lsn = lsn;
    c->marks_moved = true;
  }
  pthread_mutex_unlock(&c->mu);
}

static bool all_zeros(const unsigned char *p, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

hs_status smgr_catalog_check_marks(hs_smgr *smgr, bool clean, uint16_t own_mark, uint32_t *stale) {
  *stale = 0;
  smgr_catalog *c = smgr_catalog_of(smgr);
  uint32_t page_size = hs_smgr_page_size(smgr);
  /* Aligned as direct I/O needs (the pool's page size is a multiple). */
  size_t align = hs_smgr_io_alignment(smgr) > 4096 ? hs_smgr_io_alignment(smgr) : 4096;
  unsigned char *page = aligned_alloc(align, (page_size + align - 1) / align * align);
  if (!page) return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory to check the relation files");
  hs_status st = HS_OK;
  pthread_mutex_lock(&c->mu);
  catalog next;
  bool changed = false;
  if (c->kept) st = catalog_copy(&next, &c->list);
  for (uint32_t i = 0; c->kept && st == HS_OK && i < next.n; i++) {
    catalog_entry *e = &next.entries[i];
    if (!e->mark_lsn || e->mark_block >= e->min_blocks) continue;
    st = hs_smgr_read(smgr, e->rel, e->fork, e->mark_block, page);
    if (st != HS_OK) break;
    /* A page that fails its checksum or carries another directory's mark
     * is refused by the read that meets it, as what it is; here only the
     * age of this directory's own pages counts. */
    uint16_t theirs = hs_page_system(page);
    bool older = all_zeros(page, page_size) ||
                 (hs_page_verify(page, page_size, e->mark_block, NULL, NULL) &&
                  (!theirs || theirs == own_mark) && hs_page_lsn(page) < e->mark_lsn);
    /* Found older only where nothing is to be replayed (a recovery cut
     * short may have written a page back to an older image); found as new
     * (the file restored) at any open. */
    bool now_stale = older ? (clean || e->stale) : false;
    changed |= now_stale != e->stale;
    e->stale = now_stale;
  }
  /* Kept in the list: a crash before the file is dealt with must not make
   * the next open, which cannot check (it replays), forget it. */
  if (c->kept && st == HS_OK && changed)
    st = install(smgr, c, &next);
  else if (c->kept)
    catalog_free(&next);
  for (uint32_t i = 0; c->kept && st == HS_OK && i < c->list.n; i++)
    *stale += c->list.entries[i].stale;
  pthread_mutex_unlock(&c->mu);
  free(page);
  return st;
}

hs_status smgr_catalog_clear_stale(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  smgr_catalog *c = smgr_catalog_of(smgr);
  pthread_mutex_lock(&c->mu);
  catalog_entry *e = c->kept ? catalog_find(&c->list, rel, fork) : NULL;
  hs_status st = HS_OK;
  if (e && e->stale) {
    catalog next;
    st = catalog_copy(&next, &c->list);
    if (st == HS_OK) {
      catalog_find(&next, rel, fork)->stale = false;
      st = install(smgr, c, &next);
    }
  }
  pthread_mutex_unlock(&c->mu);
  return st;
}

bool smgr_catalog_stale(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno *block,
                        uint64_t *lsn) {
  smgr_catalog *c = smgr_catalog_of(smgr);
  pthread_mutex_lock(&c->mu);
  catalog_entry *e = c->kept ? catalog_find(&c->list, rel, fork) : NULL;
  bool stale = e && e->stale;
  if (stale) {
    *block = e->mark_block;
    *lsn = e->mark_lsn;
  }
  pthread_mutex_unlock(&c->mu);
  return stale;
}

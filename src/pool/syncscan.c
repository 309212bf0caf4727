/*
 * pool/syncscan.c — where should a new sequential scan of a relation start?
 * (hotset/syncscan.h)
 *
 * Scans report their position every HS_SYNCSCAN_REPORT_INTERVAL blocks into
 * a small table owned by the pool; a new scan of the same relation starts
 * at the last reported position, so that it reads what the running scan has
 * just brought in instead of making a second pass over the disk.
 *
 * The table holds HS_SYNCSCAN_TABLE_SIZE (relation, block) pairs kept in
 * report order, most recent first: a report moves its relation to the front,
 * and a relation not in the table takes the place of the least recently
 * reported one. With twenty entries a linear search and a memmove of at most
 * nineteen 8-byte entries are cheaper than maintaining list links, and the
 * order is plain to see in a debugger.
 *
 * One mutex guards the table. It is taken once per report (every sixteenth
 * block of a scan, whose other fifteen reads cost a pread each) and once per
 * scan start, so it is never a hot lock. Starting a scan only reads the
 * table: the order is "least recently *reported*", as the header promises.
 */
#include "pool/syncscan.h"

#include "core/error.h"
#include "hotset/syncscan.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct syncscan_entry {
  hs_relid rel;
  hs_blockno block;
} syncscan_entry;

struct hs_syncscan_table {
  pthread_mutex_t lock;
  uint32_t used;                                /* entries [0, used) are live */
  syncscan_entry entry[HS_SYNCSCAN_TABLE_SIZE]; /* most recently reported first */
};

hs_syncscan_table *syncscan_table_create(void) {
  hs_syncscan_table *t = calloc(1, sizeof *t);
  if (!t) {
    hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating the synchronized-scan table");
    return NULL;
  }
  int err = pthread_mutex_init(&t->lock, NULL);
  if (err) {
    free(t);
    hs_fail(hs_status_from_errno(err), err, "initializing the synchronized-scan lock: %s",
            strerror(err));
    return NULL;
  }
  return t;
}

void syncscan_table_free(hs_syncscan_table *t) {
  if (!t) return;
  pthread_mutex_destroy(&t->lock);
  free(t);
}

/* The slot holding `rel`, or -1. Caller holds the lock. */
static int find_entry(const hs_syncscan_table *t, hs_relid rel) {
  for (uint32_t i = 0; i < t->used; i++)
    if (t->entry[i].rel == rel) return (int)i;
  return -1;
}

hs_blockno hs_syncscan_start(hs_pool *pool, hs_relid rel, hs_blockno nblocks) {
  hs_syncscan_table *t = pool ? pool_syncscan_table(pool) : NULL;
  if (!t || nblocks == 0) return 0;
  hs_blockno pos = 0;
  pthread_mutex_lock(&t->lock);
  int i = find_entry(t, rel);
  if (i >= 0) pos = t->entry[i].block;
  pthread_mutex_unlock(&t->lock);
  /* The relation may have shrunk since the position was reported, or the
   * scan that reported it may have been of a longer version of it: a
   * position past the end means "start at the beginning". */
  return pos < nblocks ? pos : 0;
}

void hs_syncscan_report(hs_pool *pool, hs_relid rel, hs_blockno block) {
  if (block % HS_SYNCSCAN_REPORT_INTERVAL != 0) return;
  hs_syncscan_table *t = pool ? pool_syncscan_table(pool) : NULL;
  if (!t) return;
  pthread_mutex_lock(&t->lock);
  int i = find_entry(t, rel);
  uint32_t shift; /* entries that move one slot towards the back */
  if (i >= 0) {
    shift = (uint32_t)i; /* those reported after it */
  } else if (t->used < HS_SYNCSCAN_TABLE_SIZE) {
    shift = t->used++;
  } else {
    shift = HS_SYNCSCAN_TABLE_SIZE - 1; /* the last one falls off */
  }
  memmove(&t->entry[1], &t->entry[0], shift * sizeof t->entry[0]);
  t->entry[0].rel = rel;
  t->entry[0].block = block;
  pthread_mutex_unlock(&t->lock);
}

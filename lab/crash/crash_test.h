/*
 * crash/crash_test.h — `hotset crash-test`: what its three halves share.
 *
 * The data directory D holds two relations and the log in D/wal:
 *   relation CRASH_REL   CRASH_PAGES_PER_CLIENT blocks per client; client c
 *                        owns blocks c*K .. c*K+K-1, and every one of them
 *                        holds the client's last committed value (or zeros
 *                        before its first transaction)
 *   relation CRASH_COLD  blocks of zeros the clients read between their
 *                        transactions, so that the small pool evicts (and
 *                        writes) dirty pages of CRASH_REL all the time
 *
 * A transaction of client c sets its K pages to (c, V, a filler derived
 * from V and the block) in ONE record of the crash test's own resource
 * manager (hs_buf_log_record), so a crash leaves it in the log whole or
 * not at all, then logs a commit record and flushes: only then is V
 * acknowledged. The filler covers the whole engine area of the page, so a
 * write torn half way leaves a page that neither version explains.
 */
#ifndef HOTSET_LAB_CRASH_TEST_H
#define HOTSET_LAB_CRASH_TEST_H

#include "crash/powercut.h"
#include "hotset/durability.h"
#include "hotset/heap.h"
#include "hotset/pool.h"
#include "hotset/wal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CRASH_PROG             "hotset crash-test"
#define CRASH_REL              1u
#define CRASH_COLD             2u
#define CRASH_COLD_BLOCKS      256u
#define CRASH_PAGES_PER_CLIENT 8u
#define CRASH_MAX_CLIENTS      64u
#define CRASH_PAGE_SIZE        4096u
/* Small segments, so that the log switches segment every few dozen
 * transactions and checkpoints recycle them. */
#define CRASH_SEGMENT_BYTES (256u * 1024u)
/* The segment size crash_db_open uses: CRASH_SEGMENT_BYTES unless a
 * power-loss run chose another (--segment-bytes). */
extern uint64_t crash_segment_bytes;
/* The page size likewise: CRASH_PAGE_SIZE, or 1024 with 64 KiB segments
 * (whose records hold at most 16 KB: not 8 images of 4 KiB pages). */
extern uint32_t crash_page_size;
/* Whether the workload's pool runs the background writer (power-loss runs:
 * the --kill-at checkpoint kill takes any write off a client thread for
 * the checkpointer's, so the others leave it off). */
extern bool crash_bgwriter;
/* The heap workload (--heap): relations of the table and its index, and
 * the rows each client owns (keys c*CRASH_HEAP_ROWS+1 ..). */
extern bool crash_heap;
#define CRASH_HEAP_REL  3u
#define CRASH_INDEX_REL 4u
#define CRASH_HEAP_ROWS 4u
#define CRASH_RMGR      HS_WAL_RMGR_FIRST_USER
enum { CRASH_REC_TXN = 0, CRASH_REC_COMMIT = 1 };

/* The payload of both record types. */
typedef struct crash_payload {
  uint32_t client;
  uint32_t pad;
  uint64_t value;
} crash_payload;

/* Writes (client, value) and the filler into the engine area of a page. */
void crash_page_fill(void *page, uint32_t client, hs_blockno block, uint64_t value);

typedef enum crash_page_state {
  CRASH_PAGE_ZEROS = 0, /* never changed: value 0 */
  CRASH_PAGE_OK,        /* a whole (client, value) */
  CRASH_PAGE_BAD        /* anything else: torn, misplaced, scribbled on */
} crash_page_state;
/* What the engine area of the page at `block` holds (*value for OK). */
crash_page_state crash_page_parse(const void *page, hs_blockno block, uint64_t *value);

/* The directory's log and pool, opened in that order: recovery runs inside
 * hs_pool_open. `workload`: the busy settings (a small pool, frequent
 * checkpoints); otherwise a pool just big enough to read the pages back. */
typedef struct crash_db {
  hs_wal *wal;
  hs_pool *pool;
  uint32_t clients; /* from the relation's size */
  /* crash_heap: the transaction manager, the table and its index. */
  hs_xact_mgr *xact;
  hs_heap *heap;
  hs_pk_index *ix;
} crash_db;
/* Creates the relations if missing (CRASH_REL with room for `clients`, at
 * least), then opens. One line in hs_last_error() on failure. */
hs_status crash_db_open(const char *dir, uint32_t clients, bool workload, crash_db *db);
/* Closes the pool, then the log (abandons the pool if closing fails). */
hs_status crash_db_close(crash_db *db);

/* What a verification found. */
typedef struct crash_check {
  uint32_t clients;
  uint64_t value[CRASH_MAX_CLIENTS]; /* each client's recovered value */
  uint32_t corrupt_pages;            /* failed their checksum (HS_ERR_CORRUPT) */
  uint32_t undetected_pages;         /* passed it with contents nothing wrote */
  uint32_t partial_clients;          /* whose pages disagree */
  uint32_t heap_bad;                 /* crash_heap: rows wrong, missing or unfound */
  uint32_t vacuum_failed;            /* crash_heap: vacuum of the recovered table failed */
  hs_pool_recovery_stats report;
} crash_check;
/* Opens (recovers) `dir`, reads every client's pages and closes. Each bad
 * page or partial transaction is one line on `errs`. A failure to open or
 * read other than a checksum is an error (one line in hs_last_error()).
 * `clients` 0: the crash test's relations must be there (--verify of a
 * directory named by hand); otherwise the open is the workload's, which
 * creates what is missing for that many clients — a power cut may land in
 * their creation, before anything was acknowledged (and a relation lost
 * after its commits then reads back as zeros: lost, not excused). */
hs_status crash_check_dir(const char *dir, uint32_t clients, FILE *errs, crash_check *out);
/* Whether the check found anything wrong. */
bool crash_check_failed(const crash_check *c);

/* Where a workload run with --kill-at kills itself: at a page write (in
 * the I/O observer, before it is issued), during a checkpoint (0-80 ms
 * after one of the checkpointer's page writes: in its writes, its fsyncs
 * or its control-file update), or during a commit's flush that carries the
 * log into a new segment (0-500 us into it). */
typedef enum crash_kill_at {
  CRASH_KILL_NONE = 0,
  CRASH_KILL_PAGE_WRITE,
  CRASH_KILL_CHECKPOINT,
  CRASH_KILL_SEGMENT_SWITCH,
  CRASH_KILL_COUNT
} crash_kill_at;
/* "page-write", "checkpoint", "segment-switch" ("" for none). */
const char *crash_kill_at_name(crash_kill_at k);

/* The subcommand's entry point: argv[0] is "crash-test". */
int crash_test_main(int argc, char **argv);

/* The two halves, after the flags are parsed. */
/* `power`: arm the power-cut recorder over `dir` first (NULL: no). */
int crash_workload_run(const char *dir, uint32_t clients, uint64_t seed, bool torn,
                       crash_kill_at kill_at, const pc_arm *power);
int crash_verify_run(const char *dir, bool json);
/* The heap workload (crash_heap.c): clients updating their rows of one
 * table while a thread vacuums it; and its check of a recovered directory
 * (open `db`): each client's value into out->value, faults counted in
 * out->heap_bad / out->vacuum_failed with a line each on `errs`. */
int crash_heap_workload_run(const char *dir, uint32_t clients, uint64_t seed, const pc_arm *power);
hs_status crash_heap_check(crash_db *db, FILE *errs, crash_check *out);

#endif

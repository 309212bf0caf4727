/*
 * sim/scan_runs.c — the sequential runs of a trace (sim/scan_runs.h).
 *
 * Two passes: the first finds each relation fork's size (its highest block
 * plus one), the second follows every stream's last access. When an access
 * continues its stream's last one, both are in a run; the last one starts
 * the run if it was in none. Repeating the block just read continues a run
 * but does not start one (an index scan may read one heap page twice); the
 * third drops the runs too short to be scans.
 */
#include "sim/scan_runs.h"

#include "core/error.h"
#include "sim/key_map.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_MASK 0x0fffffffu
#define FORK_SHIFT 28

typedef struct stream_state {
  uint64_t last;  /* request index of its last access */
  uint64_t start; /* request index of its current run's first access */
  uint32_t last_block;
  uint32_t run_length; /* accesses in its current run (0: none) */
} stream_state;

void hs_scan_runs_free(hs_scan_runs *r) {
  free(r->stream);
  free(r->rel_blocks);
  memset(r, 0, sizeof *r);
}

hs_status hs_scan_runs_find(const uint64_t *ids, const uint32_t *pids, uint64_t n,
                            hs_scan_runs *out) {
  memset(out, 0, sizeof *out);
  key_map sizes = {0}, pid_of = {0}, streams = {0};
  stream_state *state = NULL;
  uint64_t state_cap = 0;
  /* run_length[r] for a run's first request r: the run's length. */
  uint32_t *run_length = NULL;
  hs_status st = HS_OK;
  out->stream = calloc(n ? n : 1, sizeof *out->stream);
  run_length = calloc(n ? n : 1, sizeof *run_length);
  if (!out->stream || !run_length || !key_map_init(&sizes, 64) || !key_map_init(&pid_of, 64) ||
      !key_map_init(&streams, 64))
    goto nomem;

  /* Pass 1: every relation fork's blocks. */
  for (uint64_t r = 0; r < n; r++) {
    uint32_t *v = key_map_place(&sizes, ids[r] >> FORK_SHIFT);
    if (!v) goto nomem;
    uint32_t blocks = (uint32_t)(ids[r] & BLOCK_MASK) + 1;
    if (*v == KEY_MAP_EMPTY || *v < blocks) *v = blocks;
  }

  /* Pass 2: the streams. A stream's key is its relation fork (36 bits)
   * with its process's dense number above it. */
  for (uint64_t r = 0; r < n; r++) {
    uint32_t pid_no = 0;
    if (pids) {
      uint32_t *p = key_map_place(&pid_of, pids[r]);
      if (!p) goto nomem;
      if (*p == KEY_MAP_EMPTY) *p = (uint32_t)(pid_of.n - 1);
      pid_no = *p;
    }
    uint64_t rel = ids[r] >> FORK_SHIFT;
    uint32_t *s = key_map_place(&streams, rel | (uint64_t)pid_no << 36);
    if (!s) goto nomem;
    uint32_t block = (uint32_t)(ids[r] & BLOCK_MASK);
    if (*s == KEY_MAP_EMPTY) {
      if (streams.n >= HS_RUN_START - 1) {
        st = hs_fail(HS_ERR_INVALID, 0, "more than %u access streams", HS_RUN_START - 2);
        goto fail;
      }
      *s = (uint32_t)(streams.n - 1);
      if (*s >= state_cap) {
        uint64_t cap = state_cap ? state_cap * 2 : 64;
        stream_state *bigger = realloc(state, cap * sizeof *bigger);
        uint32_t *blocks = realloc(out->rel_blocks, cap * sizeof *blocks);
        if (bigger) state = bigger;
        if (blocks) out->rel_blocks = blocks;
        if (!bigger || !blocks) goto nomem;
        state_cap = cap;
      }
      out->rel_blocks[*s] = *key_map_place(&sizes, rel); /* present: pass 1 */
      state[*s] = (stream_state){.last = r, .last_block = block};
      continue;
    }
    stream_state *ss = &state[*s];
    uint32_t lb = ss->last_block;
    bool in_run = ss->run_length > 0;
    bool next = block == lb + 1 || (block == 0 && lb != 0 && lb + 1 == out->rel_blocks[*s]);
    /* A scan reads each block once: a run that has covered its relation is
     * over, and a read of the next block (block 0 after the last) is the
     * next scan, with a ring of its own. */
    bool complete = in_run && ss->run_length >= out->rel_blocks[*s];
    if (in_run && !complete && (next || block == lb)) {
      out->stream[r] = *s + 1;
      /* A run's length counts the blocks it moved on to, not re-reads. */
      if (next && ss->run_length < UINT32_MAX) ss->run_length++;
    } else {
      if (in_run) {
        run_length[ss->start] = ss->run_length;
        ss->run_length = 0;
      }
      if (next && complete) { /* the next scan starts here */
        out->stream[r] = (*s + 1) | HS_RUN_START;
        ss->start = r;
        ss->run_length = 1;
      } else if (next) { /* the last access and this one start a run */
        out->stream[ss->last] = (*s + 1) | HS_RUN_START;
        out->stream[r] = *s + 1;
        ss->start = ss->last;
        ss->run_length = 2;
      }
    }
    ss->last = r;
    ss->last_block = block;
  }
  out->nstreams = (uint32_t)streams.n;
  for (uint32_t s = 0; s < out->nstreams; s++)
    if (state[s].run_length) run_length[state[s].start] = state[s].run_length;

  /* Pass 3: runs too short to be a scan are no runs (two blocks an index
   * lookup happened to read in order); the others keep their marks. */
  for (uint32_t s = 0; s < out->nstreams; s++) state[s].run_length = 0; /* 0: drop the run */
  for (uint64_t r = 0; r < n; r++) {
    uint32_t v = out->stream[r];
    if (v == 0) continue;
    uint32_t s = (v & ~HS_RUN_START) - 1;
    if (v & HS_RUN_START) state[s].run_length = run_length[r] >= HS_MIN_SCAN_RUN;
    if (!state[s].run_length) out->stream[r] = 0;
  }
  goto done;
nomem:
  st = hs_fail(HS_ERR_NOMEM, 0, "out of memory finding the trace's scans");
fail:
  hs_scan_runs_free(out);
done:
  free(state);
  free(run_length);
  key_map_free(&sizes);
  key_map_free(&pid_of);
  key_map_free(&streams);
  return st;
}

/*
 * tests/test_compare_found.c — a simulation's misses, request by request,
 * against the traced server's found column (sim/compare_found.h), and what
 * loading keeps of a PostgreSQL trace (found counts, distinct pids).
 *
 * A hand-worked trace of three pages through lru with room for two:
 *   r  page  server   lru (MRU first after)   simulated
 *   0  A     miss     A                        miss  agree
 *   1  B     hit      B A                      miss  sim-only
 *   2  A     hit      A B                      hit
 *   3  C     miss     C A   (B evicted)        miss  agree
 *   4  B     miss     B C   (A evicted)        miss  agree
 *   5  C     miss     C B                      hit   server-only
 * so the misses are requests 0, 1, 3, 4: agree 3, sim-only 1, server-only 1.
 */
#include "check.h"
#include "sim/compare_found.h"
#include "sim/sim.h"
#include "testdir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static char dir[PATH_MAX - 64];

static const char *write_trace(const char *name, const char *text) {
  static char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  REQUIRE(f != NULL);
  REQUIRE(fputs(text, f) >= 0);
  REQUIRE(fclose(f) == 0);
  return path;
}

int main(void) {
  testdir_make(dir, sizeof dir, "compare-found");
  const char *path = write_trace("pg.csv", "seq,pid,rel,fork,block,found\n"
                                           "1,100,1,0,1,f\n"
                                           "2,101,1,0,2,t\n"
                                           "3,100,1,0,1,t\n"
                                           "4,102,1,0,3,f\n"
                                           "5,101,1,0,2,f\n"
                                           "6,100,1,0,3,f\n");
  hs_sim_trace *t;
  REQUIRE(hs_sim_load(path, NULL, NULL, NULL, NULL, &t) == HS_OK);
  REQUIRE(t->found != NULL);
  CHECK_EQ(t->requests, 6);
  CHECK_EQ(t->found_hits, 2);
  CHECK_EQ(t->found_misses, 4);
  CHECK_EQ(t->pids, 3);
  CHECK_EQ(t->found[1], 1);
  CHECK_EQ(t->found[5], 0);

  uint64_t bits[1] = {0};
  hs_sim_result res, plain;
  CHECK_OK(hs_sim_run_marking(t, "lru", 2, true, NULL, bits, &res));
  CHECK_EQ(res.misses, 4);
  CHECK_EQ(bits[0], 0x1b); /* requests 0, 1, 3, 4 */
  CHECK_OK(hs_sim_run(t, "lru", 2, true, NULL, &plain));
  CHECK_EQ(plain.misses, res.misses);
  hs_found_compare cmp;
  CHECK_OK(hs_compare_found(t, bits, &cmp));
  CHECK_EQ(cmp.agree, 3);
  CHECK_EQ(cmp.sim_only, 1);
  CHECK_EQ(cmp.server_only, 1);
  hs_sim_trace_free(t);

  /* Mixed sizes take the simulator's other loop, which marks misses too;
   * a trace without a found column has nothing to compare with. */
  path = write_trace("plain.csv", "obj_id,obj_size\n1,1\n2,2\n1,1\n3,3\n1,1\n");
  REQUIRE(hs_sim_load(path, NULL, NULL, NULL, NULL, &t) == HS_OK);
  bits[0] = 0;
  CHECK_OK(hs_sim_run_marking(t, "lru", 3, false, NULL, bits, &res));
  CHECK_EQ(res.misses, 4); /* 1, 2, hit 1, 3 (evicts both), 1 */
  CHECK_EQ(bits[0], 0x1b);
  CHECK(t->found == NULL);
  CHECK_EQ(t->pids, 0);
  CHECK_EQ(t->found_hits + t->found_misses, 0);
  CHECK_ST(hs_compare_found(t, bits, &cmp), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "no found column");
  hs_sim_trace_free(t);
  testdir_remove(dir);
  return check_finish();
}

/*
 * tests/test_trace_pg.c — PostgreSQL buffer traces in the csv reader, and
 * the pid and found fields every format fills.
 *
 * hotset's PostgreSQL trace csv (seq,pid,rel,fork,block,found) must be
 * found from its header in any column order, its id made as
 * hs_pg_page_id says (and taken apart again the documented way), and
 * rows whose block, fork, pid or found do not fit must be bad records with
 * a message naming the value and the column. The same columns given by a
 * spec (rel=,block=,fork=,pid=,found=) read a headerless file alike, and
 * the spec parser refuses half a page or a page beside an id. The other
 * formats say pid 0 and found -1, and that they have neither.
 */
#include "check.h"
#include "sim/trace.h"
#include "testdir.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[PATH_MAX - 64];

static const char *path_of(const char *name) {
  static char buf[2][PATH_MAX];
  static unsigned next;
  char *p = buf[next++ % 2];
  snprintf(p, PATH_MAX, "%s/%s", dir, name);
  return p;
}

static void write_text(const char *name, const char *text) {
  FILE *f = fopen(path_of(name), "wb");
  REQUIRE(f != NULL);
  REQUIRE(fputs(text, f) >= 0);
  REQUIRE(fclose(f) == 0);
}

typedef struct read_result {
  hs_status st;
  char msg[512];
  hs_request r[16];
  size_t n;
  bool pids, found;
  uint64_t bad;
  char reason[320];
} read_result;

/* Opens and reads up to 16 requests of a file in the test directory. */
static read_result read_trace(const char *name, const hs_trace_options *o) {
  read_result out = {0};
  hs_trace *t;
  out.st = hs_trace_open(path_of(name), o, &t);
  if (out.st == HS_OK) {
    out.pids = hs_trace_has_pids(t);
    out.found = hs_trace_has_found(t);
    snprintf(out.reason, sizeof out.reason, "%s", hs_trace_format_reason(t));
    out.st = hs_trace_read(t, out.r, 16, &out.n);
    out.bad = hs_trace_bad_records(t);
    if (out.bad) snprintf(out.msg, sizeof out.msg, "%s", hs_trace_first_bad(t));
    hs_trace_close(t);
  }
  if (out.st != HS_OK) snprintf(out.msg, sizeof out.msg, "%s", hs_last_error());
  return out;
}

static void test_page_id_layout(void) {
  uint64_t id = hs_pg_page_id(16384, 1, 5);
  CHECK(id == ((uint64_t)16384 << 32 | (uint64_t)1 << 28 | 5));
  CHECK_EQ(id >> 32, 16384);
  CHECK_EQ((id >> 28) & 0xf, 1);
  CHECK_EQ(id & 0x0fffffff, 5);
  uint64_t top = hs_pg_page_id(UINT32_MAX, 15, HS_PG_BLOCK_LIMIT - 1);
  CHECK(top == UINT64_MAX);
}

static void test_header(void) {
  write_text("pg.csv", "seq,pid,rel,fork,block,found\n"
                       "1,4242,16384,0,7,t\n"
                       "2,4243,16384,1,268435455,f\n"
                       "3,4242,2619,0,0,t\n");
  read_result g = read_trace("pg.csv", NULL);
  CHECK_OK(g.st);
  REQUIRE(g.n == 3);
  CHECK(g.pids);
  CHECK(g.found);
  CHECK_CONTAINS(g.reason, "time=1 pid=2 found=6 rel=3 fork=4 block=5");
  CHECK(g.r[0].id == hs_pg_page_id(16384, 0, 7));
  CHECK(g.r[1].id == hs_pg_page_id(16384, 1, 268435455));
  CHECK(g.r[2].id == hs_pg_page_id(2619, 0, 0));
  CHECK_EQ(g.r[0].pid, 4242);
  CHECK_EQ(g.r[1].pid, 4243);
  CHECK_EQ(g.r[0].found, 1);
  CHECK_EQ(g.r[1].found, 0);
  CHECK_EQ(g.r[2].time, 3);
  CHECK_EQ(g.r[0].size, 1);

  /* Any order, other spellings of found, and no fork column (fork 0). */
  write_text("pg2.csv", "found,block,relfilenode,pid,seq\n"
                        "true,9,100,7,10\n"
                        "FALSE,9,100,8,11\n"
                        "0,3,100,7,12\n");
  g = read_trace("pg2.csv", NULL);
  CHECK_OK(g.st);
  REQUIRE(g.n == 3);
  CHECK(g.r[0].id == hs_pg_page_id(100, 0, 9));
  CHECK_EQ(g.r[0].found, 1);
  CHECK_EQ(g.r[1].found, 0);
  CHECK_EQ(g.r[2].found, 0);
  CHECK_EQ(g.r[1].pid, 8);
  CHECK_EQ(g.r[2].time, 12);

  /* found is optional. */
  write_text("pg3.csv", "seq,pid,rel,fork,block\n1,5,10,0,1\n");
  g = read_trace("pg3.csv", NULL);
  CHECK_OK(g.st);
  REQUIRE(g.n == 1);
  CHECK(g.pids);
  CHECK(!g.found);
  CHECK_EQ(g.r[0].found, -1);
  CHECK_EQ(g.r[0].pid, 5);

  /* An id column wins over rel and block. */
  write_text("pg4.csv", "obj_id,rel,block\n77,1,2\n");
  g = read_trace("pg4.csv", NULL);
  CHECK_OK(g.st);
  REQUIRE(g.n == 1);
  CHECK_EQ(g.r[0].id, 77);
  CHECK(!g.pids);
}

static void test_bad_rows(void) {
  static const struct {
    const char *row, *want;
  } cases[] = {
      {"1,9,16384,0,268435456,t\n", "line 2: bad block \"268435456\" in column 5 (want a block "
                                    "number below 2^28"},
      {"1,9,16384,0,7,maybe\n", "line 2: bad found \"maybe\" in column 6 (want t, f, true"},
      {"1,9,16384,16,7,t\n", "line 2: bad fork \"16\" in column 4"},
      {"1,4294967296,16384,0,7,t\n", "line 2: bad pid \"4294967296\" in column 2"},
      {"1,9,4294967296,0,7,t\n", "line 2: bad rel \"4294967296\" in column 3"},
      {"1,9,x,0,7,t\n", "line 2: bad rel \"x\" in column 3"},
      {"1,9,16384,0,7,\n", "line 2: bad found \"\" in column 6"},
      {"1,9,16384,0\n", "line 2: missing column 5 (block); the line has 4"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[256];
    snprintf(text, sizeof text, "seq,pid,rel,fork,block,found\n%s2,9,16384,0,8,f\n", cases[i].row);
    write_text("bad.csv", text);
    read_result g = read_trace("bad.csv", NULL);
    CHECK_EQ(g.st, HS_ERR_CORRUPT);
    CHECK_CONTAINS(g.msg, cases[i].want);
    CHECK_CONTAINS(g.msg, "bad.csv: ");
    hs_trace_options o = {.skip_bad = true};
    g = read_trace("bad.csv", &o);
    CHECK_OK(g.st);
    CHECK_EQ(g.bad, 1);
    CHECK_CONTAINS(g.msg, cases[i].want);
    REQUIRE(g.n == 1);
    CHECK(g.r[0].id == hs_pg_page_id(16384, 0, 8));
  }
}

static void test_spec(void) {
  hs_csv_spec sp = {0};
  CHECK_OK(hs_csv_spec_parse("block=2,rel=1,fork=3,pid=4,found=5,time=6", &sp));
  CHECK_EQ(sp.rel_col, 1);
  CHECK_EQ(sp.block_col, 2);
  CHECK_EQ(sp.fork_col, 3);
  CHECK_EQ(sp.pid_col, 4);
  CHECK_EQ(sp.found_col, 5);
  CHECK_EQ(sp.id_col, 0);
  write_text("pg.txt", "16384 7 0 11 t 100\n16384 7 2 12 f 101\n");
  sp.delimiter = ' ';
  hs_trace_options o = {.format = HS_TRACE_CSV, .csv = sp};
  read_result g = read_trace("pg.txt", &o);
  CHECK_OK(g.st);
  REQUIRE(g.n == 2);
  CHECK(g.pids && g.found);
  CHECK(g.r[0].id == hs_pg_page_id(16384, 0, 7));
  CHECK(g.r[1].id == hs_pg_page_id(16384, 2, 7));
  CHECK_EQ(g.r[1].pid, 12);
  CHECK_EQ(g.r[1].found, 0);
  CHECK_EQ(g.r[1].time, 101);

  CHECK_OK(hs_csv_spec_parse("id=1,pid=2,found=3", &sp));
  CHECK_EQ(sp.pid_col, 2);
  CHECK_EQ(sp.found_col, 3);

  static const struct {
    const char *spec, *want;
  } bad[] = {
      {"rel=1", "a page needs both rel=COL and block=COL"},
      {"block=1,fork=2", "a page needs both rel=COL and block=COL"},
      {"id=1,rel=2,block=3", "either id=COL or rel=COL,block=COL, not both"},
      {"rel=1,block=2,pid=2", "two roles name the same column"},
      {"id=1,pid=1", "two roles name the same column"},
      {"id=1,found=0", "\"found=0\": the column must be a number from 1 to 4096"},
      {"id=1,pid=2,pid=3", "pid is given twice"},
      {"pid=2", "the id column is missing"},
      {"id=1,hit=2", "unknown item \"hit=2\""},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_csv_spec keep = {.id_col = 99};
    CHECK_ST(hs_csv_spec_parse(bad[i].spec, &keep), HS_ERR_INVALID);
    CHECK_CONTAINS(hs_last_error(), bad[i].want);
    CHECK_EQ(keep.id_col, 99);
  }
  /* A spec filled by hand is held to the same rules. */
  o = (hs_trace_options){.format = HS_TRACE_CSV, .csv = {.rel_col = 1}};
  hs_trace *t;
  CHECK_ST(hs_trace_open(path_of("pg.txt"), &o, &t), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "a page needs both rel=COL and block=COL");
}

/* Formats without the columns say so, and fill pid 0 and found -1. */
static void test_other_formats(void) {
  static const char *const names[] = {"o.oracleGeneral", "o.csv", "o.txt"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    hs_trace_writer *w;
    REQUIRE(hs_trace_writer_open(path_of(names[i]), &w) == HS_OK);
    for (uint32_t k = 0; k < 3; k++) CHECK_OK(hs_trace_write(w, k, 10 + k, 4096, -1));
    CHECK_OK(hs_trace_writer_close(w));
    read_result g = read_trace(names[i], NULL);
    CHECK_OK(g.st);
    REQUIRE(g.n == 3);
    CHECK(!g.pids);
    CHECK(!g.found);
    for (size_t k = 0; k < g.n; k++) {
      CHECK_EQ(g.r[k].pid, 0);
      CHECK_EQ(g.r[k].found, -1);
      CHECK_EQ(g.r[k].id, 10 + k);
    }
  }
}

int main(void) {
  testdir_make(dir, sizeof dir, "trace-pg");
  test_page_id_layout();
  test_header();
  test_bad_rows();
  test_spec();
  test_other_formats();
  testdir_remove(dir);
  return check_finish();
}

/*
 * tests/test_trace.c — the trace reader and writer (sim/trace.h).
 *
 * Every format is written here byte by byte (or with hs_trace_writer) into
 * a fresh temporary directory, read back and compared field by field; each
 * again zstd-compressed (with libzstd, in the test), and again under a name
 * that gives nothing away, so detection by content is exercised too. The
 * error cases check status and message: a truncated record, malformed CSV
 * rows, unknown formats, missing and unreadable files, writes to a full
 * device; skip_bad must count what it skips.
 *
 * Input without end must end the run, not the machine: a text line that
 * never ends (/dev/zero, a zstd stream of zeros) fails as soon as it
 * passes the 64 KiB limit, and sim.h's loader stops at its cap on
 * requests. A watchdog alarm turns a reader that hangs into a failure.
 * The writer writes the format a file's name says, which reads back as
 * that format.
 *
 * Last, the CloudPhysics sample trace shipped in four encodings (found
 * by tests/support/traces_dir.h's rule from the repository given as argv[1]) must
 * read as the same 113,872 ids in all four, and oraclegeneral's next-access
 * times must agree with that id sequence. Files big enough to cross the
 * reader's 1 MiB window (with records straddling it) are used throughout,
 * since that boundary is where a buffered reader goes wrong; and then
 * every file once more through windows of a few bytes (the reader's test
 * knob), which must change nothing, results nor errors.
 */
#include "check.h"
#include "sim/sim.h"
#include "sim/trace.h"
#include "sim/trace_internal.h" /* trace_window_size */
#include "testdir.h"
#include "traces_dir.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

static char dir[PATH_MAX - 64];

/* ---- helpers ------------------------------------------------------------ */

static const char *path_of(const char *name) {
  static char buf[4][PATH_MAX];
  static unsigned next;
  char *p = buf[next++ % 4];
  snprintf(p, PATH_MAX, "%s/%s", dir, name);
  return p;
}

static void write_file(const char *name, const void *data, size_t len) {
  FILE *f = fopen(path_of(name), "wb");
  REQUIRE(f != NULL);
  REQUIRE(fwrite(data, 1, len, f) == len);
  REQUIRE(fclose(f) == 0);
}

static void write_text(const char *name, const char *text) {
  write_file(name, text, strlen(text));
}

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  REQUIRE(f != NULL);
  REQUIRE(fseek(f, 0, SEEK_END) == 0);
  long n = ftell(f);
  REQUIRE(n >= 0);
  rewind(f);
  unsigned char *p = malloc((size_t)n + 1);
  REQUIRE(p != NULL);
  REQUIRE(fread(p, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return p;
}

/* Writes `to` (in the test directory) as the zstd compression of `from`. */
static void compress_file(const char *from, const char *to) {
  size_t n;
  unsigned char *src = slurp(path_of(from), &n);
  size_t cap = ZSTD_compressBound(n);
  unsigned char *dst = malloc(cap);
  REQUIRE(dst != NULL);
  size_t z = ZSTD_compress(dst, cap, src, n, 3);
  REQUIRE(!ZSTD_isError(z));
  write_file(to, dst, z);
  free(src);
  free(dst);
}

typedef struct reqs {
  hs_request *r;
  size_t n, cap;
} reqs;

/* Reads a whole trace, alternating batch sizes (1 via hs_trace_next, 7,
 * 4096) so that every path of the batch API gets used; returns the status
 * of the first failed call (requests before it are kept). */
static hs_status read_all(const char *path, const hs_trace_options *o, reqs *out,
                          hs_trace_format *fmt, char *reason, size_t reason_len) {
  memset(out, 0, sizeof *out);
  hs_trace *t;
  hs_status st = hs_trace_open(path, o, &t);
  if (st != HS_OK) {
    CHECK(t == NULL);
    return st;
  }
  if (fmt) *fmt = hs_trace_format_of(t);
  if (reason) snprintf(reason, reason_len, "%s", hs_trace_format_reason(t));
  static const size_t batches[] = {4096, 1, 7, 4096, 4096};
  uint64_t last_bytes = 0;
  for (unsigned round = 0;; round++) {
    size_t want = batches[round % 5];
    if (out->n + want > out->cap) {
      out->cap = (out->n + want) * 2;
      out->r = realloc(out->r, out->cap * sizeof *out->r);
      REQUIRE(out->r != NULL);
    }
    size_t n = 0;
    if (want == 1) {
      bool got;
      st = hs_trace_next(t, out->r + out->n, &got);
      n = got;
    } else {
      st = hs_trace_read(t, out->r + out->n, want, &n);
    }
    CHECK(n <= want);
    out->n += n;
    uint64_t bytes = hs_trace_bytes_read(t);
    CHECK(bytes >= last_bytes);
    last_bytes = bytes;
    if (st != HS_OK || n < want) break;
  }
  if (st == HS_OK) {
    /* At the end every byte was consumed, and the end stays the end. */
    if (hs_trace_file_size(t)) CHECK_EQ(hs_trace_bytes_read(t), hs_trace_file_size(t));
    size_t n = 99;
    hs_request r;
    CHECK_OK(hs_trace_read(t, &r, 1, &n));
    CHECK_EQ(n, 0);
  }
  hs_trace_close(t);
  return st;
}

static hs_trace_options opts(hs_trace_format f) {
  return (hs_trace_options){.format = f};
}

static void put16(unsigned char *p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* ---- names, options, specs ---------------------------------------------- */

static void test_format_names(void) {
  hs_trace_format f;
  CHECK(hs_trace_format_parse("oracleGeneral", &f) && f == HS_TRACE_ORACLEGENERAL);
  CHECK(hs_trace_format_parse("oraclegeneral", &f) && f == HS_TRACE_ORACLEGENERAL);
  CHECK(hs_trace_format_parse("vscsi", &f) && f == HS_TRACE_VSCSI);
  CHECK(hs_trace_format_parse("csv", &f) && f == HS_TRACE_CSV);
  CHECK(hs_trace_format_parse("txt", &f) && f == HS_TRACE_TXT);
  CHECK(hs_trace_format_parse("auto", &f) && f == HS_TRACE_AUTO);
  CHECK(!hs_trace_format_parse("parquet", &f));
  CHECK(!hs_trace_format_parse("", &f));
  CHECK(!hs_trace_format_parse(NULL, &f));
  CHECK(strcmp(hs_trace_format_name(HS_TRACE_ORACLEGENERAL), "oraclegeneral") == 0);
  CHECK(strcmp(hs_trace_format_name(HS_TRACE_VSCSI), "vscsi") == 0);
  CHECK(strcmp(hs_trace_format_name(HS_TRACE_CSV), "csv") == 0);
  CHECK(strcmp(hs_trace_format_name(HS_TRACE_TXT), "txt") == 0);
  CHECK(strcmp(hs_trace_format_name(HS_TRACE_AUTO), "auto") == 0);
  CHECK(strcmp(hs_trace_format_name((hs_trace_format)42), "unknown") == 0);
}

static void spec_fails(const char *s, const char *needle) {
  hs_csv_spec sp = {.id_col = 77};
  CHECK_ST(hs_csv_spec_parse(s, &sp), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), needle);
  CHECK_EQ(sp.id_col, 77); /* untouched on failure */
}

static void test_csv_spec(void) {
  hs_csv_spec sp;
  CHECK_OK(hs_csv_spec_parse("id=5,size=4,time=2,header", &sp));
  CHECK_EQ(sp.id_col, 5);
  CHECK_EQ(sp.size_col, 4);
  CHECK_EQ(sp.time_col, 2);
  CHECK(sp.header);
  CHECK_EQ(sp.delimiter, ',');
  CHECK_OK(hs_csv_spec_parse("id=1", &sp));
  CHECK_EQ(sp.id_col, 1);
  CHECK_EQ(sp.size_col, 0);
  CHECK_EQ(sp.time_col, 0);
  CHECK(!sp.header);
  CHECK_OK(hs_csv_spec_parse("time=3,id=2,delimiter=tab", &sp));
  CHECK_EQ(sp.delimiter, '\t');
  CHECK_EQ(sp.id_col, 2);
  CHECK_EQ(sp.time_col, 3);
  CHECK_OK(hs_csv_spec_parse("id=1,delimiter=space", &sp));
  CHECK_EQ(sp.delimiter, ' ');
  CHECK_OK(hs_csv_spec_parse("id=1,delimiter=comma", &sp));
  CHECK_EQ(sp.delimiter, ',');
  CHECK_OK(hs_csv_spec_parse("id=1,delimiter=semicolon", &sp));
  CHECK_EQ(sp.delimiter, ';');
  CHECK_OK(hs_csv_spec_parse("id=1,delimiter=|", &sp));
  CHECK_EQ(sp.delimiter, '|');
  CHECK_OK(hs_csv_spec_parse("id=4096", &sp));

  spec_fails("", "empty item");
  spec_fails("size=2", "id column is missing");
  spec_fails("id=0", "from 1 to 4096");
  spec_fails("id=4097", "from 1 to 4096");
  spec_fails("id=x", "\"id=x\"");
  spec_fails("id=", "from 1 to 4096");
  spec_fails("id", "from 1 to 4096");
  spec_fails("id=-1", "from 1 to 4096");
  spec_fails("id=1,id=2", "id is given twice");
  spec_fails("id=1,size=2,size=3", "size is given twice");
  spec_fails("id=1,szie=4", "unknown item \"szie=4\"");
  spec_fails("id=1,,size=2", "empty item");
  spec_fails("id=1,", "empty item");
  spec_fails("id=1,delimiter=ab", "delimiter must be");
  spec_fails("id=1,delimiter=\"", "delimiter must be");
  spec_fails("id=1,delimiter=", "delimiter must be");
  spec_fails("id=1,delimiter=tab,delimiter=space", "given twice");
  spec_fails("id=1,header=yes", "header takes no value");
  spec_fails("id=1,size=1", "same column");
  spec_fails(" id=1", "unknown item");
  CHECK_ST(hs_csv_spec_parse(NULL, &sp), HS_ERR_INVALID);
}

/* ---- oraclegeneral ------------------------------------------------------ */

enum { OG_N = 100000 }; /* 2.4 MB: crosses the 1 MiB window, mid-record */

/* Field by field: the struct has padding, which readers need not clear. */
static bool same_request(const hs_request *a, const hs_request *b) {
  return a->id == b->id && a->size == b->size && a->time == b->time && a->next == b->next &&
         a->pid == b->pid && a->found == b->found;
}

static hs_request og_expected(size_t i) {
  hs_request r;
  r.time = (uint32_t)(i / 3);
  r.id = i % 5 == 0 ? UINT64_MAX - i : rnd();
  r.size = i % 7 == 0 ? UINT32_MAX : (uint32_t)(i * 13);
  r.next = i % 4 == 0 ? -1 : (int64_t)(i + 1 + i % 11);
  if (i == 1) r.next = INT64_MAX;
  return r;
}

static void check_og(const reqs *got, const hs_request *want, size_t n) {
  CHECK_EQ(got->n, n);
  size_t bad = 0;
  for (size_t i = 0; i < n && i < got->n; i++) {
    if (got->r[i].id != want[i].id || got->r[i].size != want[i].size ||
        got->r[i].time != want[i].time || got->r[i].next != want[i].next) {
      if (bad++ < 3) fprintf(stderr, "record %zu differs\n", i + 1);
    }
  }
  CHECK_EQ(bad, 0);
}

static void test_oraclegeneral(void) {
  hs_request *want = malloc(OG_N * sizeof *want);
  REQUIRE(want != NULL);
  for (size_t i = 0; i < OG_N; i++) want[i] = og_expected(i);
  const char *names[] = {"og.oracleGeneral", "og.oracleGeneral.zst", "og.bin.zst"};
  for (int k = 0; k < 3; k++) {
    hs_trace_writer *w;
    CHECK_OK(hs_trace_writer_open(path_of(names[k]), &w));
    for (size_t i = 0; i < OG_N; i++)
      CHECK_OK(hs_trace_write(w, (uint32_t)want[i].time, want[i].id, (uint32_t)want[i].size,
                              want[i].next));
    CHECK_OK(hs_trace_writer_close(w));
  }
  /* The plain file is exactly the packed records. */
  size_t len;
  unsigned char *raw = slurp(path_of(names[0]), &len);
  CHECK_EQ(len, (size_t)OG_N * 24);
  CHECK_EQ(raw[4], (unsigned char)want[0].id); /* little-endian id at byte 4 */
  CHECK_EQ(raw[24 + 16], 0xFF);                /* record 2's next: INT64_MAX */
  CHECK_EQ(raw[24 + 23], 0x7F);
  free(raw);
  unsigned char magic[4];
  raw = slurp(path_of(names[1]), &len);
  memcpy(magic, raw, 4);
  CHECK(len < (size_t)OG_N * 24);
  CHECK(magic[0] == 0x28 && magic[1] == 0xB5 && magic[2] == 0x2F && magic[3] == 0xFD);
  free(raw);

  for (int k = 0; k < 3; k++) {
    reqs got;
    hs_trace_format f;
    char why[320];
    hs_trace_options o = opts(HS_TRACE_AUTO);
    CHECK_OK(read_all(path_of(names[k]), &o, &got, &f, why, sizeof why));
    CHECK_EQ(f, HS_TRACE_ORACLEGENERAL);
    CHECK_CONTAINS(why, "from the name");
    if (k > 0) CHECK_CONTAINS(why, "zstd-compressed");
    check_og(&got, want, OG_N);
    free(got.r);
    o = opts(HS_TRACE_ORACLEGENERAL);
    CHECK_OK(read_all(path_of(names[k]), &o, &got, &f, why, sizeof why));
    CHECK_CONTAINS(why, "oraclegeneral as given");
    check_og(&got, want, OG_N);
    free(got.r);
  }

  /* An empty trace is an empty trace, plain or compressed. */
  hs_trace_writer *w;
  CHECK_OK(hs_trace_writer_open(path_of("empty.oracleGeneral.zst"), &w));
  CHECK_OK(hs_trace_writer_close(w));
  write_file("empty.bin", "", 0);
  reqs got;
  hs_trace_options o = opts(HS_TRACE_AUTO);
  CHECK_OK(read_all(path_of("empty.oracleGeneral.zst"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 0);
  free(got.r);
  CHECK_OK(read_all(path_of("empty.bin"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 0);
  free(got.r);
  free(want);
}

/* ---- vscsi -------------------------------------------------------------- */

/* n records of version `v` (1 or 2); lbn, len and ts derive from i. */
static unsigned char *vscsi_bytes(int v, size_t n, size_t *len) {
  size_t size = v == 1 ? 32 : 40;
  unsigned char *p = calloc(n, size);
  REQUIRE(p != NULL);
  for (size_t i = 0; i < n; i++) {
    unsigned char *r = p + i * size;
    uint64_t lbn = i * 2654435761u % 1000003, ts = 5633898368802ull + i * 1000;
    uint32_t rlen = (uint32_t)(512 * (1 + i % 16));
    if (v == 1) {
      put32(r, (uint32_t)(0x80000000u + i)); /* sn */
      put32(r + 4, rlen);
      put32(r + 8, 1); /* nSG */
      put16(r + 12, 0x2a);
      put16(r + 14, 0x0100);
    } else {
      put16(r, 0x28);
      put16(r + 2, 0x0200);
      put32(r + 4, (uint32_t)(0x02000000u + i)); /* sn */
      put32(r + 8, rlen);
      put32(r + 12, 2);
      put64(r + 32, 77); /* rt */
    }
    put64(r + 16, lbn);
    put64(r + 24, ts);
  }
  *len = n * size;
  return p;
}

static void check_vscsi(const reqs *got, size_t n) {
  CHECK_EQ(got->n, n);
  size_t bad = 0;
  for (size_t i = 0; i < n && i < got->n; i++) {
    const hs_request *r = got->r + i;
    if (r->id != i * 2654435761u % 1000003 || r->size != 512 * (1 + i % 16) ||
        r->time != 5633898368802ull + i * 1000 || r->next != HS_TRACE_NO_NEXT)
      bad++;
  }
  CHECK_EQ(bad, 0);
}

static void test_vscsi(void) {
  enum { N = 60000 }; /* v1 1.9 MB, v2 2.4 MB (straddling the window) */
  for (int v = 1; v <= 2; v++) {
    size_t len;
    unsigned char *p = vscsi_bytes(v, N, &len);
    char plain[64], zst[64], bare[64], bare_zst[64];
    snprintf(plain, sizeof plain, "v%d.vscsi", v);
    snprintf(zst, sizeof zst, "v%d.vscsi.zst", v);
    snprintf(bare, sizeof bare, "v%d-trace", v);
    snprintf(bare_zst, sizeof bare_zst, "v%d-trace-z", v);
    write_file(plain, p, len);
    write_file(bare, p, len);
    compress_file(plain, zst);
    compress_file(plain, bare_zst);
    const char *names[] = {plain, zst, bare, bare_zst};
    for (int k = 0; k < 4; k++) {
      reqs got;
      hs_trace_format f;
      char why[320], want_v[32];
      hs_trace_options o = opts(HS_TRACE_AUTO);
      CHECK_OK(read_all(path_of(names[k]), &o, &got, &f, why, sizeof why));
      CHECK_EQ(f, HS_TRACE_VSCSI);
      snprintf(want_v, sizeof want_v, "vscsi (v%d)", v);
      CHECK_CONTAINS(why, want_v);
      CHECK_CONTAINS(why, k < 2 ? "from the name" : "from the content");
      if (k % 2) CHECK_CONTAINS(why, "zstd-compressed");
      check_vscsi(&got, N);
      free(got.r);
    }
    free(p);
  }

  /* A first record of neither version: the error names what it holds. */
  size_t len;
  unsigned char *p = vscsi_bytes(1, 4, &len);
  put16(p + 14, 0x0300);
  write_file("v3.vscsi", p, len);
  hs_trace *t = (hs_trace *)1;
  hs_trace_options o = opts(HS_TRACE_AUTO);
  CHECK_ST(hs_trace_open(path_of("v3.vscsi"), &o, &t), HS_ERR_CORRUPT);
  CHECK(t == NULL);
  CHECK_CONTAINS(hs_last_error(), "v3.vscsi: record 1: not vscsi");
  CHECK_CONTAINS(hs_last_error(), "0x0300 (version 3)");

  /* A record whose version differs from the first one's is bad. */
  put16(p + 14, 0x0100);
  put16(p + 2 * 32 + 14, 0x0200);
  write_file("mixed.vscsi", p, len);
  reqs got;
  CHECK_ST(read_all(path_of("mixed.vscsi"), &o, &got, NULL, NULL, 0), HS_ERR_CORRUPT);
  CHECK_EQ(got.n, 2);
  CHECK_CONTAINS(hs_last_error(), "mixed.vscsi: record 3: vscsi version 2, but the first");
  free(got.r);
  o.skip_bad = true;
  CHECK_OK(read_all(path_of("mixed.vscsi"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 3);
  if (got.n == 3) CHECK_EQ(got.r[2].id, (size_t)3 * 2654435761u % 1000003);
  free(got.r);
  free(p);
}

/* ---- truncated records -------------------------------------------------- */

static void test_truncated(void) {
  /* 10 whole oraclegeneral records and 5 bytes of an 11th. */
  unsigned char buf[10 * 24 + 5];
  for (size_t i = 0; i < 10; i++) {
    put32(buf + i * 24, (uint32_t)i);
    put64(buf + i * 24 + 4, 1000 + i);
    put32(buf + i * 24 + 12, 1);
    put64(buf + i * 24 + 16, (uint64_t)-1);
  }
  memset(buf + 240, 0xAB, 5);
  write_file("cut.oracleGeneral", buf, sizeof buf);
  compress_file("cut.oracleGeneral", "cut.oracleGeneral.zst");
  const char *names[] = {"cut.oracleGeneral", "cut.oracleGeneral.zst"};
  for (int k = 0; k < 2; k++) {
    hs_trace *t;
    hs_trace_options o = opts(HS_TRACE_AUTO);
    REQUIRE(hs_trace_open(path_of(names[k]), &o, &t) == HS_OK);
    hs_request r[32];
    size_t n = 99;
    CHECK_ST(hs_trace_read(t, r, 32, &n), HS_ERR_CORRUPT);
    CHECK_EQ(n, 10); /* the good records before the bad one are delivered */
    CHECK_CONTAINS(hs_last_error(), names[k]);
    CHECK_CONTAINS(hs_last_error(), ": record 11: truncated (got 5 of 24 bytes)");
    CHECK_EQ(r[9].id, 1009);
    /* Sticky: reading on fails the same way. */
    bool got;
    CHECK_ST(hs_trace_next(t, r, &got), HS_ERR_CORRUPT);
    CHECK(!got);
    CHECK_CONTAINS(hs_last_error(), "record 11: truncated");
    CHECK_EQ(hs_trace_bad_records(t), 0);
    hs_trace_close(t);

    o.skip_bad = true;
    REQUIRE(hs_trace_open(path_of(names[k]), &o, &t) == HS_OK);
    CHECK_OK(hs_trace_read(t, r, 32, &n));
    CHECK_EQ(n, 10);
    CHECK_EQ(hs_trace_bad_records(t), 1);
    CHECK_CONTAINS(hs_trace_first_bad(t), "record 11: truncated (got 5 of 24 bytes)");
    hs_trace_close(t);
  }

  /* vscsi: 3 records and 20 bytes of a fourth; and a file shorter than
   * one record. */
  size_t len;
  unsigned char *p = vscsi_bytes(1, 4, &len);
  write_file("cut.vscsi", p, len - 12);
  write_file("tiny.vscsi", p, 20);
  reqs got;
  hs_trace_options o = opts(HS_TRACE_AUTO);
  CHECK_ST(read_all(path_of("cut.vscsi"), &o, &got, NULL, NULL, 0), HS_ERR_CORRUPT);
  CHECK_EQ(got.n, 3);
  CHECK_CONTAINS(hs_last_error(), "record 4: truncated (got 20 of 32 bytes)");
  free(got.r);
  hs_trace *t;
  CHECK_ST(hs_trace_open(path_of("tiny.vscsi"), &o, &t), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "tiny.vscsi: record 1: truncated (got 20 of 32 bytes)");
  o.skip_bad = true;
  CHECK_OK(read_all(path_of("cut.vscsi"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 3);
  free(got.r);
  REQUIRE(hs_trace_open(path_of("tiny.vscsi"), &o, &t) == HS_OK);
  CHECK_EQ(hs_trace_bad_records(t), 1);
  size_t n;
  hs_request r;
  CHECK_OK(hs_trace_read(t, &r, 1, &n));
  CHECK_EQ(n, 0);
  hs_trace_close(t);
  free(p);

  /* A zstd stream cut inside its frame is an error, not a short trace,
   * even with skip_bad (the file itself is broken, not a record). */
  size_t zlen;
  unsigned char *z = slurp(path_of("og.oracleGeneral.zst"), &zlen);
  write_file("cutz.oracleGeneral.zst", z, zlen / 2);
  for (int skip = 0; skip < 2; skip++) {
    o = opts(HS_TRACE_AUTO);
    o.skip_bad = skip;
    CHECK_ST(read_all(path_of("cutz.oracleGeneral.zst"), &o, &got, NULL, NULL, 0), HS_ERR_CORRUPT);
    CHECK(got.n < OG_N);
    CHECK_CONTAINS(hs_last_error(), "cutz.oracleGeneral.zst: zstd: truncated");
    free(got.r);
  }
  /* Garbage after a valid frame. */
  unsigned char *zg = malloc(zlen + 16);
  REQUIRE(zg != NULL);
  memcpy(zg, z, zlen);
  memset(zg + zlen, 0x5A, 16);
  write_file("tail.oracleGeneral.zst", zg, zlen + 16);
  o = opts(HS_TRACE_AUTO);
  CHECK_ST(read_all(path_of("tail.oracleGeneral.zst"), &o, &got, NULL, NULL, 0), HS_ERR_CORRUPT);
  CHECK_EQ(got.n, OG_N);
  CHECK_CONTAINS(hs_last_error(), "tail.oracleGeneral.zst: zstd: ");
  free(got.r);
  /* Two frames back to back are one stream, as with the zstd tool. */
  unsigned char *zz = malloc(2 * zlen);
  REQUIRE(zz != NULL);
  memcpy(zz, z, zlen);
  memcpy(zz + zlen, z, zlen);
  write_file("twice.oracleGeneral.zst", zz, 2 * zlen);
  CHECK_OK(read_all(path_of("twice.oracleGeneral.zst"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 2 * OG_N);
  free(got.r);
  free(zz);
  free(zg);
  free(z);
}

/* ---- txt and csv -------------------------------------------------------- */

/* The id the reader gives a line of txt: the way to learn a hashed id. */
static uint64_t txt_id(const char *text) {
  write_text("one.txt", text);
  reqs got;
  hs_trace_options o = opts(HS_TRACE_AUTO);
  CHECK_OK(read_all(path_of("one.txt"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 1);
  uint64_t id = got.n ? got.r[0].id : 0;
  free(got.r);
  return id;
}

static void test_txt(void) {
  const char *text = "42\r\n"
                     "0x1F\n"
                     "\n"
                     "  7  \n"
                     "obj-a\n"
                     "\t\n"
                     "18446744073709551615\n"
                     "18446744073709551616\n"
                     "-5\n"
                     "0x\n"
                     "obj-a"; /* no final newline */
  write_text("ids.txt", text);
  write_text("ids-noext", text);
  compress_file("ids.txt", "ids.txt.zst");
  compress_file("ids.txt", "ids-noext-z");
  const char *names[] = {"ids.txt", "ids-noext", "ids.txt.zst", "ids-noext-z"};
  for (int k = 0; k < 4; k++) {
    reqs got;
    hs_trace_format f;
    char why[320];
    hs_trace_options o = opts(HS_TRACE_AUTO);
    CHECK_OK(read_all(path_of(names[k]), &o, &got, &f, why, sizeof why));
    CHECK_EQ(f, HS_TRACE_TXT);
    CHECK_CONTAINS(why, k % 2 ? "from the content" : "from the name (.txt)");
    REQUIRE(got.n == 9);
    CHECK_EQ(got.r[0].id, 42);
    CHECK_EQ(got.r[1].id, 0x1F);
    CHECK_EQ(got.r[2].id, 7);
    CHECK(got.r[3].id > 0xFFFFFFFFull); /* hashed: spread over 64 bits */
    CHECK(got.r[4].id == UINT64_MAX);
    CHECK(got.r[5].id != 0 && got.r[5].id != UINT64_MAX); /* too big: hashed */
    CHECK(got.r[6].id != 5 && got.r[6].id != (uint64_t)-5);
    CHECK(got.r[7].id != 0);
    CHECK(got.r[8].id == got.r[3].id); /* same text, same id */
    for (size_t i = 0; i < got.n; i++) {
      CHECK_EQ(got.r[i].size, 1);
      CHECK_EQ(got.r[i].time, i + 1);
      CHECK_EQ(got.r[i].next, HS_TRACE_NO_NEXT);
    }
    free(got.r);
  }
  /* Ids that differ in one byte get unrelated ids. */
  uint64_t a = txt_id("key1\n"), b = txt_id("key2\n");
  CHECK(a != b);
  CHECK(__builtin_popcountll(a ^ b) > 10);
}

static void test_csv(void) {
  uint64_t quoted_id = txt_id("a\"b,c\n");
  uint64_t obj_x = txt_id("obj-x\n");
  /* Quoting, CRLF, blank lines, spaces around fields, hex ids, a time
   * with a fraction, a size column after the id. */
  const char *text = "ts,key,bytes\r\n"
                     "1,100,4096\r\n"
                     "\r\n"
                     "2, 0x10 ,\"512\"\n"
                     "3.75,\"a\"\"b,c\",7\n"
                     "  4 , \"obj-x\" , 0 \n"
                     "5,obj-x,18446744073709551615";
  write_text("rows.csv", text);
  compress_file("rows.csv", "rows.csv.zst");
  write_text("rows-noext", text);
  compress_file("rows.csv", "rows-noext-z");
  const char *names[] = {"rows.csv", "rows.csv.zst", "rows-noext", "rows-noext-z"};
  for (int k = 0; k < 4; k++) {
    reqs got;
    hs_trace_format f;
    char why[320];
    hs_trace_options o = opts(HS_TRACE_AUTO);
    CHECK_OK(hs_csv_spec_parse("id=2,size=3,time=1,header", &o.csv));
    CHECK_OK(read_all(path_of(names[k]), &o, &got, &f, why, sizeof why));
    CHECK_EQ(f, HS_TRACE_CSV);
    if (k >= 2) CHECK_CONTAINS(why, "a CSV spec was given");
    REQUIRE(got.n == 5);
    CHECK_EQ(got.r[0].id, 100);
    CHECK_EQ(got.r[0].size, 4096);
    CHECK_EQ(got.r[0].time, 1);
    CHECK_EQ(got.r[1].id, 16);
    CHECK_EQ(got.r[1].size, 512);
    CHECK(got.r[2].id == quoted_id);
    CHECK_EQ(got.r[2].time, 3);
    CHECK_EQ(got.r[2].size, 7);
    CHECK(got.r[3].id == obj_x);
    CHECK_EQ(got.r[3].size, 0);
    CHECK_EQ(got.r[3].time, 4);
    CHECK(got.r[4].id == obj_x);
    CHECK(got.r[4].size == UINT64_MAX);
    CHECK_EQ(got.r[4].next, HS_TRACE_NO_NEXT);
    free(got.r);

    /* Without a spec the header names the columns (bytes is a size). */
    o = opts(HS_TRACE_AUTO);
    CHECK_OK(read_all(path_of(names[k]), &o, &got, &f, why, sizeof why));
    CHECK_EQ(f, HS_TRACE_CSV);
    CHECK_CONTAINS(why, "columns from the header: id=2 size=3 time=1");
    CHECK_EQ(got.n, 5);
    if (got.n == 5) CHECK_EQ(got.r[1].size, 512);
    free(got.r);
  }

  /* Other delimiters; without a time column the time is the request
   * number; without a size column the size is 1. */
  write_text("tab.tsv", "a\t11\t5\nb\t12\t6\n");
  write_text("space.dat", "  11   5 \n12 6\n");
  write_text("semi.csv", "11;5\n12;6\n");
  const struct {
    const char *file, *spec;
  } delims[] = {{"tab.tsv", "id=2,size=3,delimiter=tab"},
                {"space.dat", "id=1,size=2,delimiter=space"},
                {"semi.csv", "id=1,delimiter=;"}};
  for (int k = 0; k < 3; k++) {
    reqs got;
    hs_trace_options o = opts(HS_TRACE_CSV);
    CHECK_OK(hs_csv_spec_parse(delims[k].spec, &o.csv));
    CHECK_OK(read_all(path_of(delims[k].file), &o, &got, NULL, NULL, 0));
    REQUIRE(got.n == 2);
    CHECK_EQ(got.r[0].id, 11);
    CHECK_EQ(got.r[1].id, 12);
    CHECK_EQ(got.r[0].size, k == 2 ? 1 : 5);
    CHECK_EQ(got.r[1].size, k == 2 ? 1 : 6);
    CHECK_EQ(got.r[0].time, 1);
    CHECK_EQ(got.r[1].time, 2);
    free(got.r);
  }

  /* Header variants: quoted names, obj_id preferred over id, no size. */
  write_text("hdr.csv", "\"id\",\"obj_id\",timestamp\n1,2,3\n");
  reqs got;
  char why[320];
  hs_trace_options o = opts(HS_TRACE_AUTO);
  CHECK_OK(read_all(path_of("hdr.csv"), &o, &got, NULL, why, sizeof why));
  CHECK_CONTAINS(why, "id=2 time=3");
  CHECK_EQ(got.n, 1);
  if (got.n) CHECK_EQ(got.r[0].id, 2);
  free(got.r);
  /* No spec and no header: ask for one. */
  write_text("nohdr.csv", "1,2,3\n4,5,6\n");
  hs_trace *t;
  CHECK_ST(hs_trace_open(path_of("nohdr.csv"), &o, &t), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "nohdr.csv: no CSV columns given");
  CHECK_CONTAINS(hs_last_error(), "--csv");
  o = opts(HS_TRACE_CSV);
  CHECK_ST(hs_trace_open(path_of("nohdr.csv"), &o, &t), HS_ERR_INVALID);
  /* An empty csv is an empty trace. */
  write_text("none.csv", "");
  o = opts(HS_TRACE_AUTO);
  CHECK_OK(read_all(path_of("none.csv"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 0);
  free(got.r);
  /* A hand-filled spec is checked like a parsed one. */
  o = opts(HS_TRACE_CSV);
  o.csv.id_col = 5000;
  CHECK_ST(hs_trace_open(path_of("nohdr.csv"), &o, &t), HS_ERR_INVALID);
  o.csv = (hs_csv_spec){.id_col = 2, .delimiter = '"'};
  CHECK_ST(hs_trace_open(path_of("nohdr.csv"), &o, &t), HS_ERR_INVALID);
  o.csv = (hs_csv_spec){.id_col = 2}; /* delimiter 0: a comma */
  CHECK_OK(read_all(path_of("nohdr.csv"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 2);
  if (got.n == 2) CHECK_EQ(got.r[1].id, 5);
  free(got.r);
}

/* One malformed row after a good one: the error names file, line and
 * problem; with skip_bad the row is skipped and counted. */
static void bad_row(const char *row, const char *spec, const char *needle) {
  char *text = malloc(strlen(row) + 64);
  REQUIRE(text != NULL);
  sprintf(text, "1,1,1\n\n%s\n3,3,3\n", row);
  write_text("bad.csv", text);
  free(text);
  hs_trace_options o = opts(HS_TRACE_AUTO);
  CHECK_OK(hs_csv_spec_parse(spec, &o.csv));
  reqs got;
  CHECK_ST(read_all(path_of("bad.csv"), &o, &got, NULL, NULL, 0), HS_ERR_CORRUPT);
  CHECK_EQ(got.n, 1);
  CHECK_CONTAINS(hs_last_error(), "bad.csv: line 3: ");
  CHECK_CONTAINS(hs_last_error(), needle);
  CHECK(strchr(hs_last_error(), '\n') == NULL);
  free(got.r);
  o.skip_bad = true;
  hs_trace *t;
  REQUIRE(hs_trace_open(path_of("bad.csv"), &o, &t) == HS_OK);
  hs_request r[8];
  size_t n;
  CHECK_OK(hs_trace_read(t, r, 8, &n));
  CHECK_EQ(n, 2);
  if (n == 2) CHECK_EQ(r[1].id, 3);
  CHECK_EQ(hs_trace_bad_records(t), 1);
  CHECK_CONTAINS(hs_trace_first_bad(t), "line 3: ");
  CHECK_CONTAINS(hs_trace_first_bad(t), needle);
  hs_trace_close(t);
}

static void test_csv_errors(void) {
  bad_row("2,20", "id=1,size=2,time=3", "missing column 3 (time); the line has 2");
  bad_row("2", "id=1,size=2,time=3", "missing column 2 (size); the line has 1");
  bad_row("2,20", "id=3,time=1", "missing column 3 (id)");
  bad_row("2,-20,200", "id=1,size=2", "bad size \"-20\" in column 2");
  bad_row("2,abc,200", "id=1,size=2", "bad size \"abc\" in column 2");
  bad_row("2,,200", "id=1,size=2", "bad size \"\" in column 2");
  bad_row("2,1.5,200", "id=1,size=2", "bad size \"1.5\"");
  bad_row("2,99999999999999999999,200", "id=1,size=2", "bad size");
  bad_row("2,\"2\"\"0\",200", "id=1,size=2", "bad size");
  bad_row("2,20,x", "id=1,time=3", "bad time \"x\" in column 3");
  bad_row("2,20,1.2.3", "id=1,time=3", "bad time");
  bad_row(",20,200", "id=1", "column 1 (id) is empty");
  bad_row("\"\",20,200", "id=1", "column 1 (id) is empty");
  bad_row("\"2,20,200", "id=1", "column 1: unclosed quote");
  bad_row("\"2\"x,20,200", "id=1", "column 1: text after a closing quote");
  bad_row("2,20,\x01\x02", "id=1,time=3", "bad time \"??\"");
  /* A row naming a column far out: the shown value is cut short. */
  char big[200];
  memset(big, 'z', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  char row[256];
  snprintf(row, sizeof row, "2,%s,1", big);
  bad_row(row, "id=1,size=2", "zzz...\" in column 2");

  /* A line over 64 KiB, in the middle of a file bigger than the window,
   * and at its very end (no newline). */
  size_t big_len = 3u << 20;
  char *text = malloc(big_len + 1);
  REQUIRE(text != NULL);
  size_t pos = 0, lines = 0;
  while (pos < (1u << 20)) pos += (size_t)sprintf(text + pos, "%zu,1\n", lines++);
  size_t long_line = lines + 1;
  memset(text + pos, '9', 70000);
  pos += 70000;
  text[pos++] = '\n';
  size_t after = 0;
  while (pos < (2u << 20)) pos += (size_t)sprintf(text + pos, "%zu,1\n", 1000000 + after++);
  text[pos] = '\0';
  write_file("long.csv", text, pos);
  hs_trace_options o = opts(HS_TRACE_AUTO);
  CHECK_OK(hs_csv_spec_parse("id=1,size=2", &o.csv));
  reqs got;
  char needle[64];
  snprintf(needle, sizeof needle, "long.csv: line %zu: line too long (more than 65536 bytes)",
           long_line);
  CHECK_ST(read_all(path_of("long.csv"), &o, &got, NULL, NULL, 0), HS_ERR_CORRUPT);
  CHECK_EQ(got.n, lines);
  CHECK_CONTAINS(hs_last_error(), needle);
  free(got.r);
  o.skip_bad = true;
  CHECK_OK(read_all(path_of("long.csv"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, lines + after);
  if (got.n == lines + after) CHECK_EQ(got.r[lines].id, 1000000);
  free(got.r);
  /* The same at the end of the file, without a newline, in txt. */
  memset(text, '7', 100000);
  write_file("long-end.txt", text, 100000);
  CHECK_OK(read_all(path_of("long-end.txt"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 0);
  free(got.r);
  o.skip_bad = false;
  CHECK_ST(read_all(path_of("long-end.txt"), &o, &got, NULL, NULL, 0), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "line 1: line too long");
  free(got.r);
  /* Exactly 64 KiB is fine, CR or not. */
  memcpy(text + 65536, "\r\n", 3);
  write_file("max.txt", text, 65538);
  CHECK_OK(read_all(path_of("max.txt"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 1);
  free(got.r);
  free(text);

  /* skip_bad counts every bad row and keeps the first message. */
  write_text("many.csv", "1,1\nx,y\n2,2\n3\n4,4\n,5\n");
  o = opts(HS_TRACE_AUTO);
  o.skip_bad = true;
  CHECK_OK(hs_csv_spec_parse("id=1,size=2", &o.csv));
  hs_trace *t;
  REQUIRE(hs_trace_open(path_of("many.csv"), &o, &t) == HS_OK);
  hs_request r[16];
  size_t n;
  CHECK_OK(hs_trace_read(t, r, 16, &n));
  CHECK_EQ(n, 3);
  CHECK_EQ(hs_trace_bad_records(t), 3);
  CHECK_CONTAINS(hs_trace_first_bad(t), "many.csv: line 2: bad size \"y\"");
  hs_trace_close(t);
}

/* ---- detection, unknown formats, files that cannot be read ------------- */

static void test_detection(void) {
  /* The name wins over the content. */
  write_text("looks.txt", "a,b\n");
  reqs got;
  hs_trace_format f;
  char why[320];
  hs_trace_options o = opts(HS_TRACE_AUTO);
  CHECK_OK(read_all(path_of("looks.txt"), &o, &got, &f, why, sizeof why));
  CHECK_EQ(f, HS_TRACE_TXT);
  CHECK_CONTAINS(why, "guessed txt from the name (.txt)");
  free(got.r);
  /* Suffixes in any case, and the oracleGeneral spelling. */
  write_file("UP.BIN", "", 0);
  write_file("x.oraclegeneral", "", 0);
  write_file("x.oracleGeneral.ZST", "", 0);
  hs_trace *t;
  REQUIRE(hs_trace_open(path_of("UP.BIN"), &o, &t) == HS_OK);
  CHECK_EQ(hs_trace_format_of(t), HS_TRACE_ORACLEGENERAL);
  CHECK(!hs_trace_compressed(t));
  hs_trace_close(t);
  REQUIRE(hs_trace_open(path_of("x.oraclegeneral"), &o, &t) == HS_OK);
  CHECK_EQ(hs_trace_format_of(t), HS_TRACE_ORACLEGENERAL);
  hs_trace_close(t);
  /* Named .zst but not compressed. */
  CHECK_ST(hs_trace_open(path_of("x.oracleGeneral.ZST"), &o, &t), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "does not start with the zstd magic number");
  /* Compressed, but named as if not: the content decides. */
  REQUIRE(hs_trace_open(path_of("og.oracleGeneral.zst"), &o, &t) == HS_OK);
  CHECK(hs_trace_compressed(t));
  hs_trace_close(t);

  /* oraclegeneral by content. */
  size_t len;
  unsigned char *p = slurp(path_of("og.oracleGeneral"), &len);
  write_file("og-noext", p, len);
  CHECK_OK(read_all(path_of("og-noext"), &o, &got, &f, why, sizeof why));
  CHECK_EQ(f, HS_TRACE_ORACLEGENERAL);
  CHECK_CONTAINS(why, "guessed oraclegeneral from the content");
  CHECK_EQ(got.n, OG_N);
  free(got.r);
  free(p);

  /* Unknown content: random bytes, zeros, empty. */
  unsigned char junk[4096];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rnd();
  write_file("junk", junk, sizeof junk);
  memset(junk, 0, sizeof junk);
  write_file("zeros", junk, 170 * 24);
  write_file("nothing", "", 0);
  const char *unknown[] = {"junk", "zeros", "nothing"};
  for (int k = 0; k < 3; k++) {
    t = (hs_trace *)1;
    CHECK_ST(hs_trace_open(path_of(unknown[k]), &o, &t), HS_ERR_INVALID);
    CHECK(t == NULL);
    CHECK_CONTAINS(hs_last_error(), unknown[k]);
    CHECK_CONTAINS(hs_last_error(), "cannot tell the trace format");
    CHECK_CONTAINS(hs_last_error(), "--format");
  }
  /* But any format can be forced on them. */
  o = opts(HS_TRACE_ORACLEGENERAL);
  CHECK_OK(read_all(path_of("zeros"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 170);
  free(got.r);
  o = opts((hs_trace_format)9);
  CHECK_ST(hs_trace_open(path_of("zeros"), &o, &t), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "unknown trace format 9");
  /* NULL options mean auto, no spec, no skipping. */
  CHECK_OK(hs_trace_open(path_of("og-noext"), NULL, &t));
  hs_trace_close(t);
  hs_trace_close(NULL);
}

/* ---- a format that does not fit the content ----------------------------- */

/* Opening `name` as `f` fails with HS_ERR_INVALID naming every needle. */
static void open_fails(const char *name, hs_trace_format f, const char *const *needles) {
  hs_trace *t = (hs_trace *)1;
  hs_trace_options o = opts(f);
  CHECK_ST(hs_trace_open(path_of(name), &o, &t), HS_ERR_INVALID);
  CHECK(t == NULL);
  for (; *needles; needles++) CHECK_CONTAINS(hs_last_error(), *needles);
}

/* n vscsi v1 records whose bytes, read 24 at a time, also pass for
 * oraclegeneral records: every field grows with the record, so the time
 * stamps (sn, ts, lbn, nSG in turn) never decrease and the next-access
 * times (lbn, ts, and fields with a nonzero high half) all lie ahead. */
static unsigned char *vscsi_like_og(size_t n, size_t *len) {
  unsigned char *p = calloc(n, 32);
  REQUIRE(p != NULL);
  for (size_t k = 0; k < n; k++) {
    unsigned char *r = p + k * 32;
    uint32_t f = (uint32_t)(k + 1) * 1000;
    put32(r, f);            /* sn */
    put32(r + 4, 4096);     /* len */
    put32(r + 8, f - 200);  /* nSG */
    put16(r + 12, 0x28);    /* cmd */
    put16(r + 14, 0x0100);  /* version 1 */
    put64(r + 16, f - 100); /* lbn */
    put64(r + 24, f + 1);   /* ts */
  }
  *len = n * 32;
  return p;
}

static void test_format_mismatch(void) {
  /* The two cases: oraclegeneral read as vscsi (a confusing
   * version message before), vscsi read as oraclegeneral (a "truncated"
   * last record after reading the whole file, or no error at all). */
  open_fails("og.oracleGeneral", HS_TRACE_VSCSI,
             (const char *const[]){"og.oracleGeneral: not vscsi",
                                   "it looks like an oraclegeneral trace",
                                   "try --format oraclegeneral or leave --format out", NULL});
  open_fails("v1.vscsi", HS_TRACE_ORACLEGENERAL,
             (const char *const[]){"v1.vscsi: not oraclegeneral", "it looks like a vscsi trace",
                                   "try --format vscsi or leave --format out", NULL});
  open_fails("v2-trace", HS_TRACE_ORACLEGENERAL,
             (const char *const[]){"looks like a vscsi trace (the version field of its 40-byte",
                                   "or leave --format out", NULL});
  open_fails("v1.vscsi.zst", HS_TRACE_ORACLEGENERAL,
             (const char *const[]){"(after zstd decompression)", "--format vscsi", NULL});
  /* Binary read as text, text read as binary. */
  open_fails("og.bin.zst", HS_TRACE_TXT,
             (const char *const[]){"not txt: it is not text", "--format oraclegeneral", NULL});
  open_fails("v1.vscsi", HS_TRACE_CSV, (const char *const[]){"not csv", "--format vscsi", NULL});
  open_fails("ids.txt", HS_TRACE_VSCSI,
             (const char *const[]){"not vscsi", "looks like a txt trace", NULL});
  /* Leaving --format out helps only when the name would not mislead. */
  size_t len;
  unsigned char *og = slurp(path_of("og.oracleGeneral"), &len);
  write_file("og-named.vscsi", og, len);
  hs_trace *t;
  hs_trace_options o = opts(HS_TRACE_ORACLEGENERAL);
  CHECK_OK(hs_trace_open(path_of("og-named.vscsi"), &o, &t)); /* what it is, as given */
  hs_trace_close(t);
  o = opts(HS_TRACE_VSCSI);
  CHECK_ST(hs_trace_open(path_of("og-named.vscsi"), &o, &t), HS_ERR_INVALID);
  CHECK(strstr(hs_last_error(), "leave --format out") == NULL);
  /* A misleading name: the open says so instead of reading records. */
  open_fails("og-named.vscsi", HS_TRACE_AUTO,
             (const char *const[]){"og-named.vscsi: the name says vscsi (.vscsi), but",
                                   "looks like an oraclegeneral trace",
                                   "give --format oraclegeneral", NULL});
  free(og);

  /* The size alone is no mismatch: a truncated trace of the format is
   * still read as it (its last record is the error), and content that
   * fits nothing known is read as given (test_detection's zeros). */
  o = opts(HS_TRACE_ORACLEGENERAL);
  reqs got;
  CHECK_ST(read_all(path_of("cut.oracleGeneral"), &o, &got, NULL, NULL, 0), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "record 11: truncated (got 5 of 24 bytes)");
  CHECK(strstr(hs_last_error(), "looks like") == NULL);
  free(got.r);

  /* Content that passes for both formats is read as given; if that ends
   * in a truncated record, the error says what the start looked like. */
  unsigned char *v = vscsi_like_og(3001, &len); /* 96032 bytes: 4001 records and 8 bytes */
  write_file("ambiguous", v, len);
  compress_file("ambiguous", "ambiguous-z");
  open_fails("ambiguous", HS_TRACE_ORACLEGENERAL,
             (const char *const[]){"its 96032 bytes are no whole number of 24-byte records",
                                   "looks like a vscsi trace", NULL});
  CHECK_ST(read_all(path_of("ambiguous-z"), &o, &got, NULL, NULL, 0), HS_ERR_CORRUPT);
  CHECK_EQ(got.n, 4001);
  CHECK_CONTAINS(hs_last_error(), "record 4002: truncated (got 8 of 24 bytes); the start of the "
                                  "file looks like a vscsi trace: try --format vscsi");
  free(got.r);
  o = opts(HS_TRACE_AUTO);
  CHECK_OK(read_all(path_of("ambiguous-z"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 3001);
  free(got.r);
  free(v);
}

/* ---- text that is not a trace ------------------------------------------ */

static void test_not_a_trace(void) {
  const char *readme = "# Sample traces\n"
                       "\n"
                       "The CloudPhysics block-I/O sample trace, in four encodings.\n";
  write_text("README", readme);
  write_text("README.md", readme);
  compress_file("README", "README-z");
  open_fails("README", HS_TRACE_AUTO,
             (const char *const[]){"README: not a trace: text, but line 1 (\"# Sample traces\") "
                                   "is not an object id",
                                   "--format txt or csv", NULL});
  open_fails("README.md", HS_TRACE_AUTO, (const char *const[]){"not a trace", NULL});
  open_fails("README-z", HS_TRACE_AUTO,
             (const char *const[]){"not a trace (after zstd decompression)", NULL});
  /* Named .txt: the first line that is no id is named, counted as an
   * editor counts (blank lines too). */
  write_text("notes.txt", "42\n\nobj-7\n  padded  \nsee the README for more\n");
  open_fails("notes.txt", HS_TRACE_AUTO,
             (const char *const[]){"notes.txt: not a txt trace (one id per line): line 5 "
                                   "(\"see the README for more\") is not an object id",
                                   "give --format txt to read it anyway", NULL});
  /* A long line is cut in the message. */
  char line[300];
  memset(line, 'w', sizeof line);
  line[10] = ' ';
  line[sizeof line - 1] = '\0';
  write_text("long-words", line);
  open_fails("long-words", HS_TRACE_AUTO, (const char *const[]){"www...\")", NULL});
  /* Given as txt, it is read as told: each line one (hashed) id. */
  reqs got;
  hs_trace_options o = opts(HS_TRACE_TXT);
  CHECK_OK(read_all(path_of("README"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 2);
  free(got.r);
  CHECK_OK(read_all(path_of("notes.txt"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 4);
  free(got.r);
}

/* ---- what the loader tells about sizes --------------------------------- */

static void test_sizes_known(void) {
  static const struct {
    const char *name, *spec;
    bool sized;
  } files[] = {
      {"og.oracleGeneral", NULL, true},   {"v1.vscsi", NULL, true},
      {"ids.txt", NULL, false},           {"rows.csv", "id=2,size=3,time=1,header", true},
      {"rows.csv", "id=2,header", false},
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    hs_trace_options o = opts(HS_TRACE_AUTO);
    if (files[i].spec) CHECK_OK(hs_csv_spec_parse(files[i].spec, &o.csv));
    hs_trace *t;
    REQUIRE(hs_trace_open(path_of(files[i].name), &o, &t) == HS_OK);
    CHECK_EQ(hs_trace_has_sizes(t), files[i].sized);
    hs_trace_close(t);
    hs_sim_trace *s;
    REQUIRE(hs_sim_load(path_of(files[i].name), &o, NULL, NULL, NULL, &s) == HS_OK);
    CHECK_EQ(s->sized, files[i].sized);
    if (!files[i].sized) CHECK(s->min_size == 1 && s->max_size == 1);
    hs_sim_trace_free(s);
  }
  /* One size for every request, or several. */
  hs_sim_trace *s;
  REQUIRE(hs_sim_load(path_of("cap.oracleGeneral"), NULL, NULL, NULL, NULL, &s) == HS_OK);
  CHECK(s->min_size == 100 && s->max_size == 100);
  hs_sim_trace_free(s);
  REQUIRE(hs_sim_load(path_of("v1.vscsi"), NULL, NULL, NULL, NULL, &s) == HS_OK);
  CHECK(s->min_size == 512 && s->max_size == 16 * 512);
  hs_sim_trace_free(s);
}

static void test_unreadable(void) {
  hs_trace *t = (hs_trace *)1;
  hs_trace_options o = opts(HS_TRACE_AUTO);
  CHECK_ST(hs_trace_open(path_of("missing.oracleGeneral"), &o, &t), HS_ERR_NOENT);
  CHECK(t == NULL);
  CHECK_CONTAINS(hs_last_error(), "missing.oracleGeneral: cannot open: ");
  CHECK_EQ(hs_last_errno(), ENOENT);
  CHECK_ST(hs_trace_open(dir, &o, &t), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "is a directory");
  CHECK_ST(hs_trace_open("", &o, &t), HS_ERR_INVALID);
  if (geteuid() != 0) { /* root reads anything */
    write_text("secret.txt", "1\n");
    REQUIRE(chmod(path_of("secret.txt"), 0) == 0);
    CHECK_ST(hs_trace_open(path_of("secret.txt"), &o, &t), HS_ERR_ACCESS);
    CHECK_CONTAINS(hs_last_error(), "Permission denied");
  } else {
    check_skip("test_trace", "unreadable file: running as root, which reads anything");
  }
  /* A read error after a good open: a directory cannot be read, but it
   * cannot be opened as a trace either; /proc/self/mem fails with EIO. */
  o = opts(HS_TRACE_ORACLEGENERAL);
  if (access("/proc/self/mem", R_OK) == 0) {
    hs_status st = hs_trace_open("/proc/self/mem", &o, &t);
    CHECK(st != HS_OK);
    CHECK_CONTAINS(hs_last_error(), "/proc/self/mem: read failed");
  } else {
    check_skip("test_trace", "read error after open: /proc/self/mem is not readable here");
  }
}

static void test_writer_errors(void) {
  hs_trace_writer *w = (hs_trace_writer *)1;
  CHECK_ST(hs_trace_writer_open(path_of("no/such/dir.oracleGeneral"), &w), HS_ERR_NOENT);
  CHECK(w == NULL);
  CHECK_CONTAINS(hs_last_error(), "cannot create");
  /* /dev/full: every write fails with ENOSPC; at the latest close says so. */
  if (access("/dev/full", W_OK) == 0) {
    REQUIRE(hs_trace_writer_open("/dev/full", &w) == HS_OK);
    CHECK_OK(hs_trace_write(w, 1, 2, 3, -1));
    CHECK_ST(hs_trace_writer_close(w), HS_ERR_NOSPACE);
    CHECK_CONTAINS(hs_last_error(), "/dev/full: write failed: No space left on device");
    CHECK_EQ(hs_last_errno(), ENOSPC);
    /* Enough records to fill the buffer: the write itself fails, and
     * every later one too. */
    REQUIRE(hs_trace_writer_open("/dev/full", &w) == HS_OK);
    hs_status st = HS_OK;
    size_t i;
    for (i = 0; i < 100000 && st == HS_OK; i++) st = hs_trace_write(w, 1, 2, 3, -1);
    CHECK_EQ(st, HS_ERR_NOSPACE);
    CHECK(i < 100000);
    CHECK_ST(hs_trace_write(w, 1, 2, 3, -1), HS_ERR_NOSPACE);
    CHECK_ST(hs_trace_writer_close(w), HS_ERR_NOSPACE);
  }
  CHECK_OK(hs_trace_writer_close(NULL));
}

/* Every request written, in each format the writer knows, reads back as
 * that format with what the format keeps; a vscsi name is refused. */
static void test_writer_formats(void) {
  enum { N = 3000 };
  hs_request *want = calloc(N, sizeof *want);
  REQUIRE(want != NULL);
  for (size_t i = 0; i < N; i++) {
    want[i].time = (uint32_t)(i * 3);
    want[i].id = i % 7 == 0 ? UINT64_MAX - i : rnd() % 5000;
    want[i].size = i % 5 == 0 ? UINT32_MAX : 1 + rnd() % 100000;
    want[i].next = i % 3 == 0 ? -1 : (int64_t)(i + 1 + rnd() % 100);
  }
  static const struct {
    const char *name;
    hs_trace_format format;
  } files[] = {
      {"w.csv", HS_TRACE_CSV},
      {"w.csv.zst", HS_TRACE_CSV},
      {"w.txt", HS_TRACE_TXT},
      {"W.TXT.ZST", HS_TRACE_TXT},
      {"w.oracleGeneral", HS_TRACE_ORACLEGENERAL},
      {"w-no-suffix", HS_TRACE_ORACLEGENERAL},
  };
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    hs_trace_writer *w;
    REQUIRE(hs_trace_writer_open(path_of(files[f].name), &w) == HS_OK);
    CHECK_EQ(hs_trace_writer_format(w), files[f].format);
    for (size_t i = 0; i < N; i++)
      CHECK_OK(hs_trace_write(w, (uint32_t)want[i].time, want[i].id, (uint32_t)want[i].size,
                              want[i].next));
    CHECK_OK(hs_trace_writer_close(w));
    hs_trace_options o = opts(HS_TRACE_AUTO);
    if (files[f].format == HS_TRACE_ORACLEGENERAL) o.format = HS_TRACE_ORACLEGENERAL;
    reqs got;
    hs_trace_format fmt = HS_TRACE_AUTO;
    CHECK_OK(read_all(path_of(files[f].name), &o, &got, &fmt, NULL, 0));
    CHECK_EQ(fmt, files[f].format);
    CHECK_EQ(got.n, N);
    size_t diff = 0;
    for (size_t i = 0; i < got.n && i < N; i++) {
      const hs_request *g = &got.r[i], *e = &want[i];
      switch (files[f].format) {
      case HS_TRACE_CSV: /* the reader takes time, id and size; next is not read */
        diff += g->id != e->id || g->size != e->size || g->time != e->time;
        break;
      case HS_TRACE_TXT: /* the id alone: size 1, time the request number */
        diff += g->id != e->id || g->size != 1 || g->time != i + 1;
        break;
      default:
        diff += g->id != e->id || g->size != e->size || g->time != e->time || g->next != e->next;
        break;
      }
    }
    if (diff) fprintf(stderr, "%s: %zu requests differ\n", files[f].name, diff);
    CHECK_EQ(diff, 0);
    free(got.r);
  }
  /* The csv header names the columns the reader picks by name. */
  size_t len;
  unsigned char *text = slurp(path_of("w.csv"), &len);
  CHECK(len > 40 && memcmp(text, "time,obj_id,obj_size,next_access_vtime\n0,", 41) == 0);
  free(text);

  hs_trace_writer *w = (hs_trace_writer *)1;
  CHECK_ST(hs_trace_writer_open(path_of("w.vscsi"), &w), HS_ERR_INVALID);
  CHECK(w == NULL);
  CHECK_CONTAINS(hs_last_error(), "w.vscsi: the name says vscsi, which hotset does not write");
  CHECK(access(path_of("w.vscsi"), F_OK) != 0); /* nothing was created */
  CHECK_ST(hs_trace_writer_open(path_of("w.vscsi.zst"), &w), HS_ERR_INVALID);
  free(want);
}

/* ---- input without end -------------------------------------------------- */

/* A zstd frame of `blocks` RLE blocks, each 128 KiB of zeros, written by
 * hand: 4 bytes a block, 32768 times as much unpacked. */
static void write_zero_bomb(const char *name, size_t blocks) {
  size_t len = 6 + 4 * blocks;
  unsigned char *p = malloc(len);
  REQUIRE(p != NULL);
  static const unsigned char header[] = {0x28, 0xB5, 0x2F, 0xFD, /* magic */
                                         0x00,                   /* no content size */
                                         0x38};                  /* window 128 KiB */
  memcpy(p, header, sizeof header);
  for (size_t b = 0; b < blocks; b++) {
    /* last-block bit, type 1 (RLE), size 128 KiB; then the byte. */
    uint32_t h = (b + 1 == blocks) | 1u << 1 | (128u << 10) << 3;
    unsigned char *q = p + 6 + 4 * b;
    q[0] = (unsigned char)h, q[1] = (unsigned char)(h >> 8), q[2] = (unsigned char)(h >> 16);
    q[3] = 0;
  }
  write_file(name, p, len);
  free(p);
}

/* Opens `path` as `format` (csv with "id=1") and reads: the read must fail
 * with `st` and `msg`, having taken at most `max_bytes` of the file (read
 * from a plain file; for zstd, consumed by the decompressor). */
static void endless_text(const char *path, hs_trace_format format, bool skip, hs_status st,
                         const char *msg, uint64_t max_bytes) {
  hs_trace_options o = opts(format);
  o.skip_bad = skip;
  if (format == HS_TRACE_CSV) CHECK_OK(hs_csv_spec_parse("id=1", &o.csv));
  hs_trace *t;
  CHECK_OK(hs_trace_open(path, &o, &t));
  if (!t) return;
  hs_request r[16];
  size_t n = 99;
  CHECK_ST(hs_trace_read(t, r, 16, &n), st);
  CHECK_EQ(n, 0);
  CHECK_CONTAINS(hs_last_error(), msg);
  uint64_t taken = hs_trace_compressed(t) ? hs_trace_bytes_read(t) : t->src.raw_read;
  if (taken > max_bytes)
    fprintf(stderr, "%s: took %llu bytes before failing, want at most %llu\n", path,
            (unsigned long long)taken, (unsigned long long)max_bytes);
  CHECK(taken <= max_bytes);
  hs_trace_close(t);
}

static void test_endless_lines(void) {
  /* Without skip_bad the error comes once the window holds more than the
   * limit: at most a window and a line of the file are read. */
  const uint64_t soon = TRACE_BUF_SIZE + 2 * TRACE_MAX_LINE;
  const char *too_long = "line 1: line too long (more than 65536 bytes)";
  if (access("/dev/zero", R_OK) == 0) {
    endless_text("/dev/zero", HS_TRACE_TXT, false, HS_ERR_CORRUPT, too_long, soon);
    endless_text("/dev/zero", HS_TRACE_CSV, false, HS_ERR_CORRUPT, too_long, soon);
    /* skip_bad reads past a long line, but not past 16 MiB of one. */
    endless_text("/dev/zero", HS_TRACE_TXT, true, HS_ERR_CORRUPT,
                 "/dev/zero: line 1: no line end in its first 16 MiB: not a text trace",
                 TRACE_MAX_SKIPPED_LINE + soon);
  }
  /* A finite line of 20 MiB: the same, and the rest is not read first. */
  size_t big = 20u << 20;
  char *text = malloc(big + 16);
  REQUIRE(text != NULL);
  memset(text, 'x', big);
  memcpy(text + big, "\n42\n", 5);
  write_file("huge-line.txt", text, big + 4);
  endless_text(path_of("huge-line.txt"), HS_TRACE_TXT, false, HS_ERR_CORRUPT, too_long, soon);
  endless_text(path_of("huge-line.txt"), HS_TRACE_TXT, true, HS_ERR_CORRUPT,
               "line 1: no line end in its first 16 MiB", TRACE_MAX_SKIPPED_LINE + soon);
  /* Under 16 MiB, skip_bad skips it and reads on. */
  size_t skippable = 10u << 20;
  memcpy(text + skippable, "\n42\n", 5);
  write_file("long-line.txt", text, skippable + 4);
  hs_trace_options o = opts(HS_TRACE_TXT);
  o.skip_bad = true;
  reqs got;
  CHECK_OK(read_all(path_of("long-line.txt"), &o, &got, NULL, NULL, 0));
  CHECK_EQ(got.n, 1);
  if (got.n == 1) CHECK_EQ(got.r[0].id, 42);
  free(got.r);
  free(text);
  /* Zeros out of zstd: 8 GiB from 256 KiB of file, of which a window and
   * a line take some 10 blocks of 4 bytes. */
  write_zero_bomb("zeros.zst", 65536);
  endless_text(path_of("zeros.zst"), HS_TRACE_TXT, false, HS_ERR_CORRUPT, too_long, 1024);
  endless_text(path_of("zeros.zst"), HS_TRACE_CSV, false, HS_ERR_CORRUPT, too_long, 1024);
}

/* hs_sim_load stops at its cap on requests, with a message saying how far
 * it got; a trace of exactly the cap loads. */
static void test_sim_load_cap(void) {
  hs_trace_writer *w;
  REQUIRE(hs_trace_writer_open(path_of("cap.oracleGeneral"), &w) == HS_OK);
  for (uint32_t i = 0; i < 1000; i++) CHECK_OK(hs_trace_write(w, i, i % 10, 100, -1));
  CHECK_OK(hs_trace_writer_close(w));
  hs_sim_trace *t = NULL;
  hs_sim_load_options lim = {.max_requests = 1000};
  CHECK_OK(hs_sim_load(path_of("cap.oracleGeneral"), NULL, &lim, NULL, NULL, &t));
  if (t) CHECK_EQ(t->requests, 1000);
  hs_sim_trace_free(t);
  lim.max_requests = 999;
  t = (hs_sim_trace *)1;
  CHECK_ST(hs_sim_load(path_of("cap.oracleGeneral"), NULL, &lim, NULL, NULL, &t), HS_ERR_NOMEM);
  CHECK(t == NULL);
  CHECK_CONTAINS(hs_last_error(), "cap.oracleGeneral: stopped loading after 999 requests, the "
                                  "limit (10 distinct objects so far");
  CHECK(strstr(hs_last_error(), "raises") == NULL); /* no flag named */
  lim.flag = "--cap";
  CHECK_ST(hs_sim_load(path_of("cap.oracleGeneral"), NULL, &lim, NULL, NULL, &t), HS_ERR_NOMEM);
  CHECK_CONTAINS(hs_last_error(), "; --cap raises it");

  /* An endless trace: the cap, not the memory, ends it. */
  if (access("/dev/zero", R_OK) == 0) {
    hs_trace_options o = opts(HS_TRACE_ORACLEGENERAL);
    lim.max_requests = 100000;
    CHECK_ST(hs_sim_load("/dev/zero", &o, &lim, NULL, NULL, &t), HS_ERR_NOMEM);
    CHECK_CONTAINS(hs_last_error(), "/dev/zero: stopped loading after 100000 requests");
  }
  write_zero_bomb("zeros.oracleGeneral.zst", 2048); /* 256 MiB: 11 M records */
  lim.max_requests = 100000;
  CHECK_ST(hs_sim_load(path_of("zeros.oracleGeneral.zst"), NULL, &lim, NULL, NULL, &t),
           HS_ERR_NOMEM);
  CHECK_CONTAINS(hs_last_error(), "stopped loading after 100000 requests");

  /* The default: half the usable memory at the budgeted bytes a request. */
  uint64_t mem = hs_sim_usable_memory();
  CHECK(mem > 0);
  CHECK_EQ(hs_sim_default_max_requests(), mem / 2 / HS_SIM_BYTES_PER_REQUEST);
}

/* ---- the CloudPhysics sample trace, four encodings ---------------------- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void test_cloudphysics(const char *repo) {
  char tdir[PATH_MAX], looked[3 * PATH_MAX], skip_why[4 * PATH_MAX];
  if (!traces_dir(repo, tdir, sizeof tdir, looked, sizeof looked)) {
    snprintf(skip_why, sizeof skip_why,
             "the CloudPhysics checks (looked in: %s; set HOTSET_TRACES=DIR)", looked);
    check_skip("test_trace", skip_why);
    return;
  }
  static const struct {
    const char *file;
    hs_trace_format format;
  } enc[] = {{"cloudPhysicsIO.oracleGeneral.bin", HS_TRACE_ORACLEGENERAL},
             {"cloudPhysicsIO.vscsi", HS_TRACE_VSCSI},
             {"cloudPhysicsIO.csv", HS_TRACE_CSV},
             {"cloudPhysicsIO.txt", HS_TRACE_TXT}};
  reqs got[4];
  for (int k = 0; k < 4; k++) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", tdir, enc[k].file);
    hs_trace_format f;
    char why[320];
    hs_trace_options o = opts(HS_TRACE_AUTO);
    CHECK_OK(read_all(path, &o, &got[k], &f, why, sizeof why));
    CHECK_EQ(f, enc[k].format);
    if (k == 1) CHECK_CONTAINS(why, "vscsi (v1)");
    CHECK_EQ(got[k].n, 113872);
  }
  for (int k = 0; k < 4; k++)
    if (got[k].n != 113872) return;
  size_t diff[4] = {0};
  for (size_t i = 0; i < 113872; i++) {
    for (int k = 1; k < 4; k++) diff[k] += got[k].r[i].id != got[0].r[i].id;
    /* Sizes and times as the README describes: csv = vscsi sizes,
     * csv time = oraclegeneral time = vscsi time stamp in microseconds. */
    diff[0] += got[2].r[i].size != got[1].r[i].size || got[2].r[i].time != got[0].r[i].time ||
               got[1].r[i].time / 1000000 != got[0].r[i].time;
  }
  for (int k = 0; k < 4; k++) CHECK_EQ(diff[k], 0);

  uint64_t *ids = malloc(113872 * sizeof *ids);
  REQUIRE(ids != NULL);
  for (size_t i = 0; i < 113872; i++) ids[i] = got[0].r[i].id;
  qsort(ids, 113872, sizeof *ids, cmp_u64);
  size_t distinct = 0, once = 0;
  for (size_t i = 0, j; i < 113872; i = j) {
    for (j = i; j < 113872 && ids[j] == ids[i]; j++) {
    }
    distinct++;
    once += j - i == 1;
  }
  CHECK_EQ(distinct, 48974);
  CHECK_EQ(once, 21049);

  /* next_access_vtime: libCacheSim counts requests from 1, so request i
   * (from 0) has next = j + 1 for the next request j of the same object,
   * or -1. One backward pass, with an open-addressing map from id to the
   * position of its next request. */
  size_t wrong = 0;
  size_t cap = 1u << 17;
  uint64_t *key = calloc(cap, sizeof *key);
  int64_t *val = malloc(cap * sizeof *val);
  bool *used = calloc(cap, sizeof *used);
  REQUIRE(key && val && used);
  for (size_t i = 113872; i-- > 0;) {
    uint64_t id = got[0].r[i].id;
    size_t h = (size_t)(id * 0x9E3779B97F4A7C15ull >> 47) & (cap - 1);
    while (used[h] && key[h] != id) h = (h + 1) & (cap - 1);
    int64_t want = used[h] ? val[h] + 1 : -1;
    if (got[0].r[i].next != want && wrong++ < 3)
      fprintf(stderr, "request %zu: next %lld, want %lld\n", i, (long long)got[0].r[i].next,
              (long long)want);
    used[h] = true;
    key[h] = id;
    val[h] = (int64_t)i;
  }
  CHECK_EQ(wrong, 0);
  free(key);
  free(val);
  free(used);
  free(ids);
  for (int k = 0; k < 4; k++) free(got[k].r);
}

/* ---- the same through tiny windows -------------------------------------- */

static void test_small_windows(const char *repo) {
  static const struct {
    const char *name;
    const char *spec;
    bool skip;
  } files[] = {
      {"og.oracleGeneral", NULL, false},
      {"og.bin.zst", NULL, false},
      {"v2.vscsi", NULL, false},
      {"v1.vscsi.zst", NULL, false},
      {"rows.csv", "id=2,size=3,time=1,header", false},
      {"rows.csv.zst", NULL, false},
      {"ids.txt.zst", NULL, false},
      {"cut.oracleGeneral", NULL, false},
      {"cut.oracleGeneral.zst", NULL, true},
      {"cut.vscsi", NULL, true},
      {"cutz.oracleGeneral.zst", NULL, false},
      {"tail.oracleGeneral.zst", NULL, false},
      {"long.csv", "id=1,size=2", false},
      {"long.csv", "id=1,size=2", true},
      {"many.csv", "id=1,size=2", true},
      {"max.txt", NULL, false},
      /* "traces/": in the sample traces' directory (tests/support/traces_dir.h). */
      {"traces/cloudPhysicsIO.oracleGeneral.bin", NULL, false},
      {"traces/cloudPhysicsIO.vscsi", NULL, false},
      {"traces/cloudPhysicsIO.csv", NULL, false},
      {"traces/cloudPhysicsIO.txt", NULL, false},
  };
  static const size_t windows[] = {5, 1000, 4099};
  char tdir[PATH_MAX], looked[3 * PATH_MAX];
  bool have_traces = traces_dir(repo, tdir, sizeof tdir, looked, sizeof looked);
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char path[2 * PATH_MAX];
    if (strncmp(files[f].name, "traces/", 7) == 0) {
      if (!have_traces) continue; /* reported by test_cloudphysics */
      snprintf(path, sizeof path, "%s/%s", tdir, files[f].name + 7);
    } else
      snprintf(path, sizeof path, "%s", path_of(files[f].name));
    struct stat sb;
    if (stat(path, &sb) != 0) continue; /* reported by test_cloudphysics */
    hs_trace_options o = opts(HS_TRACE_AUTO);
    o.skip_bad = files[f].skip;
    if (files[f].spec) CHECK_OK(hs_csv_spec_parse(files[f].spec, &o.csv));
    trace_window_size = TRACE_BUF_SIZE;
    reqs want;
    hs_status want_st = read_all(path, &o, &want, NULL, NULL, 0);
    char want_msg[512];
    snprintf(want_msg, sizeof want_msg, "%s", want_st ? hs_last_error() : "");
    /* A 5-byte window means a read() per record: only for small files. */
    for (size_t w = sb.st_size < (256 << 10) ? 0 : 1; w < sizeof windows / sizeof windows[0]; w++) {
      trace_window_size = windows[w];
      reqs got;
      hs_status st = read_all(path, &o, &got, NULL, NULL, 0);
      CHECK_EQ(st, want_st);
      if (st != HS_OK) CHECK_CONTAINS(hs_last_error(), want_msg);
      CHECK_EQ(got.n, want.n);
      size_t diff = 0;
      for (size_t i = 0; i < got.n && i < want.n; i++) diff += !same_request(&got.r[i], &want.r[i]);
      if (diff) fprintf(stderr, "%s, window %zu: %zu requests differ\n", path, windows[w], diff);
      CHECK_EQ(diff, 0);
      free(got.r);
    }
    free(want.r);
  }
  trace_window_size = TRACE_BUF_SIZE;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_trace REPO_ROOT\n");
    return 2;
  }
  testdir_make(dir, sizeof dir, "trace");
  test_format_names();
  test_csv_spec();
  test_oraclegeneral();
  test_vscsi();
  test_truncated();
  test_txt();
  test_csv();
  test_csv_errors();
  test_detection();
  test_format_mismatch();
  test_not_a_trace();
  test_unreadable();
  test_writer_errors();
  test_writer_formats();
  /* A reader that does not stop on endless input would hang here: the
   * alarm's default action ends the test instead, as a failure. */
  alarm(60);
  test_endless_lines();
  test_sim_load_cap();
  alarm(0);
  test_sizes_known(); /* after test_sim_load_cap, which writes cap.oracleGeneral */
  test_cloudphysics(argv[1]);
  test_small_windows(argv[1]);
  testdir_remove(dir);
  return check_finish();
}

/*
 * fuzz/fuzz_trace.c — libFuzzer harness for the trace reader (sim/trace.h).
 *
 * Each input becomes the contents of a memfd, opened by its /proc/self/fd
 * path (the reader wants a path, and a memfd spares the disk), and is read
 * to the end with every format: auto, oraclegeneral, vscsi, txt, and csv
 * with several specs (including none, which makes it look for a header),
 * each with skip_bad off and on. Batch sizes vary between calls so both
 * hs_trace_read and hs_trace_next run, and half the runs use a window of a
 * few bytes (the reader's test knob), since a small input otherwise fits
 * the window whole and never exercises refilling. The sanitizers catch memory errors;
 * the harness itself aborts when the reader breaks a promise it can check
 * without a second implementation:
 *
 *   - a read never reports more requests than asked for;
 *   - a failure is sticky (the next read fails with the same status);
 *   - a plain input given as oraclegeneral opens, unless it does not fit
 *     oraclegeneral and looks like another format (the open then names
 *     it: "...; it looks like a vscsi trace ...");
 *   - skip_bad never fails on a plain oraclegeneral input, and a plain
 *     oraclegeneral input yields exactly size / 24 records, with one bad
 *     (or failing) record if size is not a multiple of 24;
 *   - those records, written back with hs_trace_writer, give back the
 *     input's bytes exactly.
 *
 * Build (clang only) and run: see fuzz/README.md.
 */
#include "sim/trace.h"
#include "sim/trace_internal.h" /* trace_window_size */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int in_fd = -1, out_fd = -1;
static char in_path[64], out_path[64];

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "fuzz_trace: broken promise: %s (%s)\n", what, hs_last_error());
    abort();
  }
}

static int make_memfd(const char *name, char *path, size_t len) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  check(fd >= 0, "memfd_create");
  snprintf(path, len, "/proc/self/fd/%d", fd);
  return fd;
}

static void set_contents(const uint8_t *data, size_t size) {
  check(ftruncate(in_fd, 0) == 0, "ftruncate");
  size_t done = 0;
  while (done < size) {
    ssize_t w = pwrite(in_fd, data + done, size - done, (off_t)done);
    check(w > 0, "pwrite");
    done += (size_t)w;
  }
}

static int looks_zstd(const uint8_t *d, size_t n) {
  if (n < 4) return 0;
  uint32_t m = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
  return m == 0xFD2FB528u || (m & 0xFFFFFFF0u) == 0x184D2A50u;
}

/* Reads the whole trace; returns the number of requests, and in *st the
 * final status. Keeps the requests in *keep if it is not NULL. */
static size_t read_through(hs_trace *t, hs_status *st, hs_request **keep) {
  static const size_t batches[] = {1, 3, 64, 1000};
  hs_request buf[1000];
  size_t total = 0, cap = 0;
  for (unsigned round = 0;; round++) {
    size_t want = batches[round % 4], n = 0;
    if (want == 1) {
      bool got = false;
      *st = hs_trace_next(t, buf, &got);
      n = got;
    } else {
      *st = hs_trace_read(t, buf, want, &n);
    }
    check(n <= want, "no more requests than asked for");
    if (keep && n) {
      if (total + n > cap) {
        cap = (total + n) * 2;
        hs_request *k = realloc(*keep, cap * sizeof *k);
        check(k != NULL, "realloc");
        *keep = k;
      }
      memcpy(*keep + total, buf, n * sizeof *buf);
    }
    total += n;
    if (*st != HS_OK) {
      size_t again = 0;
      check(hs_trace_read(t, buf, 4, &again) == *st && again == 0, "failures are sticky");
      return total;
    }
    if (n < want) return total;
  }
}

/* The oraclegeneral records, written back, must be the input's bytes. */
static void check_rewrite(const uint8_t *data, size_t size, const hs_request *r, size_t n) {
  hs_trace_writer *w;
  check(hs_trace_writer_open(out_path, &w) == HS_OK, "writer open");
  for (size_t i = 0; i < n; i++) {
    check(r[i].time <= UINT32_MAX && r[i].size <= UINT32_MAX, "32-bit fields");
    check(hs_trace_write(w, (uint32_t)r[i].time, r[i].id, (uint32_t)r[i].size, r[i].next) == HS_OK,
          "writer write");
  }
  check(hs_trace_writer_close(w) == HS_OK, "writer close");
  size_t whole = size / 24 * 24;
  uint8_t *back = malloc(whole + 1);
  check(back != NULL, "malloc");
  check(pread(out_fd, back, whole + 1, 0) == (ssize_t)whole, "rewritten size");
  check(memcmp(back, data, whole) == 0, "rewritten bytes");
  free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (in_fd < 0) {
    in_fd = make_memfd("fuzz_trace_in", in_path, sizeof in_path);
    out_fd = make_memfd("fuzz_trace_out", out_path, sizeof out_path);
  }
  set_contents(data, size);

  static const struct {
    hs_trace_format format;
    const char *spec;
  } configs[] = {
      {HS_TRACE_AUTO, NULL},
      {HS_TRACE_AUTO, "id=2,header"},
      {HS_TRACE_ORACLEGENERAL, NULL},
      {HS_TRACE_VSCSI, NULL},
      {HS_TRACE_TXT, NULL},
      {HS_TRACE_CSV, NULL},
      {HS_TRACE_CSV, "id=1"},
      {HS_TRACE_CSV, "id=2,size=1,time=3,header"},
      {HS_TRACE_CSV, "id=1,size=2,delimiter=space"},
      {HS_TRACE_CSV, "id=3,time=2,delimiter=tab"},
  };
  const int plain = !looks_zstd(data, size);
  for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
    for (int skip = 0; skip < 2; skip++) {
      hs_trace_options o = {.format = configs[c].format, .skip_bad = skip};
      trace_window_size = (c + (size_t)skip) % 2 ? 1 + c * 7 % 61 : TRACE_BUF_SIZE;
      if (configs[c].spec) check(hs_csv_spec_parse(configs[c].spec, &o.csv) == HS_OK, "spec");
      hs_trace *t;
      if (hs_trace_open(in_path, &o, &t) != HS_OK) {
        check(configs[c].format != HS_TRACE_ORACLEGENERAL || !plain ||
                  strstr(hs_last_error(), "; it looks like ") != NULL,
              "oraclegeneral opens");
        continue;
      }
      (void)hs_trace_format_reason(t);
      int og = hs_trace_format_of(t) == HS_TRACE_ORACLEGENERAL && plain;
      hs_request *keep = NULL;
      hs_status st;
      size_t n = read_through(t, &st, og && skip && size <= 65536 ? &keep : NULL);
      if (og) {
        int ragged = size % 24 != 0;
        check(n == size / 24, "oraclegeneral record count");
        if (skip)
          check(st == HS_OK && hs_trace_bad_records(t) == (uint64_t)ragged,
                "skip_bad counts the one ragged record");
        else
          check((st != HS_OK) == ragged, "a ragged end fails");
        if (keep) check_rewrite(data, size, keep, n);
      }
      if (st == HS_OK && plain && hs_trace_file_size(t))
        check(hs_trace_bytes_read(t) == hs_trace_file_size(t), "everything consumed");
      if (hs_trace_bad_records(t)) check(hs_trace_first_bad(t)[0] != '\0', "first bad kept");
      free(keep);
      hs_trace_close(t);
    }
  }
  return 0;
}

/*
 * bench/raw_read.c — see raw_read.h.
 */
#include "bench/raw_read.h"

#include "common/clock.h"
#include "common/interrupt.h"
#include "core/error.h"
#include "storage/direct_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- raw read rate ---- */

hs_status bench_raw_read_rate(const char *path, uint32_t io, uint32_t buf_bytes, double seconds,
                              bool direct, bench_raw_rate *rate) {
  if (io == 0 || io > buf_bytes)
    return hs_fail(HS_ERR_INVALID, 0, "reads of %u bytes into a %u-byte buffer", io, buf_bytes);
  int fd = open(path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "opening %s: %s", path, strerror(err));
  }
  void *buf = NULL;
  if (posix_memalign(&buf, 4096, buf_bytes) != 0) {
    close(fd);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a %u-byte read buffer", buf_bytes);
  }
  hs_status st = HS_OK;
  uint64_t bytes = 0, t0 = 0, cpu0 = 0, limit_ns = (uint64_t)(seconds * 1e9);
  bool timed_out = false;
  for (int pass = direct ? 1 : 0; st == HS_OK && !timed_out; pass++) {
    if (pass == 1) {
      t0 = bench_now_ns();
      cpu0 = bench_thread_cpu_ns();
    }
    if (pass > 1 && bench_now_ns() - t0 >= limit_ns) break;
    if (bench_interrupted()) {
      st = hs_fail(HS_ERR_IO, EINTR, "reading %s: interrupted", path);
      break;
    }
    off_t off = 0;
    for (;;) {
      size_t at = (size_t)(off % buf_bytes) / io * io;
      ssize_t got = pread(fd, (char *)buf + at, io, off);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        int err = errno;
        st = hs_fail(hs_status_from_errno(err), err, "reading %s: %s", path, strerror(err));
        break;
      }
      if (got == 0) break;
      off += got;
      if (pass > 0) bytes += (uint64_t)got;
      /* Direct passes are slow: stop inside one (every 64 reads). */
      if (direct && (off / io) % 64 == 0 && bench_now_ns() - t0 >= limit_ns) {
        timed_out = true;
        break;
      }
    }
  }
  uint64_t ns = bench_now_ns() - t0;
  uint64_t cpu = bench_thread_cpu_ns() - cpu0;
  free(buf);
  close(fd);
  if (st == HS_OK) {
    rate->mb_per_sec = ns ? (double)bytes / 1e6 / ((double)ns / 1e9) : 0;
    rate->mb_per_cpu_sec = cpu ? (double)bytes / 1e6 / ((double)cpu / 1e9) : 0;
  }
  return st;
}

/* ---- direct I/O ---- */

uint32_t bench_dio_align(int fd) {
  dio_info dio;
  if (!dio_alignment(fd, &dio)) return 4096;
  return dio.offset_align > dio.mem_align ? dio.offset_align : dio.mem_align;
}

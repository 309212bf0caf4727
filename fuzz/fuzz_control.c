/*
 * fuzz/fuzz_control.c — libFuzzer harness for the data directory's control
 * file decoder (storage/control_file.h: control_decode, what
 * hs_control_read runs on the bytes it reads).
 *
 * An input is one mode byte, then the file's bytes. With the mode's bit 0
 * set, the harness first writes the right CRC-32C into a 128-byte input,
 * so that the fuzzer reaches the field checks behind the CRC instead of
 * spending its time on a 32-bit guess (bad CRCs come from the other half).
 * Besides the sanitizers' findings (a page or segment size of 0 divided
 * by, once), the harness aborts when the decoder breaks a promise:
 *
 *   - the outcome is HS_OK or HS_ERR_CORRUPT, nothing else; on
 *     HS_ERR_CORRUPT the result is all zeros and the message names the
 *     file;
 *   - what it accepts is in range: a power-of-two page size from
 *     HS_PAGE_SIZE_MIN to HS_PAGE_SIZE_MAX, a segment size of 0 or a power
 *     of two from HS_WAL_MIN_SEGMENT to HS_WAL_MAX_SEGMENT, a known state,
 *     a non-zero system id, and with a checkpoint: a log, the checkpoint
 *     where a record can start, the redo point at or before it, both
 *     8-aligned and outside a segment header; without one both LSNs are 0;
 *   - what it accepts, encoded again with its time, gives back the input's
 *     bytes exactly (no byte of the file is ignored).
 *
 * Build (clang only) and run: see fuzz/README.md.
 */
#include "core/crc32c.h"
#include "core/endian.h"
#include "core/error.h"
#include "hotset/control.h"
#include "hotset/storage.h"
#include "hotset/wal.h"
#include "storage/control_file.h"
#include "wal/wal_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "fuzz_control: broken promise: %s (%s)\n", what, hs_last_error());
    abort();
  }
}

static int power_of_two_within(uint64_t v, uint64_t min, uint64_t max) {
  return v >= min && v <= max && (v & (v - 1)) == 0;
}

static void check_accepted(const unsigned char *b, size_t n, const hs_control *c) {
  check(n == CONTROL_FILE_BYTES, "accepted a file of another size");
  check(c->format == HS_CONTROL_FORMAT, "accepted another format");
  check(power_of_two_within(c->page_size, HS_PAGE_SIZE_MIN, HS_PAGE_SIZE_MAX),
        "accepted a page size out of range");
  check(c->segment_bytes == 0 ||
            power_of_two_within(c->segment_bytes, HS_WAL_MIN_SEGMENT, HS_WAL_MAX_SEGMENT),
        "accepted a segment size out of range");
  check(strcmp(hs_control_state_name(c->state), "unknown") != 0, "accepted an unknown state");
  check(c->system_id != 0, "accepted system id 0");
  if (c->has_checkpoint) {
    check(c->segment_bytes != 0, "accepted a checkpoint without a log");
    uint64_t S = c->segment_bytes;
    check(c->checkpoint % WAL_ALIGN == 0 && wal_is_record_pos(c->checkpoint, S),
          "accepted a checkpoint where no record starts");
    check(c->redo % WAL_ALIGN == 0 && (c->redo % S == 0 || c->redo % S >= WAL_SEG_HEADER),
          "accepted a redo point inside a segment header");
    check(c->redo <= c->checkpoint, "accepted a redo point past the checkpoint");
  } else {
    check(c->checkpoint == 0 && c->redo == 0, "accepted LSNs without a checkpoint");
  }
  unsigned char again[CONTROL_FILE_BYTES];
  control_encode(c, c->time_ms, again);
  check(memcmp(again, b, CONTROL_FILE_BYTES) == 0,
        "what was accepted does not encode back to the same bytes");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  unsigned mode = data[0];
  size_t n = size - 1;
  unsigned char *b = malloc(n ? n : 1);
  check(b != NULL, "malloc");
  if (n) memcpy(b, data + 1, n);
  if ((mode & 1) && n == CONTROL_FILE_BYTES) le_put32(b + 124, hs_crc32c(0, b, 124));
  hs_control c;
  memset(&c, 0x5A, sizeof c);
  hs_clear_error(); /* a broken promise prints this decode's message, or none */
  hs_status st = control_decode(b, n, "D", &c);
  if (st == HS_OK) {
    check_accepted(b, n, &c);
  } else {
    check(st == HS_ERR_CORRUPT, "an outcome other than HS_OK or HS_ERR_CORRUPT");
    hs_control zero;
    memset(&zero, 0, sizeof zero);
    check(memcmp(&c, &zero, sizeof c) == 0, "a refused file left fields set");
    check(strncmp(hs_last_error(), "D/" HS_CONTROL_FILE ": ", 17) == 0,
          "the refusal does not start with the file's path");
  }
  free(b);
  return 0;
}

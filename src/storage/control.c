/*
 * storage/control.c — the data directory's control file (hotset/control.h).
 *
 * 128 bytes, little-endian, one sector so that even a file system that
 * tore a rename's data would tear nothing here:
 *
 *    0  "HSCONTRL"          magic
 *    8  u32 format          HS_CONTROL_FORMAT
 *   12  u32 page_size
 *   16  u32 flags           bit 0: checksums; bit 1: has a checkpoint;
 *                           bit 2: keeps a list of its relation files
 *   20  u32 state           hs_db_state
 *   24  u64 segment_bytes   0: never opened with a log
 *   32  u64 system_id
 *   40  u64 checkpoint
 *   48  u64 redo
 *   56  u64 time_ms
 *   64  u64 id_floor        an engine's counter that never goes back
 *                           (hs_pool_raise_id_floor); 0: none
 *   72  ... zeros ...       reserved
 *  124  u32 CRC-32C of bytes [0, 124)
 *
 * Reading checks every field before anyone uses it (control_decode): a
 * file that passes its CRC was written whole, but not necessarily by a
 * hotset that works — a page size of 0 once made `hotset verify` divide by
 * zero. A value no hotset writes is damage, refused like a bad CRC.
 *
 * Replaced, never changed in place: a temporary file is written and
 * fsynced, renamed over the old one, and the directory fsynced (the rename
 * is a directory entry: until the directory is synced a power cut may undo
 * it, which is fine — the old file names an older checkpoint whose log is
 * still there, because segments are recycled only after this returns).
 */
#include "core/crc32c.h"
#include "core/endian.h"
#include "core/error.h"
#include "core/sysio.h"
#include "hotset/storage.h"
#include "storage/control_file.h"
#include "wal/wal_format.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define CONTROL_MAGIC    "HSCONTRL"
#define CONTROL_RESERVED 72u
#define CONTROL_CRC      124u

#define FLAG_CHECKSUMS  1u
#define FLAG_CHECKPOINT 2u
#define FLAG_CATALOG    4u

const char *hs_control_state_name(hs_db_state state) {
  switch (state) {
  case HS_DB_SHUT_DOWN:
    return "shut down";
  case HS_DB_IN_PRODUCTION:
    return "in production";
  case HS_DB_IN_RECOVERY:
    return "in recovery";
  }
  return "unknown";
}

uint64_t control_new_system_id(void) {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    id = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
  }
  return id ? id : 1;
}

/* What an operator does about a damaged control file: the flags are those
 * reset-log needs to write a new one when it cannot read the old. */
#define CONTROL_WAY_OUT                                                                            \
  "restore it from a backup, or rebuild it from the log and the data files with `hotset "          \
  "reset-log --dir %s --force` (it says what it finds, and loses nothing the log proves)"

/* No LSN of a real log comes near this (4 EiB of log); a bound keeps the
 * arithmetic past the checkpoint (its record's end, the next segment's
 * start) from wrapping. */
#define CONTROL_MAX_LSN (UINT64_C(1) << 62)

static bool power_of_two_within(uint64_t v, uint64_t min, uint64_t max) {
  return v >= min && v <= max && (v & (v - 1)) == 0;
}

/* A field out of range: its name, its value and what it may be. */
typedef struct field_problem {
  const char *field;
  char value[64];
  char allowed[240];
} field_problem;

static bool out_of_range(field_problem *p, const char *field, const char *allowed_fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool out_of_range(field_problem *p, const char *field, const char *allowed_fmt, ...) {
  p->field = field;
  va_list ap;
  va_start(ap, allowed_fmt);
  vsnprintf(p->allowed, sizeof p->allowed, allowed_fmt, ap);
  va_end(ap);
  return false;
}

/* The checkpoint and redo LSNs, against a segment size already checked. */
static bool lsns_valid(const hs_control *c, field_problem *p) {
  if (!c->has_checkpoint) {
    if (c->checkpoint == 0 && c->redo == 0) return true;
    snprintf(p->value, sizeof p->value, "%" PRIX64 " (redo %" PRIX64 ")", c->checkpoint, c->redo);
    return out_of_range(p, "checkpoint",
                        "but its flags say there is no checkpoint yet, when both are 0");
  }
  uint64_t S = c->segment_bytes;
  snprintf(p->value, sizeof p->value, "%" PRIX64, c->checkpoint);
  if (S == 0)
    return out_of_range(p, "checkpoint",
                        "but its segment_bytes is 0 (never had a log), and a checkpoint is a "
                        "record in the log");
  if (c->checkpoint >= CONTROL_MAX_LSN || c->checkpoint % WAL_ALIGN != 0 ||
      !wal_is_record_pos(c->checkpoint, S))
    return out_of_range(p, "checkpoint",
                        "not where a record can start in %" PRIu64
                        "-byte segments (a multiple of %u below 2^62, past the segment's "
                        "%u-byte header and at least %u bytes before its end)",
                        S, WAL_ALIGN, WAL_SEG_HEADER, WAL_HEADER);
  snprintf(p->value, sizeof p->value, "%" PRIX64, c->redo);
  uint64_t redo_off = c->redo % S;
  if (c->redo % WAL_ALIGN != 0 || (redo_off != 0 && redo_off < WAL_SEG_HEADER))
    return out_of_range(p, "redo",
                        "not a log position in %" PRIu64
                        "-byte segments (a multiple of %u, not inside a segment's %u-byte "
                        "header)",
                        S, WAL_ALIGN, WAL_SEG_HEADER);
  if (c->redo > c->checkpoint)
    return out_of_range(p, "redo",
                        "past the checkpoint record at %" PRIX64
                        " (the redo point is taken before that record is written)",
                        c->checkpoint);
  return true;
}

/* Every field of the bytes `b` (magic, CRC and format already checked)
 * into *c, or false with the first one out of range in *p. */
static bool fields_valid(const unsigned char *b, hs_control *c, field_problem *p) {
  memset(c, 0, sizeof *c);
  c->format = le_get32(b + 8);
  for (unsigned i = CONTROL_RESERVED; i < CONTROL_CRC; i++)
    if (b[i] != 0) {
      snprintf(p->value, sizeof p->value, "0x%02X at offset %u", b[i], i);
      return out_of_range(p, "reserved area", "where bytes %u to %u are always zero",
                          CONTROL_RESERVED, CONTROL_CRC - 1);
    }
  uint32_t flags = le_get32(b + 16);
  if (flags & ~(FLAG_CHECKSUMS | FLAG_CHECKPOINT | FLAG_CATALOG)) {
    snprintf(p->value, sizeof p->value, "0x%" PRIX32, flags);
    return out_of_range(p, "flags",
                        "but only bits 0 (checksums), 1 (has a checkpoint) and 2 (lists its "
                        "relation files) exist");
  }
  c->checksums = flags & FLAG_CHECKSUMS;
  c->has_checkpoint = flags & FLAG_CHECKPOINT;
  c->has_catalog = flags & FLAG_CATALOG;
  c->page_size = le_get32(b + 12);
  if (!power_of_two_within(c->page_size, HS_PAGE_SIZE_MIN, HS_PAGE_SIZE_MAX)) {
    snprintf(p->value, sizeof p->value, "%" PRIu32, c->page_size);
    return out_of_range(p, "page_size", "not a power of two from %u to %u", HS_PAGE_SIZE_MIN,
                        HS_PAGE_SIZE_MAX);
  }
  uint32_t state = le_get32(b + 20);
  if (state != HS_DB_SHUT_DOWN && state != HS_DB_IN_PRODUCTION && state != HS_DB_IN_RECOVERY) {
    snprintf(p->value, sizeof p->value, "%" PRIu32, state);
    return out_of_range(p, "state", "not 1 (shut down), 2 (in production) or 3 (in recovery)");
  }
  c->state = (hs_db_state)state;
  c->segment_bytes = le_get64(b + 24);
  if (c->segment_bytes != 0 &&
      !power_of_two_within(c->segment_bytes, HS_WAL_MIN_SEGMENT, HS_WAL_MAX_SEGMENT)) {
    snprintf(p->value, sizeof p->value, "%" PRIu64, c->segment_bytes);
    return out_of_range(p, "segment_bytes",
                        "neither 0 (never had a log) nor a power of two "
                        "from %u to %llu",
                        HS_WAL_MIN_SEGMENT, (unsigned long long)HS_WAL_MAX_SEGMENT);
  }
  c->system_id = le_get64(b + 32);
  if (c->system_id == 0) {
    snprintf(p->value, sizeof p->value, "0");
    return out_of_range(p, "system_id", "but every directory's is a random non-zero number");
  }
  c->checkpoint = le_get64(b + 40);
  c->redo = le_get64(b + 48);
  c->time_ms = le_get64(b + 56);
  c->id_floor = le_get64(b + 64);
  return lsns_valid(c, p);
}

void control_encode(const hs_control *c, uint64_t time_ms, unsigned char *b) {
  memset(b, 0, CONTROL_FILE_BYTES);
  memcpy(b, CONTROL_MAGIC, 8);
  le_put32(b + 8, HS_CONTROL_FORMAT);
  le_put32(b + 12, c->page_size);
  le_put32(b + 16, (c->checksums ? FLAG_CHECKSUMS : 0) | (c->has_checkpoint ? FLAG_CHECKPOINT : 0) |
                       (c->has_catalog ? FLAG_CATALOG : 0));
  le_put32(b + 20, (uint32_t)c->state);
  le_put64(b + 24, c->segment_bytes);
  le_put64(b + 32, c->system_id);
  le_put64(b + 40, c->checkpoint);
  le_put64(b + 48, c->redo);
  le_put64(b + 56, time_ms);
  le_put64(b + 64, c->id_floor);
  le_put32(b + CONTROL_CRC, hs_crc32c(0, b, CONTROL_CRC));
}

hs_status control_decode(const unsigned char *b, size_t n, const char *dir, hs_control *out) {
  memset(out, 0, sizeof *out);
  if (n != CONTROL_FILE_BYTES || memcmp(b, CONTROL_MAGIC, 8) != 0 ||
      hs_crc32c(0, b, CONTROL_CRC) != le_get32(b + CONTROL_CRC))
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s/%s: the control file is damaged (%zu bytes, bad magic or CRC): the "
                   "directory's page size and last checkpoint are unknown; " CONTROL_WAY_OUT,
                   dir, HS_CONTROL_FILE, n, dir);
  uint32_t format = le_get32(b + 8);
  if (format != HS_CONTROL_FORMAT)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s/%s: control file format %u, this hotset reads format %u: open the directory "
                   "with the hotset that wrote it",
                   dir, HS_CONTROL_FILE, format, HS_CONTROL_FORMAT);
  hs_control c;
  field_problem p;
  if (!fields_valid(b, &c, &p))
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s/%s: %s is %s, %s (the file passes its CRC: another program or a bug "
                   "wrote it so); " CONTROL_WAY_OUT,
                   dir, HS_CONTROL_FILE, p.field, p.value, p.allowed, dir);
  *out = c;
  return HS_OK;
}

hs_status hs_control_read(const char *dir, hs_control *out) {
  if (!dir || !out) return hs_fail(HS_ERR_MISUSE, 0, "hs_control_read: dir and out needed");
  memset(out, 0, sizeof *out);
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, HS_CONTROL_FILE);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      return hs_fail(HS_ERR_NOENT, err, "%s: no control file", path);
    return hs_fail(err == EACCES ? HS_ERR_ACCESS : HS_ERR_IO, err,
                   "%s: cannot open the control file: %s", path, strerror(err));
  }
  /* One byte more than the file holds: a longer file is damaged too. */
  unsigned char b[CONTROL_FILE_BYTES + 1];
  ssize_t got = pread(fd, b, sizeof b, 0);
  int err = errno;
  close(fd);
  if (got < 0)
    return hs_fail(HS_ERR_IO, err, "%s: cannot read the control file: %s", path, strerror(err));
  return control_decode(b, (size_t)got, dir, out);
}

/* The failure of a step of writing `path`: a full disk says so. */
static hs_status write_failed(int err, const char *path, const char *what) {
  if (err == ENOSPC || err == EDQUOT)
    return hs_fail(HS_ERR_NOSPACE, err, "%s: %s: the disk is full (%s)", path, what, strerror(err));
  return hs_fail(HS_ERR_IO, err, "%s: %s: %s", path, what, strerror(err));
}

hs_status control_write(const char *dir, const hs_control *c) {
  char path[4200], tmp[4300];
  snprintf(path, sizeof path, "%s/%s", dir, HS_CONTROL_FILE);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned char b[CONTROL_FILE_BYTES];
  control_encode(c, (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u, b);
  /* A file the next open would refuse is never written: the directory
   * would be lost by its own writer's mistake. */
  hs_control check;
  field_problem p;
  if (!fields_valid(b, &check, &p))
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: not written: its %s would be %s, %s (a bug in the writer; the old "
                   "control file is unchanged)",
                   path, p.field, p.value, p.allowed);

  int fd = sys_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return write_failed(errno, tmp, "cannot create the new control file");
  hs_status st = HS_OK;
  ssize_t n = sys_pwrite(fd, b, sizeof b, 0);
  if (n != (ssize_t)sizeof b)
    st = write_failed(n < 0 ? errno : ENOSPC, tmp, "cannot write the new control file");
  else if (sys_fsync(fd) != 0)
    st = write_failed(errno, tmp, "fsync of the new control file failed");
  close(fd);
  if (st == HS_OK && sys_rename(tmp, path) != 0)
    st = write_failed(errno, tmp, "cannot rename the new control file into place");
  if (st == HS_OK) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || sys_fsync(dfd) != 0)
      st = write_failed(errno, dir,
                        "fsync of the data directory after replacing its control "
                        "file failed");
    if (dfd >= 0) close(dfd);
  }
  if (st != HS_OK) sys_unlink(tmp);
  return st;
}

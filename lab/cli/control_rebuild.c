/*
 * cli/control_rebuild.c — a control file proven from the log and the data
 * files (cli/control_rebuild.h).
 */
#include "cli/control_rebuild.h"

#include "core/error.h"
#include "hotset/page.h"
#include "hotset/storage.h"
#include "hotset/wal.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the log: segment size and system id from its headers ------------ */

static int u64_order(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The segments of `waldir` whose header is valid and names its own start
 * (sorted), with the one segment size and system id they all carry. */
static hs_status log_identity(const char *waldir, uint64_t **starts, size_t *n,
                              uint64_t *segment_bytes, uint64_t *system_id) {
  *starts = NULL;
  *n = 0;
  *segment_bytes = *system_id = 0;
  DIR *d = opendir(waldir);
  if (!d)
    return hs_fail(HS_ERR_NOENT, errno, "%s: cannot list the log directory: %s", waldir,
                   strerror(errno));
  size_t cap = 0;
  hs_status st = HS_OK;
  for (struct dirent *e; st == HS_OK && (e = readdir(d)) != NULL;) {
    if (strlen(e->d_name) != WAL_SEGMENT_NAME_LEN ||
        strspn(e->d_name, "0123456789ABCDEF") != WAL_SEGMENT_NAME_LEN)
      continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", waldir, e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    unsigned char hb[WAL_SEG_HEADER];
    wal_seg_header h;
    bool valid = pread(fd, hb, sizeof hb, 0) == (ssize_t)sizeof hb &&
                 wal_seg_header_decode(hb, &h) == WAL_SEG_VALID;
    close(fd);
    uint64_t start = strtoull(e->d_name, NULL, 16);
    if (!valid || h.start != start) continue; /* spares, never written, damaged */
    if (*segment_bytes && (h.segment_bytes != *segment_bytes || h.system_id != *system_id)) {
      st = hs_fail(HS_ERR_CORRUPT, 0,
                   "%s: its segments disagree (%" PRIu64 "-byte segments of system %016" PRIX64
                   " and %" PRIu64 "-byte ones of system %016" PRIX64
                   "): move the segments of the other log out of %s first",
                   waldir, *segment_bytes, *system_id, h.segment_bytes, h.system_id, waldir);
      break;
    }
    *segment_bytes = h.segment_bytes;
    *system_id = h.system_id;
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      uint64_t *more = realloc(*starts, cap * sizeof *more);
      if (!more) {
        st = hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory listing %s", waldir);
        break;
      }
      *starts = more;
    }
    (*starts)[(*n)++] = start;
  }
  closedir(d);
  if (st != HS_OK) {
    free(*starts);
    *starts = NULL;
    *n = 0;
    return st;
  }
  if (*n) qsort(*starts, *n, sizeof **starts, u64_order);
  return HS_OK;
}

/* Whether the log reads from `redo`, record by record, to a record at
 * `checkpoint`. */
static bool reads_through(const char *waldir, uint64_t segment_bytes, hs_lsn redo,
                          hs_lsn checkpoint) {
  hs_wal_reader *r;
  if (hs_wal_reader_open(waldir, segment_bytes, redo, &r) != HS_OK) return false;
  hs_wal_read_record rec;
  bool got, reached = false;
  while (!reached && hs_wal_reader_next(r, &rec, &got) == HS_OK && got && rec.lsn <= checkpoint)
    reached = rec.lsn == checkpoint;
  hs_wal_reader_close(r);
  return reached;
}

/* The last checkpoint of the log: of every checkpoint record read in any
 * of its segments (each read from its first record on), the one with the
 * highest LSN from whose redo point the log reads to it. */
static hs_status last_checkpoint(const char *waldir, uint64_t segment_bytes, const uint64_t *starts,
                                 size_t n, bool *found, hs_lsn *checkpoint, hs_lsn *redo) {
  *found = false;
  hs_lsn *ckpt = NULL, *redos = NULL;
  size_t count = 0, cap = 0;
  hs_status st = HS_OK;
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    hs_wal_reader *r;
    st = hs_wal_reader_open(waldir, segment_bytes, starts[i] + WAL_SEG_HEADER, &r);
    if (st != HS_OK) break;
    hs_wal_read_record rec;
    bool got;
    while ((st = hs_wal_reader_next(r, &rec, &got)) == HS_OK && got &&
           rec.lsn < starts[i] + segment_bytes) {
      hs_lsn at_redo;
      if (!wal_record_is_checkpoint(&rec, &at_redo) || at_redo > rec.lsn) continue;
      if (count == cap) {
        cap = cap ? cap * 2 : 64;
        hs_lsn *a = realloc(ckpt, cap * sizeof *a), *b = a ? realloc(redos, cap * sizeof *b) : NULL;
        if (a) ckpt = a;
        if (b) redos = b;
        if (!a || !b) {
          st = hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory reading %s", waldir);
          break;
        }
      }
      ckpt[count] = rec.lsn;
      redos[count++] = at_redo;
    }
    hs_wal_reader_close(r);
  }
  for (size_t k = count; st == HS_OK && k-- > 0 && !*found;) {
    size_t best = 0; /* the highest not yet tried */
    for (size_t j = 1; j <= k; j++)
      if (ckpt[j] > ckpt[best]) best = j;
    if (reads_through(waldir, segment_bytes, redos[best], ckpt[best])) {
      *found = true;
      *checkpoint = ckpt[best];
      *redo = redos[best];
    }
    ckpt[best] = ckpt[k];
    redos[best] = redos[k];
  }
  free(ckpt);
  free(redos);
  return st;
}

/* ---- the data files: page size and checksums ------------------------- */

#define PROBE_BLOCKS 64u

static bool all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

/* The page size at which the relation files of `dir` are pages that pass
 * their checksums at their block numbers: at each power-of-two size, the
 * first PROBE_BLOCKS non-zero pages of every file are checked (a page's
 * checksum covers its block number, so at a wrong size almost none pass).
 * A crash leaves a few pages torn and a file's last page cut short, so a
 * size is proven when more than twice as many pages pass as fail there, and
 * no other size has any pass. *nonzero says whether any page was not zeros
 * (a directory of zeros proves nothing). */
static hs_status probe_pages(const char *dir, uint32_t *proven, bool *nonzero, bool *any_file) {
  *proven = 0;
  *nonzero = *any_file = false;
  enum { SIZES = 7 }; /* HS_PAGE_SIZE_MIN (1 KiB) .. HS_PAGE_SIZE_MAX (64 KiB) */
  uint64_t pass[SIZES] = {0}, fail[SIZES] = {0};
  DIR *d = opendir(dir);
  if (!d) return hs_fail(HS_ERR_NOENT, errno, "cannot list %s: %s", dir, strerror(errno));
  unsigned char *page = malloc(HS_PAGE_SIZE_MAX);
  hs_status st = page ? HS_OK : hs_fail(HS_ERR_NOMEM, ENOMEM, "out of memory");
  for (struct dirent *e; st == HS_OK && (e = readdir(d)) != NULL;) {
    if (!hs_smgr_parse_fork_filename(e->d_name, NULL, NULL)) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
      st = hs_fail(HS_ERR_IO, errno, "cannot open %s: %s", path, strerror(errno));
      if (fd >= 0) close(fd);
      break;
    }
    *any_file = true;
    for (unsigned k = 0; k < SIZES; k++) {
      uint32_t size = HS_PAGE_SIZE_MIN << k;
      for (hs_blockno b = 0; b < PROBE_BLOCKS && (off_t)(b + 1) * size <= sb.st_size; b++) {
        if (pread(fd, page, size, (off_t)b * size) != (ssize_t)size) break;
        if (all_zero(page, size)) continue;
        *nonzero = true;
        uint32_t expected, found;
        if (hs_page_verify(page, size, b, &expected, &found))
          pass[k]++;
        else
          fail[k]++;
      }
    }
    close(fd);
  }
  closedir(d);
  free(page);
  if (st != HS_OK) return st;
  unsigned with_passes = 0, best = 0;
  for (unsigned k = 0; k < SIZES; k++)
    if (pass[k]) {
      with_passes++;
      if (pass[k] > pass[best] || !pass[best]) best = k;
    }
  if (with_passes == 1 && pass[best] > 2 * fail[best]) *proven = HS_PAGE_SIZE_MIN << best;
  return HS_OK;
}

hs_status control_rebuild(const char *dir, const char *waldir, const rebuild_hints *hints,
                          hs_control *c, char *how, size_t how_len) {
  memset(c, 0, sizeof *c);
  uint64_t *starts = NULL, segment_bytes, system_id;
  size_t n = 0;
  hs_status st = log_identity(waldir, &starts, &n, &segment_bytes, &system_id);
  if (st != HS_OK) return st;
  if (n == 0) {
    free(starts);
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s holds no segment of a log with a valid header: nothing proves where "
                   "recovery would start; the control file cannot be rebuilt from it",
                   waldir);
  }
  if (hints->segment_bytes && hints->segment_bytes != segment_bytes) {
    free(starts);
    return hs_fail(HS_ERR_INVALID, 0,
                   "--segment-size %" PRIu64 ", but the segments of %s say %" PRIu64
                   " bytes: leave the flag out",
                   hints->segment_bytes, waldir, segment_bytes);
  }
  bool found;
  hs_lsn checkpoint = 0, redo = 0;
  st = last_checkpoint(waldir, segment_bytes, starts, n, &found, &checkpoint, &redo);
  bool log_from_zero = starts[0] == 0;
  free(starts);
  if (st != HS_OK) return st;
  if (!found && !log_from_zero)
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s holds no checkpoint record the log reads to from its redo point, and its "
                   "first segment is gone: nothing proves where recovery would start",
                   waldir);
  uint32_t proven;
  bool nonzero, any_file;
  st = probe_pages(dir, &proven, &nonzero, &any_file);
  if (st != HS_OK) return st;
  uint32_t page_size;
  bool checksums;
  const char *pages_from;
  if (proven) {
    page_size = proven;
    checksums = true;
    pages_from = "the data files' checksums";
    if ((hints->page_size && hints->page_size != proven) || hints->checksums == 0)
      return hs_fail(HS_ERR_INVALID, 0,
                     "%s's pages pass their checksums as %u-byte pages: leave --page-size and "
                     "--checksums out",
                     dir, proven);
  } else if (hints->page_size && hints->checksums >= 0) {
    page_size = hints->page_size;
    checksums = hints->checksums;
    pages_from = "--page-size and --checksums";
    if (checksums && nonzero)
      return hs_fail(HS_ERR_INVALID, 0,
                     "--checksums on, but %s's pages pass their checksums at no page size: they "
                     "carry none (--checksums off), or they are damaged (hotset verify --dir %s "
                     "--page-size %u names them)",
                     dir, dir, page_size);
  } else if (!nonzero) {
    page_size = hints->page_size ? hints->page_size : HS_PAGE_SIZE_DEFAULT;
    checksums = hints->checksums != 0;
    pages_from = any_file ? "no data page written yet" : "no relation file yet";
  } else {
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s's pages pass their checksums at no page size: they carry none, or are "
                   "damaged; give --page-size SIZE --checksums off if the directory was made "
                   "without checksums",
                   dir);
  }
  c->format = HS_CONTROL_FORMAT;
  c->page_size = page_size;
  c->checksums = checksums;
  c->segment_bytes = segment_bytes;
  c->system_id = system_id;
  c->has_checkpoint = found;
  c->checkpoint = checkpoint;
  c->redo = redo;
  c->state = HS_DB_IN_PRODUCTION;
  /* The list of the relation files the directory must hold, if it has
   * one: still required (its own CRC decides whether it is whole). */
  char relations[4400];
  snprintf(relations, sizeof relations, "%s/%s", dir, HS_SMGR_RELATIONS_FILE);
  c->has_catalog = access(relations, F_OK) == 0;
  if (found)
    snprintf(how, how_len,
             "rebuilt: %" PRIu64 "-byte log segments of system %016" PRIX64
             " (segment headers), last checkpoint at %" PRIX64 " with redo %" PRIX64
             " (the log reads from it to it), %u-byte pages with checksums %s (%s)",
             segment_bytes, system_id, checkpoint, redo, page_size, checksums ? "on" : "off",
             pages_from);
  else
    snprintf(how, how_len,
             "rebuilt: %" PRIu64 "-byte log segments of system %016" PRIX64
             " (segment headers), no checkpoint yet (the log begins at 0), %u-byte pages with "
             "checksums %s (%s)",
             segment_bytes, system_id, page_size, checksums ? "on" : "off", pages_from);
  return HS_OK;
}

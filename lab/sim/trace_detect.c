/*
 * sim/trace_detect.c — format names, and guessing a trace's format.
 *
 * The name is trusted first: libCacheSim's traces are conventionally named
 * after their format (x.oracleGeneral.bin, x.vscsi, x.csv, x.txt, each
 * maybe with .zst), and a name is unambiguous where bytes are not.
 *
 * Without a telling name the decoded first bytes (at most 64 KiB) decide:
 *
 *   text    no control bytes but tab, CR and LF (bytes >= 0x80 pass, for
 *           UTF-8 ids). Binary records all but always hold a zero byte in
 *           the high half of some 64-bit field, so text is easy to tell.
 *           A first line with a ',', tab, ';' or '|' is csv, else txt
 *           (and with a CSV spec given, text is csv).
 *   vscsi   the version field sits at a fixed offset in every record and
 *           is the same in each: every whole record in the sample must
 *           agree, with version 1 (32-byte records) or 2 (40-byte).
 *   oracle  every whole record in the sample has next_access_vtime -1 or
 *           later than its own position, and time stamps never decrease.
 *           Random bytes fail that within a few records; an all-zero file
 *           fails at once (0 is not after record 0).
 *
 * vscsi is tried before oraclegeneral because its test is the sharper one.
 * Anything else is left undecided, and the caller asks for --format rather
 * than reading garbage as requests.
 *
 * Text is a trace only if it reads as one: a txt trace holds one id per
 * line, so a line with a space or a tab inside it (after trimming) is prose
 * (a README, a log), not an id, and the guess is refused naming that line.
 * A csv trace without a spec must name its columns in a header
 * (trace_csv.c), which prose with a comma in its first line does not.
 *
 * The same tests tell whether a format given by the user or by the name
 * fits the content (trace_content_fits): when it does not and the content
 * looks like another format, the caller says so rather than reading one
 * format's records as another's — which goes wrong only at the far end
 * of the file, as a "truncated" last record, or never.
 */
#include "sim/trace_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const format_names[] = {
    [HS_TRACE_AUTO] = "auto",   [HS_TRACE_ORACLEGENERAL] = "oraclegeneral",
    [HS_TRACE_VSCSI] = "vscsi", [HS_TRACE_CSV] = "csv",
    [HS_TRACE_TXT] = "txt",
};

const char *hs_trace_format_name(hs_trace_format f) {
  if ((unsigned)f >= sizeof format_names / sizeof format_names[0]) return "unknown";
  return format_names[f];
}

bool hs_trace_format_parse(const char *name, hs_trace_format *out) {
  if (!name) return false;
  for (unsigned i = 0; i < sizeof format_names / sizeof format_names[0]; i++) {
    /* Case-insensitive so that libCacheSim's spelling "oracleGeneral"
     * works too. */
    if (strcasecmp(name, format_names[i]) == 0) {
      *out = (hs_trace_format)i;
      return true;
    }
  }
  return false;
}

static bool ends_with(const char *s, size_t len, const char *suffix) {
  size_t n = strlen(suffix);
  return len >= n && strncasecmp(s + len - n, suffix, n) == 0;
}

bool trace_format_from_name(const char *path, hs_trace_format *f, const char **suffix, bool *zst) {
  static const struct {
    const char *suffix;
    hs_trace_format format;
  } by_suffix[] = {
      {".oracleGeneral", HS_TRACE_ORACLEGENERAL},
      {".bin", HS_TRACE_ORACLEGENERAL},
      {".vscsi", HS_TRACE_VSCSI},
      {".csv", HS_TRACE_CSV},
      {".txt", HS_TRACE_TXT},
  };
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t len = strlen(base);
  *zst = ends_with(base, len, ".zst");
  if (*zst) len -= 4;
  for (size_t i = 0; i < sizeof by_suffix / sizeof by_suffix[0]; i++) {
    /* The suffix must follow something: ".csv" alone is a hidden file
     * named csv, not a CSV trace. */
    if (len > strlen(by_suffix[i].suffix) && ends_with(base, len, by_suffix[i].suffix)) {
      *f = by_suffix[i].format;
      *suffix = by_suffix[i].suffix;
      return true;
    }
  }
  return false;
}

static uint16_t le16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p) {
  return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Offsets of the version field in the two record layouts. */
#define VSCSI1_VER_OFF 14
#define VSCSI2_VER_OFF 2

unsigned trace_vscsi_version(const unsigned char *p, size_t n, unsigned *v1, unsigned *v2) {
  *v1 = n >= 32 ? le16(p + VSCSI1_VER_OFF) : 0;
  *v2 = n >= 40 ? le16(p + VSCSI2_VER_OFF) : 0;
  /* v1 first: its field is at a spot that in a v2 record is the high half
   * of the scatter-gather count (tiny in practice), while v2's spot in a
   * v1 record is the high half of a sequence number, which may be
   * anything. */
  if (n >= 32 && *v1 >> 8 == 1) return 1;
  if (n >= 40 && *v2 >> 8 == 2) return 2;
  return 0;
}

static bool looks_vscsi(const unsigned char *p, size_t n, unsigned *version) {
  unsigned v1, v2;
  unsigned v = trace_vscsi_version(p, n, &v1, &v2);
  if (v == 0) return false;
  size_t size = v == 1 ? 32 : 40, off = v == 1 ? VSCSI1_VER_OFF : VSCSI2_VER_OFF;
  uint16_t first = le16(p + off);
  for (size_t i = 1; i < n / size && i < 256; i++)
    if (le16(p + i * size + off) != first) return false;
  *version = v;
  return true;
}

static bool looks_oraclegeneral(const unsigned char *p, size_t n) {
  if (n < 24) return false;
  uint32_t prev_time = 0;
  for (size_t i = 0; i < n / 24 && i < 1024; i++) {
    const unsigned char *r = p + i * 24;
    uint32_t time = le32(r);
    int64_t next = (int64_t)le64(r + 16);
    /* Later than its own position in either counting convention (from 0,
     * as hotset writes it, or from 1, as libCacheSim does). */
    if (next != -1 && next <= (int64_t)i) return false;
    if (i > 0 && time < prev_time) return false;
    prev_time = time;
  }
  return true;
}

static bool looks_text(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = p[i];
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7F) return false;
  }
  return true;
}

static bool is_blank(unsigned char c) {
  return c == ' ' || c == '\t';
}

/* A line for a message: at most 60 bytes of it (not cutting a UTF-8
 * character), quoted, "..." if cut. */
static void quote_line(const unsigned char *p, size_t n, char *out, size_t out_len) {
  size_t cut = n;
  if (cut > 60) {
    cut = 60;
    while (cut > 0 && (p[cut] & 0xC0) == 0x80) cut--;
  }
  snprintf(out, out_len, "\"%.*s%s\"", (int)cut, (const char *)p, cut < n ? "..." : "");
}

bool trace_text_is_ids(const unsigned char *p, size_t n, char *why, size_t why_len) {
  /* Lines are counted as the reader counts them (blank ones too), so the
   * number is an editor's. The sample may end inside a line: that piece
   * is a prefix of the line, and a prefix has a blank inside only if the
   * whole line does, so a cut never makes a trace look like prose. */
  unsigned long long line = 0;
  for (size_t i = 0; i < n;) {
    const unsigned char *nl = memchr(p + i, '\n', n - i);
    size_t end = nl ? (size_t)(nl - p) : n, a = i, b = end;
    line++;
    if (b > a && p[b - 1] == '\r') b--;
    while (a < b && is_blank(p[a])) a++;
    while (b > a && is_blank(p[b - 1])) b--;
    for (size_t k = a; k < b; k++) {
      if (is_blank(p[k])) {
        char shown[80];
        quote_line(p + a, b - a, shown, sizeof shown);
        snprintf(why, why_len, "line %llu (%s) is not an object id", line, shown);
        return false;
      }
    }
    i = end + 1;
  }
  return true;
}

hs_trace_format trace_format_from_content(const unsigned char *p, size_t n, bool csv_given,
                                          char *why, size_t why_len, bool *prose) {
  *prose = false;
  if (n == 0) {
    snprintf(why, why_len, "the file is empty");
    return HS_TRACE_AUTO;
  }
  if (looks_text(p, n)) {
    if (csv_given) {
      snprintf(why, why_len, "text, and a CSV spec was given");
      return HS_TRACE_CSV;
    }
    const unsigned char *nl = memchr(p, '\n', n);
    size_t first = nl ? (size_t)(nl - p) : n;
    static const char delims[] = ",\t;|";
    for (const char *d = delims; *d; d++) {
      if (memchr(p, *d, first)) {
        snprintf(why, why_len, "text with '%s' in the first line",
                 *d == '\t' ? "\\t" : (char[2]){*d, 0});
        return HS_TRACE_CSV;
      }
    }
    if (!trace_text_is_ids(p, n, why, why_len)) {
      *prose = true;
      return HS_TRACE_AUTO;
    }
    snprintf(why, why_len, "text with one field per line");
    return HS_TRACE_TXT;
  }
  unsigned version;
  if (looks_vscsi(p, n, &version)) {
    snprintf(why, why_len, "the version field of its %u-byte records", version == 1 ? 32 : 40);
    return HS_TRACE_VSCSI;
  }
  if (looks_oraclegeneral(p, n)) {
    snprintf(why, why_len, "24-byte records with plausible next-access times");
    return HS_TRACE_ORACLEGENERAL;
  }
  snprintf(why, why_len, "binary, but neither vscsi nor oraclegeneral records");
  return HS_TRACE_AUTO;
}

bool trace_content_fits(hs_trace_format f, const unsigned char *p, size_t n, uint64_t file_size,
                        char *why, size_t why_len) {
  if (n == 0) return true; /* an empty trace is any format's */
  unsigned version;
  size_t record = 24;
  switch (f) {
  case HS_TRACE_ORACLEGENERAL:
    if (!looks_oraclegeneral(p, n)) {
      snprintf(why, why_len,
               "its first records' next-access times and time stamps are not "
               "those of oraclegeneral records");
      return false;
    }
    break;
  case HS_TRACE_VSCSI:
    if (!looks_vscsi(p, n, &version)) {
      snprintf(why, why_len,
               "its first records carry no vscsi version field (1 or 2) that they all agree on");
      return false;
    }
    record = version == 1 ? 32 : 40;
    break;
  case HS_TRACE_CSV:
  case HS_TRACE_TXT:
    if (!looks_text(p, n)) {
      snprintf(why, why_len, "it is not text (it holds control bytes)");
      return false;
    }
    return true;
  default:
    return true;
  }
  /* A truncated last record is possible in a trace of the format; but
   * together with content that looks like another format it is one more
   * sign of the wrong one. */
  if (file_size % record != 0) {
    snprintf(why, why_len, "its %llu bytes are no whole number of %zu-byte records",
             (unsigned long long)file_size, record);
    return false;
  }
  return true;
}

/*
 * cli/args.h — the one argument parser every `hotset` subcommand uses.
 *
 * A subcommand describes its flags in a table (name, type, where to store the
 * value, allowed range) and calls args_parse. Sharing one parser is what keeps
 * the subcommands consistent: the same spellings (`--name value` and
 * `--name=value`), the same size suffixes, and the same behaviour on mistakes —
 * ONE line on stderr naming the flag and what is wrong with it, then the
 * subcommand's usage, then exit status 2 — so scripts and tests can rely on it.
 * `--help` (or `-h`) prints the usage on stdout and exits 0.
 *
 * Value types:
 *   ARGS_FLAG       a boolean: `--json` sets it; `--json=false` (or 0/no/off)
 *                   clears it, `--json=true` (or 1/yes/on) sets it.
 *   ARGS_UINT       a decimal integer, 0 .. UINT64_MAX, no sign.
 *   ARGS_DOUBLE     a finite decimal number (strtod syntax).
 *   ARGS_SIZE       a byte count: an integer with an optional suffix, matched
 *                   case-insensitively. B = bytes; K, KB, KiB = 1024;
 *                   M, MB, MiB = 1024^2; G, GB, GiB = 1024^3; T, TB, TiB =
 *                   1024^4. KB/MB/GB deliberately mean powers of 1024, as in
 *                   PostgreSQL's settings (shared_buffers = 128MB), because
 *                   every size here is a number of pages anyway.
 *   ARGS_UINT_LIST  a comma-separated list of integers, e.g. `--threads 1,2,4`
 *                   (no empty items, at most ARGS_LIST_MAX of them).
 *   ARGS_STRING     any non-empty string, stored as a pointer into argv.
 * Range limits (min/max for integers, sizes and list items; dmin/dmax for
 * doubles) are inclusive; a max of 0 means "no upper limit". Repeating a flag
 * replaces the earlier value.
 */
#ifndef HOTSET_CLI_ARGS_H
#define HOTSET_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARGS_LIST_MAX 64

typedef enum args_kind {
  ARGS_FLAG = 0,  /* dest: bool * */
  ARGS_UINT,      /* dest: uint64_t * */
  ARGS_DOUBLE,    /* dest: double * */
  ARGS_SIZE,      /* dest: uint64_t * (bytes) */
  ARGS_UINT_LIST, /* dest: args_uint_list * */
  ARGS_STRING     /* dest: const char ** */
} args_kind;

typedef struct args_uint_list {
  uint32_t n;
  uint64_t v[ARGS_LIST_MAX];
} args_uint_list;

/* One flag. Fill it with designated initializers:
 *   {.name = "pages", .kind = ARGS_UINT, .dest = &pages, .min = 1, .max = UINT32_MAX} */
typedef struct args_opt {
  const char *name; /* without the leading "--" */
  args_kind kind;
  void *dest;
  uint64_t min, max; /* ARGS_UINT, ARGS_SIZE, each item of ARGS_UINT_LIST */
  double dmin, dmax; /* ARGS_DOUBLE */
} args_opt;

/* Who is parsing: the name used in messages and the text --help prints. */
typedef struct args_cmd {
  const char *prog;  /* e.g. "hotset pool-bench" */
  const char *usage; /* full usage text, ending in a newline */
} args_cmd;

/* Parses argv[1 .. argc) (argv[0] is the subcommand's own name) against
 * `opts`. Arguments that are not flags (and everything after a lone "--") are
 * positional: up to `max_positional` of them are moved, in order, to
 * argv[1 ..] and their number is returned; one more is an error. On an error
 * it prints one line and the usage to stderr and exits 2; on --help it prints
 * the usage to stdout and exits 0. */
int args_parse(const args_cmd *cmd, const args_opt *opts, size_t nopts, int argc, char **argv,
               int max_positional);

/* For checks that span flags or need more than a range, after args_parse:
 * prints "<prog>: <message>" and the usage to stderr, exits 2. */
_Noreturn void args_usage_error(const args_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The typed parsers behind args_parse; each accepts the whole string or
 * nothing (returning false, *out untouched). */
bool args_parse_uint(const char *s, uint64_t *out);
bool args_parse_double(const char *s, double *out);
bool args_parse_size(const char *s, uint64_t *out);
/* Items are checked against [min, max] (max 0: unlimited) as well. */
bool args_parse_uint_list(const char *s, uint64_t min, uint64_t max, args_uint_list *out);
bool args_parse_bool(const char *s, bool *out);

/* Writes a byte count the way people write it: "8 KiB", "1 MiB", or
 * "12345 B" when it is no whole multiple of a unit. Returns buf. */
char *args_format_size(uint64_t bytes, char *buf, size_t len);

/* A list of replacement-policy specs, e.g. "lru,s3fifo:small=0.2,move=1,arc":
 * split at commas, except that an item with '=' but no ':' continues the
 * spec before it (it is that spec's next parameter). "all" expands to every
 * policy the buffer pool accepts (pool_only) or every policy at all.
 * The list may be any length; more than `max` specs, or a spec (with its
 * parameters) longer than ARGS_SPEC_LEN - 1 characters, is an error saying
 * so, never a cut. Returns the number of specs, or -1 with *why set (valid
 * until the next call). */
#define ARGS_SPEC_LEN 160
int args_split_policies(const char *s, bool pool_only, char out[][ARGS_SPEC_LEN], int max,
                        const char **why);

#endif

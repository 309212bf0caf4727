/*
 * common/args.h — the one argument parser every `hotset` subcommand uses.
 *
 * A subcommand describes its flags in a table (name, type, where to store the
 * value, allowed range, default, help) and calls args_parse. Sharing one
 * parser is what keeps the subcommands consistent: the same spellings
 * (`--name value` and `--name=value`), the same size grammar, and the same
 * behaviour on mistakes — ONE line on stderr naming the flag and what is
 * wrong with it, then one line saying where the flags are described ("run
 * 'hotset bench pool --help' for the flags"), then exit status 2 — so
 * scripts and tests can rely on it, and the error is not buried under a
 * screenful of usage. `--help` (or `-h`) prints the usage on stdout and
 * exits 0.
 *
 * The usage is generated from the table, as policies' parameters are from
 * theirs: each flag carries its default, written once (args_parse stores it
 * before reading argv, and the usage shows it), and a help text; the command
 * carries a synopsis, an opening paragraph and closing notes. A command that
 * sets args_cmd.usage instead keeps printing that text.
 *
 * Value types:
 *   ARGS_FLAG       a boolean: `--json` sets it; `--json=false` (or 0/no/off)
 *                   clears it, `--json=true` (or 1/yes/on) sets it, and
 *                   `--no-json` clears it too (for a flag named no-X, `--X`
 *                   clears it): every boolean can be undone, so a script
 *                   can override an alias or a default either way.
 *   ARGS_UINT       a decimal integer, 0 .. UINT64_MAX, no sign.
 *   ARGS_DOUBLE     a finite decimal number (strtod syntax).
 *   ARGS_SIZE       a byte count in the one size grammar (core/size.h): a
 *                   whole number with an optional unit B, K, M, G or T,
 *                   each also written KB/KiB, MB/MiB ..., in any case, and
 *                   each a power of 1024 (64KiB = 64KB = 64k = 65536).
 *   ARGS_UINT_LIST  a comma-separated list of integers, e.g. `--threads 1,2,4`
 *                   (no empty items, at most ARGS_LIST_MAX of them).
 *   ARGS_SIZE_LIST  the same of sizes, e.g. `--sizes 8KiB,64KiB`.
 *   ARGS_STRING     any non-empty string, stored as a pointer into argv.
 *   ARGS_PATH       a non-empty path, stored as a pointer into argv; `max`,
 *                   if set, is the longest accepted, in characters (the
 *                   tools build file names beside it in fixed buffers).
 * Range limits (min/max for integers, sizes and list items; dmin/dmax for
 * doubles) are inclusive; a max of 0 means "no upper limit". `power_of_two`
 * (integers, sizes and size lists' items) refuses any other value. Repeating a flag replaces the
 * earlier value.
 */
#ifndef HOTSET_LAB_COMMON_ARGS_H
#define HOTSET_LAB_COMMON_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARGS_LIST_MAX 64

typedef enum args_kind {
  ARGS_FLAG = 0,  /* dest: bool * */
  ARGS_UINT,      /* dest: uint64_t * */
  ARGS_DOUBLE,    /* dest: double * */
  ARGS_SIZE,      /* dest: uint64_t * (bytes) */
  ARGS_UINT_LIST, /* dest: args_uint_list * */
  ARGS_STRING,    /* dest: const char ** */
  ARGS_PATH,      /* dest: const char ** */
  ARGS_SIZE_LIST  /* dest: args_uint_list * (bytes) */
} args_kind;

typedef struct args_uint_list {
  uint32_t n;
  uint64_t v[ARGS_LIST_MAX];
} args_uint_list;

/* One flag. Fill it with designated initializers:
 *   {.name = "pages", .kind = ARGS_UINT, .dest = &pages, .min = 1, .max = UINT32_MAX,
 *    .def = "4096", .help = "blocks in the relation"} */
typedef struct args_opt {
  const char *name; /* without the leading "--" */
  args_kind kind;
  void *dest;
  uint64_t min, max; /* ARGS_UINT, ARGS_SIZE, each item of ARGS_UINT_LIST
                        and ARGS_SIZE_LIST; max alone: ARGS_PATH's longest */
  bool power_of_two; /* ARGS_UINT, ARGS_SIZE, ARGS_SIZE_LIST */
  double dmin, dmax; /* ARGS_DOUBLE */
  /* All optional. `def`: the default as a user would write it; args_parse
   * stores it in dest before reading argv and the usage appends "(default
   * DEF)". A default that depends on other flags has no `def` (its help
   * says it). `arg`: the value's name in the usage ("LIST"); NULL takes one
   * from the kind (N, X, SIZE, LIST, VALUE). `help`: wrapped to 80 columns;
   * a '\n' in it starts a new line. */
  const char *def;
  const char *arg;
  const char *help;
} args_opt;

/* Who is parsing: the name used in messages and what --help prints. With
 * `usage` set, that text whole; with `usage` NULL, the text generated from
 * the flag table, and then the args_cmd must be the `cmd` of an
 * args_command, which holds the rest of the text. */
typedef struct args_cmd {
  const char *prog;  /* e.g. "hotset bench pool" */
  const char *usage; /* full usage text, ending in a newline; or NULL */
} args_cmd;

/* A command whose usage is generated:
 *   usage: PROG SYNOPSIS
 *
 *   ABOUT
 *
 *   flags:
 *     --name ARG        help (default DEF)
 *     --help            show this help
 *
 *   NOTES
 * Pass &command.cmd to args_parse and args_usage_error. */
typedef struct args_command {
  args_cmd cmd;         /* .usage NULL */
  const char *synopsis; /* e.g. "[flags]" (NULL: that) */
  const char *about;    /* lines ending in a newline, or NULL */
  const char *notes;    /* the same, after the flags */
} args_command;

/* The size grammar, stated once: the footer of `hotset --help` (and the
 * README's paragraph on sizes) say it whole; a command with SIZE flags
 * points there with ARGS_SIZE_NOTE. */
#define ARGS_SIZE_GRAMMAR                                                                          \
  "A SIZE is a whole number of bytes with an optional unit B, K, M, G or T (any\n"                 \
  "case), each a power of 1024. KB and KiB spell K too, MB and MiB spell M, and so\n"              \
  "on: 64KiB = 64KB = 64k = 65536 bytes, and 1GB is 2^30 bytes, as cachesim and\n"                 \
  "PostgreSQL read it. A size in powers of 1000 is written in bytes.\n"
#define ARGS_SIZE_NOTE "A SIZE is bytes, or 64KiB, 64KB, 64k (all 65536): see 'hotset --help'.\n"

/* Stores every flag's default (`def`), then parses argv[1 .. argc) (argv[0]
 * is the subcommand's own name) against `opts`. Arguments that are not
 * flags (and everything after a lone "--") are positional: up to
 * `max_positional` of them are moved, in order, to argv[1 ..] and their
 * number is returned; one more is an error. On an error it prints the error
 * line and the hint line to stderr and exits 2; on --help it prints the
 * usage to stdout and exits 0. */
int args_parse(const args_cmd *cmd, const args_opt *opts, size_t nopts, int argc, char **argv,
               int max_positional);

/* The line saying every boolean flag has a --no- form, with one of the
 * table's own as the example; nothing if the table has no boolean flag. */
void args_print_negation_note(const args_opt *opts, size_t nopts, FILE *out);
/* Writes the usage: cmd->usage, or the text generated from the table and
 * the args_command around cmd. */
void args_print_usage(const args_cmd *cmd, const args_opt *opts, size_t nopts, FILE *out);

/* For checks that span flags or need more than a range, after args_parse:
 * prints "<prog>: <message>" and "run '<prog> --help' for the flags" to
 * stderr, exits 2. */
_Noreturn void args_usage_error(const args_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The typed parsers behind args_parse; each accepts the whole string or
 * nothing (returning false, *out untouched). */
bool args_parse_uint(const char *s, uint64_t *out);
bool args_parse_double(const char *s, double *out);
/* After a false return hs_last_error() says why. */
bool args_parse_size(const char *s, uint64_t *out);
/* Items are checked against [min, max] (max 0: unlimited) as well. */
bool args_parse_uint_list(const char *s, uint64_t min, uint64_t max, args_uint_list *out);
bool args_parse_bool(const char *s, bool *out);

/* A list flag's value split at commas into items[0 .. max), each shorter
 * than ARGS_ITEM_LEN; returns how many. An empty item (",a", "a,,b",
 * "a,"), one too long, more than `max` or none at all is a usage error
 * naming --flag: never skipped, never cut. */
#define ARGS_ITEM_LEN 48
size_t args_split_list(const args_cmd *cmd, const char *flag, const char *value,
                       char items[][ARGS_ITEM_LEN], size_t max);
/* A list of distinct choices among names[0 .. n) (n at most 16): their
 * indexes, in the order given, to out[]; returns how many. An unknown or
 * repeated item is a usage error naming --flag and what it takes. */
int args_choice_list(const args_cmd *cmd, const char *flag, const char *value,
                     const char *const *names, int n, int *out);

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
/* The policies a command runs, from the policy registry: every one the
 * buffer pool accepts (pool_only), or every one the simulator does; as
 * "lru, fifo, ...". A static buffer. */
const char *args_policy_list(bool pool_only);
int args_split_policies(const char *s, bool pool_only, char out[][ARGS_SPEC_LEN], int max,
                        const char **why);

#endif

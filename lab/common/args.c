/*
 * common/args.c — the shared flag parser (see args.h for the accepted syntax).
 *
 * Parsing is table-driven so that every subcommand gets the same spellings
 * and the same error behaviour for free; the typed parsers are strict (the
 * whole string must match) because a silently truncated "--pool 12XB" that
 * ran with 12 bytes would be worse than refusing it.
 */
#include "common/args.h"

#include "core/size.h"
#include "hotset/policy.h"
#include "policy/policy_impl.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static _Noreturn void usage_error_v(const args_cmd *cmd, const char *fmt, va_list ap) {
  /* One line first, so a script can take `head -n1` of stderr as "the" error;
   * then where to look, not the whole usage: 30 lines of flags would bury
   * the one line that matters. */
  fprintf(stderr, "%s: ", cmd->prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  fprintf(stderr, "run '%s --help' for the flags\n", cmd->prog);
  exit(2);
}

_Noreturn void args_usage_error(const args_cmd *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  usage_error_v(cmd, fmt, ap);
}

/* ---- the generated usage ---- */

#define USAGE_WIDTH    80
#define USAGE_HELP_COL 22 /* where the flags' help starts */

static const char *value_name(const args_opt *o) {
  if (o->arg) return o->arg;
  switch (o->kind) {
  case ARGS_FLAG:
    return NULL;
  case ARGS_UINT:
    return "N";
  case ARGS_DOUBLE:
    return "X";
  case ARGS_SIZE:
    return "SIZE";
  case ARGS_UINT_LIST:
  case ARGS_SIZE_LIST:
    return "LIST";
  case ARGS_PATH:
    return "PATH";
  case ARGS_STRING:
    break;
  }
  return "VALUE";
}

/* Writes `text` from column `col` (the cursor is there), wrapping at word
 * boundaries to USAGE_WIDTH and indenting continuation lines to `indent`;
 * a '\n' in the text starts a new line. Ends the last line. */
static void put_wrapped(FILE *out, const char *text, int col, int indent) {
  const char *p = text;
  while (*p) {
    if (*p == '\n') {
      fprintf(out, "\n%*s", indent, "");
      col = indent;
      p++;
      continue;
    }
    if (*p == ' ') {
      p++;
      continue;
    }
    size_t word = strcspn(p, " \n");
    bool first = col == indent;
    if (!first && col + 1 + (int)word > USAGE_WIDTH) {
      fprintf(out, "\n%*s", indent, "");
      col = indent;
      first = true;
    }
    if (!first) {
      fputc(' ', out);
      col++;
    }
    fwrite(p, 1, word, out);
    col += (int)word;
    p += word;
  }
  fputc('\n', out);
}

static void put_flag(FILE *out, const char *name, const char *arg, const char *help,
                     const char *def) {
  char head[96];
  int len = snprintf(head, sizeof head, "  --%s%s%s", name, arg ? " " : "", arg ? arg : "");
  fputs(head, out);
  if (len + 2 > USAGE_HELP_COL) {
    /* A long flag: its help goes under it. */
    fprintf(out, "\n%*s", USAGE_HELP_COL, "");
  } else {
    fprintf(out, "%*s", USAGE_HELP_COL - len, "");
  }
  /* The default closes a one-line help; under a longer one it gets a line
   * of its own, where the eye finds it. */
  const char *h = help ? help : "";
  bool own_line = help && def && strlen(h) > USAGE_WIDTH - USAGE_HELP_COL;
  char text[1024];
  snprintf(text, sizeof text, "%s%s%s%s%s", h,
           def ? (own_line ? "\n"
                  : help   ? " "
                           : "")
               : "",
           def ? "(default " : "", def ? def : "", def ? ")" : "");
  put_wrapped(out, text, USAGE_HELP_COL, USAGE_HELP_COL);
}

static const args_opt *find_opt(const args_opt *opts, size_t nopts, const char *name, size_t len);

void args_print_negation_note(const args_opt *opts, size_t nopts, FILE *out) {
  /* The example: --json where the command has it (every user knows it; a
   * table may also hold flags its own usage text spells otherwise). */
  const args_opt *example = find_opt(opts, nopts, "json", 4);
  for (size_t i = 0; i < nopts && !(example && example->kind == ARGS_FLAG); i++)
    if (opts[i].kind == ARGS_FLAG && strncmp(opts[i].name, "no-", 3) != 0) example = &opts[i];
  if (example && example->kind == ARGS_FLAG)
    fprintf(out,
            "\nA flag without a value has an opposite: --no-%s turns --%s off (as does "
            "--%s=false).\n",
            example->name, example->name, example->name);
  /* A flag that is itself a negation is undone by its plain name. */
  for (size_t i = 0; i < nopts; i++)
    if (opts[i].kind == ARGS_FLAG && strncmp(opts[i].name, "no-", 3) == 0)
      fprintf(out, "%s--%s turns --%s off.\n", example ? "" : "\n", opts[i].name + 3, opts[i].name);
}

void args_print_usage(const args_cmd *cmd, const args_opt *opts, size_t nopts, FILE *out) {
  if (cmd->usage) {
    fputs(cmd->usage, out);
    args_print_negation_note(opts, nopts, out);
    return;
  }
  /* cmd is the first member of an args_command (args.h). */
  const args_command *c = (const args_command *)cmd;
  fprintf(out, "usage: %s %s\n", cmd->prog, c->synopsis ? c->synopsis : "[flags]");
  if (c->about) fprintf(out, "\n%s", c->about);
  fputs("\nflags:\n", out);
  for (size_t i = 0; i < nopts; i++)
    put_flag(out, opts[i].name, value_name(&opts[i]), opts[i].help, opts[i].def);
  put_flag(out, "help", NULL, "show this help", NULL);
  args_print_negation_note(opts, nopts, out);
  if (c->notes) fprintf(out, "\n%s", c->notes);
}

/* The n characters at s, all digits, as a number that fits 64 bits. */
static bool parse_uint_span(const char *s, size_t n, uint64_t *out) {
  if (n == 0) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i])) return false;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false; /* overflow */
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

bool args_parse_uint(const char *s, uint64_t *out) {
  return s && parse_uint_span(s, strlen(s), out);
}

bool args_parse_double(const char *s, double *out) {
  /* strtod would skip leading blanks and accept "nan"/"inf": neither is a
   * value anyone means to pass as a duration or a ratio. */
  if (!s || !*s || isspace((unsigned char)*s)) return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno == ERANGE || !isfinite(v)) return false;
  *out = v;
  return true;
}

bool args_parse_size(const char *s, uint64_t *out) {
  return hs_size_parse(s, out) == HS_OK;
}

/* Syntax only: "N[,N]...". */
typedef enum list_result { LIST_OK, LIST_BAD, LIST_TOO_LONG } list_result;

static list_result parse_list_syntax(const char *s, args_uint_list *out) {
  args_uint_list l = {0};
  const char *p = s;
  if (!s || !*s) return LIST_BAD;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    if (l.n == ARGS_LIST_MAX) return LIST_TOO_LONG;
    if (!parse_uint_span(p, n, &l.v[l.n])) return LIST_BAD;
    l.n++;
    if (!comma) break;
    p = comma + 1;
  }
  *out = l;
  return LIST_OK;
}

static bool in_range(uint64_t v, uint64_t min, uint64_t max) {
  return v >= min && (max == 0 || v <= max);
}

bool args_parse_uint_list(const char *s, uint64_t min, uint64_t max, args_uint_list *out) {
  args_uint_list l;
  if (parse_list_syntax(s, &l) != LIST_OK) return false;
  for (uint32_t i = 0; i < l.n; i++) {
    if (!in_range(l.v[i], min, max)) return false;
  }
  *out = l;
  return true;
}

bool args_parse_bool(const char *s, bool *out) {
  static const char *const yes[] = {"true", "1", "yes", "on"};
  static const char *const no[] = {"false", "0", "no", "off"};
  if (!s) return false;
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(s, yes[i]) == 0) {
      *out = true;
      return true;
    }
    if (strcasecmp(s, no[i]) == 0) {
      *out = false;
      return true;
    }
  }
  return false;
}

char *args_format_size(uint64_t bytes, char *buf, size_t len) {
  static const char *const units[] = {"TiB", "GiB", "MiB", "KiB"};
  static const unsigned shifts[] = {40, 30, 20, 10};
  for (size_t i = 0; i < 4; i++) {
    uint64_t unit = (uint64_t)1 << shifts[i];
    if (bytes >= unit && bytes % unit == 0) {
      snprintf(buf, len, "%" PRIu64 " %s", bytes / unit, units[i]);
      return buf;
    }
  }
  snprintf(buf, len, "%" PRIu64 " B", bytes);
  return buf;
}

/* Range messages say the limit the way the flag is written. */
static void check_uint_range(const args_cmd *cmd, const args_opt *o, const char *val, uint64_t v) {
  char lim[32];
  bool size = o->kind == ARGS_SIZE || o->kind == ARGS_SIZE_LIST;
  if (v < o->min) {
    if (size)
      args_format_size(o->min, lim, sizeof lim);
    else
      snprintf(lim, sizeof lim, "%" PRIu64, o->min);
    args_usage_error(cmd, "--%s: \"%s\" must be at least %s", o->name, val, lim);
  }
  if (o->max && v > o->max) {
    if (size)
      args_format_size(o->max, lim, sizeof lim);
    else
      snprintf(lim, sizeof lim, "%" PRIu64, o->max);
    args_usage_error(cmd, "--%s: \"%s\" must be at most %s", o->name, val, lim);
  }
}

static void check_power_of_two(const args_cmd *cmd, const args_opt *o, uint64_t v) {
  if (o->power_of_two && (v == 0 || (v & (v - 1)) != 0))
    args_usage_error(cmd, "--%s: %" PRIu64 " is not a power of two", o->name, v);
}

static void store_value(const args_cmd *cmd, const args_opt *o, const char *val) {
  switch (o->kind) {
  case ARGS_FLAG:
    if (!args_parse_bool(val, (bool *)o->dest))
      args_usage_error(cmd, "--%s: \"%s\" is not a boolean (true or false)", o->name, val);
    break;
  case ARGS_UINT: {
    uint64_t v;
    if (!args_parse_uint(val, &v))
      args_usage_error(cmd, "--%s: \"%s\" is not a %s integer", o->name, val,
                       o->min >= 1 ? "positive" : "non-negative");
    check_uint_range(cmd, o, val, v);
    check_power_of_two(cmd, o, v);
    *(uint64_t *)o->dest = v;
    break;
  }
  case ARGS_SIZE: {
    uint64_t v;
    if (!args_parse_size(val, &v)) args_usage_error(cmd, "--%s: %s", o->name, hs_last_error());
    check_uint_range(cmd, o, val, v);
    check_power_of_two(cmd, o, v);
    *(uint64_t *)o->dest = v;
    break;
  }
  case ARGS_DOUBLE: {
    double v;
    if (!args_parse_double(val, &v))
      args_usage_error(cmd, "--%s: \"%s\" is not a number", o->name, val);
    if (v < o->dmin)
      args_usage_error(cmd, "--%s: \"%s\" must be at least %g", o->name, val, o->dmin);
    if (o->dmax != 0 && v > o->dmax)
      args_usage_error(cmd, "--%s: \"%s\" must be at most %g", o->name, val, o->dmax);
    *(double *)o->dest = v;
    break;
  }
  case ARGS_UINT_LIST: {
    args_uint_list l;
    list_result lr = parse_list_syntax(val, &l);
    if (lr == LIST_TOO_LONG)
      args_usage_error(cmd, "--%s: \"%s\" has more than %d items", o->name, val, ARGS_LIST_MAX);
    if (lr != LIST_OK)
      args_usage_error(cmd, "--%s: \"%s\" is not a %s integer list", o->name, val,
                       o->min >= 1 ? "positive" : "non-negative");
    for (uint32_t i = 0; i < l.n; i++) {
      if (in_range(l.v[i], o->min, o->max)) continue;
      /* Say which item: 0 in "1,0,2" (the list is quoted whole). */
      size_t len = strlen(val) + 32;
      char *item = malloc(len);
      if (!item)
        args_usage_error(cmd, "--%s: \"%s\": item %" PRIu32 " is out of range", o->name, val,
                         i + 1);
      snprintf(item, len, "%" PRIu64 "\" in \"%s", l.v[i], val);
      check_uint_range(cmd, o, item, l.v[i]);
    }
    *(args_uint_list *)o->dest = l;
    break;
  }
  case ARGS_SIZE_LIST: {
    /* Item by item, so each error names the item it is about. */
    args_uint_list l = {0};
    const char *p = val;
    for (;;) {
      size_t n = strcspn(p, ",");
      char item[64];
      if (n == 0) args_usage_error(cmd, "--%s: \"%s\" has an empty item", o->name, val);
      if (n >= sizeof item)
        args_usage_error(cmd, "--%s: \"%.*s...\" is too long for a size", o->name, 16, p);
      if (l.n == ARGS_LIST_MAX)
        args_usage_error(cmd, "--%s: \"%s\" has more than %d items", o->name, val, ARGS_LIST_MAX);
      memcpy(item, p, n);
      item[n] = '\0';
      uint64_t v;
      if (!args_parse_size(item, &v)) args_usage_error(cmd, "--%s: %s", o->name, hs_last_error());
      check_uint_range(cmd, o, item, v);
      check_power_of_two(cmd, o, v);
      l.v[l.n++] = v;
      if (p[n] == '\0') break;
      p += n + 1;
    }
    *(args_uint_list *)o->dest = l;
    break;
  }
  case ARGS_STRING:
    if (!*val) args_usage_error(cmd, "--%s: missing value", o->name);
    *(const char **)o->dest = val;
    break;
  case ARGS_PATH:
    if (!*val) args_usage_error(cmd, "--%s: missing value", o->name);
    if (o->max && strlen(val) > o->max)
      args_usage_error(cmd, "--%s: a path of %zu characters (at most %" PRIu64 ")", o->name,
                       strlen(val), o->max);
    *(const char **)o->dest = val;
    break;
  }
}

static const args_opt *find_opt(const args_opt *opts, size_t nopts, const char *name, size_t len) {
  for (size_t i = 0; i < nopts; i++) {
    if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0) return &opts[i];
  }
  return NULL;
}

int args_parse(const args_cmd *cmd, const args_opt *opts, size_t nopts, int argc, char **argv,
               int max_positional) {
  /* The defaults, from the same strings the usage shows. */
  for (size_t i = 0; i < nopts; i++)
    if (opts[i].def) store_value(cmd, &opts[i], opts[i].def);
  int npos = 0;
  bool only_positional = false;
  for (int i = 1; i < argc; i++) {
    char *arg = argv[i];
    bool is_flag = !only_positional && arg[0] == '-' && arg[1] != '\0';
    if (is_flag && strcmp(arg, "--") == 0) {
      only_positional = true;
      continue;
    }
    if (!is_flag) {
      if (npos >= max_positional) args_usage_error(cmd, "unexpected argument \"%s\"", arg);
      argv[1 + npos++] = arg; /* 1 + npos <= i: never overwrites an unread one */
      continue;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      args_print_usage(cmd, opts, nopts, stdout);
      exit(0);
    }
    if (arg[1] != '-') args_usage_error(cmd, "unknown flag %s", arg);
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
    const args_opt *o = find_opt(opts, nopts, name, name_len);
    /* Every boolean has its opposite: --no-json clears --json, and --checksums
     * clears a flag named no-checksums. Only bare: --no-json=false would be
     * a double negative nobody means. */
    const args_opt *negated = NULL;
    if (!o && name_len > 3 && strncmp(name, "no-", 3) == 0)
      negated = find_opt(opts, nopts, name + 3, name_len - 3);
    if (!o && !negated) {
      char no_name[128];
      int n = snprintf(no_name, sizeof no_name, "no-%.*s", (int)name_len, name);
      if (n > 0 && (size_t)n < sizeof no_name) negated = find_opt(opts, nopts, no_name, (size_t)n);
    }
    if (negated && negated->kind == ARGS_FLAG) {
      if (eq) args_usage_error(cmd, "--%.*s takes no value", (int)name_len, name);
      *(bool *)negated->dest = false;
      continue;
    }
    if (!o) args_usage_error(cmd, "unknown flag --%.*s", (int)name_len, name);
    if (eq) {
      store_value(cmd, o, eq + 1);
    } else if (o->kind == ARGS_FLAG) {
      *(bool *)o->dest = true;
    } else {
      /* "--dir --json" is a forgotten value, not a directory named "--json". */
      if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
        args_usage_error(cmd, "--%s: missing value", o->name);
      store_value(cmd, o, argv[++i]);
    }
  }
  return npos;
}

/* Why the split failed; args_split_policies hands out a pointer to it. */
static char split_message[640];

static int split_fail(const char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int split_fail(const char **why, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(split_message, sizeof split_message, fmt, ap);
  va_end(ap);
  *why = split_message;
  return -1;
}

/* Whether the registry's policy `name` runs in the buffer pool (not only
 * in the simulator, as those needing the future do). */
static bool pool_runs(const char *name) {
  const hs_policy_ops *ops = hs_policy_find(name);
  return ops && !(ops->flags & HS_POLICY_SIM_ONLY);
}

const char *args_policy_list(bool pool_only) {
  /* From the registry, so that a new policy is listed where it runs
   * without anyone editing a list here; the pool's is the list
   * hs_pool_open's own refusal gives. */
  if (pool_only) return policy_pool_names();
  static char list[1024];
  char names[1024];
  snprintf(names, sizeof names, "%s", hs_policy_names());
  size_t used = 0;
  list[0] = 0;
  char *save = NULL;
  for (char *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    int n = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", name);
    if (n < 0 || (size_t)n >= sizeof list - used) break;
    used += (size_t)n;
  }
  return list;
}

/* Splits `buf` (a writable copy of the list) into out; the count, or -1
 * with *why set. */
static int split_list(char *buf, bool pool_only, char out[][ARGS_SPEC_LEN], int max,
                      const char **why) {
  int n = 0;
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    if (strcmp(item, "all") == 0) {
      /* hs_policy_names() is a static buffer: take a copy to cut up. */
      char *names = strdup(hs_policy_names());
      if (!names) return split_fail(why, "out of memory");
      char *save2 = NULL;
      for (char *name = strtok_r(names, ",", &save2); name; name = strtok_r(NULL, ",", &save2)) {
        if (pool_only && !pool_runs(name)) continue;
        if (n == max) {
          free(names);
          return split_fail(why, max == 1 ? "one policy, not a list" : "more than %d policies",
                            max);
        }
        snprintf(out[n++], ARGS_SPEC_LEN, "%s", name);
      }
      free(names);
      continue;
    }
    if (strchr(item, '=') && !strchr(item, ':')) {
      if (n == 0) return split_fail(why, "a parameter before any policy name");
      size_t len = strlen(out[n - 1]);
      if (len + 1 + strlen(item) >= ARGS_SPEC_LEN)
        return split_fail(why, "\"%s\" with \"%.64s\" is longer than %d characters", out[n - 1],
                          item, ARGS_SPEC_LEN - 1);
      snprintf(out[n - 1] + len, ARGS_SPEC_LEN - len, "%c%s", strchr(out[n - 1], ':') ? ',' : ':',
               item);
      continue;
    }
    if (n == max)
      return split_fail(why, max == 1 ? "one policy, not a list" : "more than %d policies", max);
    if (strlen(item) >= ARGS_SPEC_LEN)
      return split_fail(why, "the spec \"%.64s...\" is longer than %d characters", item,
                        ARGS_SPEC_LEN - 1);
    snprintf(out[n++], ARGS_SPEC_LEN, "%s", item);
  }
  return n;
}

size_t args_split_list(const args_cmd *cmd, const char *flag, const char *value,
                       char items[][ARGS_ITEM_LEN], size_t max) {
  size_t n = 0;
  const char *p = value;
  for (;;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 0) {
      if (n == 0 && !e) args_usage_error(cmd, "--%s: missing value", flag);
      args_usage_error(cmd, "--%s: \"%s\": an item is empty", flag, value);
    }
    if (len >= ARGS_ITEM_LEN)
      args_usage_error(cmd, "--%s: \"%.*s\": longer than %d characters", flag, (int)len, p,
                       ARGS_ITEM_LEN - 1);
    if (n == max) args_usage_error(cmd, "--%s: \"%s\": more than %zu items", flag, value, max);
    memcpy(items[n], p, len);
    items[n++][len] = 0;
    if (!e) return n;
    p = e + 1;
  }
}

int args_choice_list(const args_cmd *cmd, const char *flag, const char *value,
                     const char *const *names, int n, int *out) {
  char want[256] = "";
  for (int k = 0; k < n; k++) {
    size_t used = strlen(want);
    snprintf(want + used, sizeof want - used, "%s%s",
             k == 0       ? ""
             : k == n - 1 ? " or "
                          : ", ",
             names[k]);
  }
  char items[16][ARGS_ITEM_LEN];
  size_t count = args_split_list(cmd, flag, value, items, 16);
  for (size_t i = 0; i < count; i++) {
    int k = 0;
    while (k < n && strcmp(items[i], names[k]) != 0) k++;
    if (k == n) args_usage_error(cmd, "--%s: \"%s\": want %s", flag, items[i], want);
    for (size_t j = 0; j < i; j++)
      if (out[j] == k) args_usage_error(cmd, "--%s: \"%s\" is given twice", flag, items[i]);
    out[i] = k;
  }
  return (int)count;
}

int args_split_policies(const char *s, bool pool_only, char out[][ARGS_SPEC_LEN], int max,
                        const char **why) {
  /* The list has no length limit; each spec may have ARGS_SPEC_LEN - 1
   * characters, parameters included. */
  char *buf = strdup(s);
  if (!buf) return split_fail(why, "out of memory");
  int n = split_list(buf, pool_only, out, max, why);
  free(buf);
  if (n < 0) return -1;
  if (n == 0) return split_fail(why, "no policy given");
  /* Every spec must name a policy with valid parameters, and the pool's
   * specs a policy the pool can run. */
  for (int i = 0; i < n; i++) {
    /* The policy's own name from here on (LRU, TwoQ: lru, 2q), so that
     * what is printed, and what later code compares, is one name. */
    char *colon = strchr(out[i], ':');
    size_t len = colon ? (size_t)(colon - out[i]) : strlen(out[i]);
    char name[ARGS_SPEC_LEN];
    memcpy(name, out[i], len);
    name[len] = 0;
    const char *canonical = hs_policy_canonical(name);
    /* An unknown name is answered with what this command runs: the pool's
     * policies for the pool's commands (never belady, which they refuse). */
    if (!canonical)
      return split_fail(why, "unknown replacement policy \"%s\" (%s runs %s)", name,
                        pool_only ? "the pool" : "the simulator", args_policy_list(pool_only));
    if (strcmp(canonical, name) != 0) {
      size_t clen = strlen(canonical), rest = strlen(out[i] + len);
      if (clen + rest >= ARGS_SPEC_LEN)
        return split_fail(why, "the spec \"%s\" is longer than %d characters", out[i],
                          ARGS_SPEC_LEN - 1);
      memmove(out[i] + clen, out[i] + len, rest + 1);
      memcpy(out[i], canonical, clen);
    }
    hs_policy *p;
    if (hs_policy_create(out[i], 1, 1, NULL, &p) != HS_OK)
      return split_fail(why, "%s", hs_last_error());
    bool sim_only = hs_policy_flags(p) & HS_POLICY_SIM_ONLY;
    hs_policy_destroy(p);
    if (pool_only && sim_only)
      return split_fail(why, "%s needs the future and runs only in the simulator", out[i]);
  }
  return n;
}

/*
 * cli/cachesim_args.c — libCacheSim's cachesim command line, read as
 * `hotset sim` flags, so that a cachesim user's commands run unchanged:
 *
 *   hotset sim TRACE TYPE ALGO[,ALGO...] SIZE[,SIZE...] [cachesim's flags]
 *
 * becomes `--trace TRACE --format TYPE --policy ALGO... --size SIZE...
 * --cachesim-lines`, and cachesim's common flags become hotset's
 * (docs/simulator.md has the table). A cachesim flag with no counterpart
 * here is refused by name rather than ignored: a run that silently
 * dropped `--warmup-sec` would report other figures than the user asked
 * for.
 */
#include "cli/cachesim_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* cachesim's trace types, as hotset's --format names. */
static const char *format_of(const char *type) {
  static const struct {
    const char *cachesim, *hotset;
  } types[] = {{"oracleGeneral", "oraclegeneral"},
               {"oracleGeneralBin", "oraclegeneral"},
               {"binary", "oraclegeneral"},
               {"vscsi", "vscsi"},
               {"csv", "csv"},
               {"txt", "txt"},
               {"plaintxt", "txt"}};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (strcasecmp(type, types[i].cachesim) == 0) return types[i].hotset;
  return NULL;
}

/* cachesim's sizes ("1gb", "16MB", "0.01", "1000") with the spaces around
 * items dropped. The sizes themselves are read by `--size`, with the one
 * size grammar (core/size.h), whose units are cachesim's: a MB is a MiB. */
static bool trim_sizes(const char *in, char *out, size_t cap) {
  size_t o = 0;
  const char *p = in;
  while (*p) {
    while (*p == ' ') p++;
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    while (len && p[len - 1] == ' ') len--;
    if (len == 0) return false;
    int n = snprintf(out + o, cap - o, "%s%.*s", o ? "," : "", (int)len, p);
    if (n < 0 || (size_t)n >= cap - o) return false;
    o += (size_t)n;
    p = end ? end + 1 : p + strlen(p);
  }
  return o > 0;
}

/* A delimiter as hotset's --csv spec names it. */
static const char *delimiter_name(const char *c) {
  if (!strcmp(c, ",")) return "comma";
  if (!strcmp(c, "\t")) return "tab";
  if (!strcmp(c, " ")) return "space";
  if (!strcmp(c, ";")) return "semicolon";
  if (!strcmp(c, "|")) return "pipe";
  return c;
}

/* cachesim's csv parameters ("time-col=1, obj-id-col=2, obj-size-col=3,
 * delimiter=,, has-header=true") as hotset's --csv spec. */
static bool translate_csv(const char *in, char *out, size_t cap) {
  char buf[512];
  if (strlen(in) >= sizeof buf) return false;
  strcpy(buf, in);
  size_t o = 0;
  char *p = buf;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    char *eq = strchr(p, '=');
    if (!eq) return false;
    *eq = 0;
    char *val = eq + 1, *next;
    /* "delimiter=," : the value is the character itself */
    if (strcmp(p, "delimiter") == 0 && *val) {
      next = val + 1;
      if (*next == ',')
        *next++ = 0;
      else if (*next)
        return false;
    } else {
      next = strchr(val, ',');
      if (next)
        *next++ = 0;
      else
        next = val + strlen(val);
    }
    char item[64] = "";
    if (!strcmp(p, "time-col"))
      snprintf(item, sizeof item, "time=%s", val);
    else if (!strcmp(p, "obj-id-col"))
      snprintf(item, sizeof item, "id=%s", val);
    else if (!strcmp(p, "obj-size-col"))
      snprintf(item, sizeof item, "size=%s", val);
    else if (!strcmp(p, "delimiter"))
      snprintf(item, sizeof item, "delimiter=%s", delimiter_name(val));
    else if (!strcmp(p, "has-header")) {
      if (!strcasecmp(val, "true") || !strcmp(val, "1")) snprintf(item, sizeof item, "header");
    } else if (strcmp(p, "obj-id-is-num") != 0) {
      return false;
    }
    if (item[0]) {
      int n = snprintf(out + o, cap - o, "%s%s", o ? "," : "", item);
      if (n < 0 || (size_t)n >= cap - o) return false;
      o += (size_t)n;
    }
    p = next;
  }
  return o > 0;
}

/* A copy of s in the argv's one block (4 KiB: argv[0], the sizes and the
 * csv spec, each under 512 bytes). */
static char *keep(char *store, size_t *used, const char *s) {
  char *at = store + *used;
  size_t len = strlen(s) + 1;
  if (*used + len > 4096) len = 4096 - *used;
  memcpy(at, s, len);
  at[len - 1] = 0;
  *used += len;
  return at;
}

bool cachesim_form(int argc, char **argv) {
  /* Two words before any flag: `hotset sim FILE --policy ...` is hotset's
   * own form with the trace as its one argument. */
  return argc >= 3 && argv[1][0] != '-' && argv[2][0] != '-';
}

char **cachesim_translate(const args_cmd *cmd, int argc, char **argv, int *out_argc) {
  if (argc < 5)
    args_usage_error(cmd,
                     "cachesim's form is TRACE TYPE ALGO SIZE [flags] (%d of the 4 given); "
                     "or give --trace and the other flags",
                     argc - 1);
  const char *format = format_of(argv[2]);
  if (!format)
    args_usage_error(cmd, "trace type \"%s\": hotset reads oracleGeneral, vscsi, csv and txt",
                     argv[2]);
  /* Every string the new argv points to lives in one block freed with it. */
  size_t cap = (size_t)argc * 2 + 16;
  char **out = calloc(cap, sizeof *out);
  char *store = malloc(4096);
  if (!out || !store) {
    free(out);
    free(store);
    return NULL;
  }
  size_t used = 0;
  int n = 0;
  out[n++] = keep(store, &used, argv[0]); /* store[0]: freed by cachesim_free */
  out[n++] = "--trace";
  out[n++] = argv[1];
  out[n++] = "--format";
  out[n++] = (char *)format;
  out[n++] = "--policy";
  out[n++] = argv[3];
  char sizes[512];
  if (!trim_sizes(argv[4], sizes, sizeof sizes))
    args_usage_error(cmd, "cache size \"%s\": want sizes such as 1gb, 16MiB, 0.01 or 1000",
                     argv[4]);
  out[n++] = "--size";
  out[n++] = keep(store, &used, sizes);
  out[n++] = "--cachesim-lines";
  for (int i = 5; i < argc; i++) {
    /* Each flag as `--name value` or `--name=value`, as everywhere else. */
    char name[64];
    const char *a = argv[i], *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
    const char *val = NULL;
    bool inline_val = false;
    if (eq && (size_t)(eq - a) < sizeof name) {
      memcpy(name, a, (size_t)(eq - a));
      name[eq - a] = 0;
      a = name;
      val = eq + 1;
      inline_val = true;
    } else if (i + 1 < argc) {
      val = argv[i + 1];
    }
    /* The value's argument is consumed only when it was a separate one. */
    int step = inline_val ? 0 : 1;
    if (!strcmp(a, "--ignore-obj-size")) {
      if (!val || (strcmp(val, "0") && strcmp(val, "1") && strcasecmp(val, "true") &&
                   strcasecmp(val, "false")))
        args_usage_error(cmd, "--ignore-obj-size takes 0 or 1 (cachesim's form)");
      if (!strcmp(val, "1") || !strcasecmp(val, "true")) out[n++] = "--ignore-size";
      i += step;
    } else if (!strcmp(a, "--num-thread")) {
      if (!val || !*val) args_usage_error(cmd, "--num-thread needs a count");
      out[n++] = "--threads";
      out[n++] = (char *)val;
      i += step;
    } else if (!strcmp(a, "-t") || !strcmp(a, "--trace-type-params")) {
      char csv[512];
      if (!val || !translate_csv(val, csv, sizeof csv))
        args_usage_error(cmd,
                         "%s: want cachesim's csv parameters (time-col=N, obj-id-col=N, "
                         "obj-size-col=N, delimiter=X, has-header=true)",
                         a);
      out[n++] = "--csv";
      out[n++] = keep(store, &used, csv);
      i += step;
    } else if (!strcmp(a, "--json") || !strcmp(a, "--help") || !strcmp(a, "--verbose") ||
               !strcmp(a, "--from") || !strcmp(a, "--max-requests") || !strcmp(a, "--skip-bad")) {
      out[n++] = argv[i]; /* hotset's own flags go through as they are, "=" and all */
      if (!inline_val && (!strcmp(a, "--from") || !strcmp(a, "--max-requests")) && val)
        out[n++] = argv[++i];
    } else {
      args_usage_error(cmd,
                       "%s: a cachesim flag hotset sim does not take in cachesim's form "
                       "(docs/simulator.md lists the ones it does)",
                       a);
    }
    if ((size_t)n + 4 >= cap) args_usage_error(cmd, "too many arguments");
  }
  out[n] = NULL;
  *out_argc = n;
  return out;
}

void cachesim_free(char **argv) {
  if (!argv) return;
  free(argv[0]);
  free(argv);
}

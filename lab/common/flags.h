/*
 * common/flags.h — the flag-table entries (common/args.h) that every tool
 * making relations or a log shares, written once.
 */
#ifndef HOTSET_LAB_COMMON_FLAGS_H
#define HOTSET_LAB_COMMON_FLAGS_H

#include "common/args.h"
#include "common/resources.h"
#include "hotset/storage.h"
#include "hotset/wal.h"

/* The flag-table entries (common/args.h) every tool that makes relations has,
 * written once: the page size and the data directory. */
#define BENCH_OPT_PAGE_SIZE(dest_)                                                                 \
  {                                                                                                \
    .name = "page-size", .kind = ARGS_SIZE, .dest = (dest_), .power_of_two = true,                 \
    .min = HS_PAGE_SIZE_MIN, .max = HS_PAGE_SIZE_MAX, .def = "8KiB",                               \
    .help = "page size, a power of two from 1KiB to 64KiB"                                         \
  }
/* --page-size for a tool that opens an existing data directory: no
 * default in the table (dest starts 0), so bench_dir_page_size can tell a
 * size asked for from one left to the directory. */
#define BENCH_OPT_DIR_PAGE_SIZE(dest_)                                                             \
  {                                                                                                \
    .name = "page-size", .kind = ARGS_SIZE, .dest = (dest_), .power_of_two = true,                 \
    .min = HS_PAGE_SIZE_MIN, .max = HS_PAGE_SIZE_MAX,                                              \
    .help = "page size, a power of two from 1KiB to 64KiB (default: the data directory's, from "   \
            "its control file; 8KiB for a new one)"                                                \
  }
#define BENCH_OPT_DIR(dest_)                                                                       \
  {                                                                                                \
    .name = "dir", .kind = ARGS_PATH, .dest = (dest_), .max = BENCH_DIR_MAX, .arg = "DIR",         \
    .help = "data directory to use (created with its parents if missing, never removed) instead "  \
            "of a temporary one"                                                                   \
  }

/* --dir and --wal of the tools that work on an existing data directory and
 * its log (reindex, relations, reset-log). */
#define BENCH_OPT_DATA_DIR(dest_)                                                                  \
  {                                                                                                \
    .name = "dir", .kind = ARGS_PATH, .dest = (dest_), .max = BENCH_DIR_MAX, .arg = "DIR",         \
    .help = "the data directory"                                                                   \
  }
#define BENCH_OPT_WAL_DIR(dest_)                                                                   \
  {                                                                                                \
    .name = "wal", .kind = ARGS_PATH, .dest = (dest_), .max = BENCH_DIR_MAX, .arg = "DIR",         \
    .help = "its log's directory (default DIR/wal)"                                                \
  }

/* The --segment flag of the benchmarks that open a log (an args_opt
 * initializer). */
#define BENCH_SEGMENT_FLAG(dest_ptr)                                                               \
  {                                                                                                \
    .name = "segment", .kind = ARGS_SIZE, .dest = (dest_ptr), .min = HS_WAL_MIN_SEGMENT,           \
    .max = HS_WAL_MAX_SEGMENT, .power_of_two = true, .def = "16MiB",                               \
    .help = "the log's segment size, a power of two from 64KiB to 1GiB"                            \
  }

#endif

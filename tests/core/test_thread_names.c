/*
 * test_thread_names — the library's own threads say what they are: a pool
 * with a WAL writer, a background writer, a checkpointer and I/O workers
 * shows each by name in /proc/self/task/TID/comm (what top -H, ps -L and a
 * perf scheduling trace print), and once the pool and the log are closed no
 * thread of that name is left (each was joined, not abandoned).
 */
#include "check.h"
#include "hotset/wal.h"
#include "pool_util.h"
#include "testdir.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* How many of this process's threads are named `name`. */
static int threads_named(const char *name) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[300], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue; /* the thread has just ended */
    if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
    fclose(f);
    if (strcmp(comm, name) == 0) n++;
  }
  closedir(d);
  return n;
}

int main(void) {
  if (threads_named("no such thread") < 0) {
    printf("skipped: /proc/self/task is not readable here (thread names are Linux's)\n");
    return 0;
  }
  char dir[256], waldir[300];
  testdir_make(dir, sizeof dir, "thread-names");
  snprintf(waldir, sizeof waldir, "%s/wal", dir);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = waldir;
  wo.writer_delay_ms = 10000;
  hs_wal *wal = NULL;
  REQUIRE(hs_wal_open(&wo, &wal) == HS_OK);
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.pool_pages = 32;
  o.page_size = 4096;
  o.wal = wal;
  o.checkpoint_timeout_ms = 600000;
  o.bgwriter_delay_ms = HS_POOL_BGWRITER_MAX_DELAY_MS;
  o.io_workers = 2;
  hs_pool *pool = open_pool_from(&o);
  CHECK_EQ(threads_named("hs-walwriter"), 1);
  CHECK_EQ(threads_named("hs-bgwriter"), 1);
  CHECK_EQ(threads_named("hs-checkpoint"), 1);
  CHECK_EQ(threads_named("hs-io-worker"), 2);
  CHECK_OK(hs_pool_close(pool));
  CHECK_OK(hs_wal_close(wal));
  CHECK_EQ(threads_named("hs-walwriter"), 0);
  CHECK_EQ(threads_named("hs-bgwriter"), 0);
  CHECK_EQ(threads_named("hs-checkpoint"), 0);
  CHECK_EQ(threads_named("hs-io-worker"), 0);
  testdir_remove(dir);
  return check_finish();
}

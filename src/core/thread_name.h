/*
 * core/thread_name.h — names the library's own threads, so that top -H,
 * perf and /proc/PID/task/TID/comm say which is the WAL writer and which
 * the checkpointer (a scheduling trace of a slow foreground is otherwise a
 * list of identical process names). At most 15 characters; a name that
 * cannot be set is no error. The creator names the thread right after
 * pthread_create, so the name is there by the time the call that started
 * it returns (a name the thread gave itself would come whenever it first
 * ran).
 */
#ifndef HOTSET_CORE_THREAD_NAME_H
#define HOTSET_CORE_THREAD_NAME_H

#include <pthread.h>

static inline void hs_name_thread(pthread_t thread, const char *name) {
#if defined(__linux__)
  (void)pthread_setname_np(thread, name);
#else
  (void)thread;
  (void)name;
#endif
}

#endif

/*
 * common/interrupt.c — see interrupt.h.
 */
#include "common/interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- interruption ---- */

/* Written only by the handler (and read everywhere): a signal number. */
static volatile sig_atomic_t interrupted_by;

static void on_signal(int sig) {
  interrupted_by = sig;
}

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};

void bench_signals_install(void) {
  for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) {
    int sig = cleanup_signals[i];
    struct sigaction old;
    if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* SA_RESTART: the library's system calls go on rather than fail with
     * EINTR (sleeps still wake); SA_RESETHAND: a second signal kills. */
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(sig, &sa, NULL);
  }
}

int bench_interrupted(void) {
  return interrupted_by;
}

_Noreturn void bench_exit_interrupted(const char *prog) {
  int sig = interrupted_by ? interrupted_by : SIGTERM;
  const char *name = sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM";
  fflush(stdout);
  fprintf(stderr, "%s: interrupted by %s\n", prog, name);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  _exit(128 + sig); /* not reached: the default action ends the process */
}

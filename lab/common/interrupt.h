/*
 * common/interrupt.h — a Ctrl-C or a SIGTERM ends a lab run by its own
 * cleanup path, so no scratch directory or relation is left behind.
 */
#ifndef HOTSET_LAB_COMMON_INTERRUPT_H
#define HOTSET_LAB_COMMON_INTERRUPT_H

/* ---- interruption ---- */

/* The benchmarks and `hotset workload` make scratch directories and relations that a
 * Ctrl-C or a SIGTERM must not leave behind. bench_signals_install (call it
 * after parsing the flags, before making anything) sets handlers for SIGINT,
 * SIGTERM and SIGHUP that only record the signal (async-signal-safe); the
 * commands' loops and sleeps look at bench_interrupted() and leave by their
 * normal cleanup path, which ends with bench_exit_interrupted. A signal that
 * was ignored when the program started (nohup, a shell's background job)
 * stays ignored. A second signal of the same kind kills at once (the
 * handlers are one-shot): the way out when cleaning up takes too long. */
void bench_signals_install(void);
/* The signal number received, or 0. */
int bench_interrupted(void);
/* Prints "<prog>: interrupted by SIG..." and ends the process by the signal
 * itself, so the parent sees the usual status (128 + the signal in a
 * shell). Call it after cleaning up. */
_Noreturn void bench_exit_interrupted(const char *prog);

#endif

/*
 * core/seams.c — the process's seam table (core/seams.h), empty unless a
 * test or a lab tool fills it.
 */
#include "core/seams.h"

struct seams seams;

/*
 * core/big_alloc.h — memory for the pool's big arrays (page frames, buffer
 * descriptors, the page table, pin counters), on huge pages where the
 * system allows. A hit on a big pool touches a descriptor, a page-table
 * bucket and a pin counter at random places: on 4 KiB pages each is a TLB
 * miss, and the page walk costs more than the rest of the hit.
 */
#ifndef HOTSET_CORE_BIG_ALLOC_H
#define HOTSET_CORE_BIG_ALLOC_H

#include "hotset/huge_pages.h"

#include <stddef.h>

/* Zeroed memory of `bytes`, or NULL (errno set). With HS_HUGE_PAGES_TRY or
 * _ON: explicit huge pages (MAP_HUGETLB) when the system has them
 * reserved, else transparent ones asked for with madvise(MADV_HUGEPAGE)
 * on a 2 MiB-aligned region; *used (unless NULL) says which it got (the region may still
 * be on small pages where the kernel could not find huge ones). With _ON,
 * NULL when neither is available (errno EOPNOTSUPP). With _OFF: small
 * pages, and MADV_NOHUGEPAGE so a system set to "always" does not give it
 * huge ones either. */
void *big_alloc(size_t bytes, hs_huge_pages mode, hs_huge_pages_used *used);
/* The same, starting on a multiple of `align` (a power of two up to 2 MiB):
 * what direct I/O needs of a small pool's frames when the file system asks
 * for more than a page's alignment. Huge-page regions already are. */
void *big_alloc_aligned(size_t bytes, size_t align, hs_huge_pages mode, hs_huge_pages_used *used);
/* Frees what big_alloc or big_alloc_aligned gave for the same `bytes`; NULL
 * is a no-op. */
void big_free(void *p, size_t bytes);
/* Asks for transparent huge pages under the whole 2 MiB-aligned part of
 * [p, p + bytes), memory malloc or realloc gave and not yet written: for
 * the simulator's per-request arrays, which are filled once front to back
 * and then read at random, where faulting them in 4 KiB at a time is a
 * good part of loading a big trace (on a virtual machine a page fault
 * costs several microseconds). Only a hint: nothing happens where the
 * system has no transparent huge pages. */
void big_advise_huge(void *p, size_t bytes);

#endif

/*
 * hotset/huge_pages.h — whether the library backs its big regions (a pool's
 * frames and buffer descriptors, its page table) with huge pages.
 *
 * A pool of gigabytes on 4 KiB pages needs a TLB entry per 4 KiB touched; on
 * 2 MiB pages one covers 512 times as much, which a hit that lands on a
 * random frame feels (docs/buffer-pool.md, "Huge pages"). The choice is a
 * pool option (hs_pool_options.huge_pages); what the kernel gave is reported
 * back (hs_pool_huge_pages).
 */
#ifndef HOTSET_HUGE_PAGES_H
#define HOTSET_HUGE_PAGES_H

#ifdef __cplusplus
extern "C" {
#endif

/* What to ask for: TRY, transparent huge pages where the kernel has them
 * (the default); OFF, small pages only; ON, explicit huge pages
 * (MAP_HUGETLB) or transparent ones, failing when neither is available. */
typedef enum hs_huge_pages {
  HS_HUGE_PAGES_TRY = 0,
  HS_HUGE_PAGES_OFF = 1,
  HS_HUGE_PAGES_ON = 2
} hs_huge_pages;

/* What a region got: small pages, transparent huge pages (asked for with
 * madvise; the kernel backs what it can), or explicit ones (MAP_HUGETLB,
 * reserved by the administrator). */
typedef enum hs_huge_pages_used {
  HS_HUGE_PAGES_NONE = 0,
  HS_HUGE_PAGES_TRANSPARENT = 1,
  HS_HUGE_PAGES_EXPLICIT = 2
} hs_huge_pages_used;

#ifdef __cplusplus
}
#endif
#endif

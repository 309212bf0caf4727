/*
 * policy/dlist.h — doubly linked lists threaded through index arrays.
 *
 * Policies keep their entries in arrays indexed by slot (or ghost index), so
 * a list is two 32-bit links per node, shared by every list a node can be on
 * (a node is on at most one list at a time). No allocation, O(1) everything.
 * `units` sums the sizes of the members, for byte-sized caches.
 */
#ifndef HOTSET_POLICY_DLIST_H
#define HOTSET_POLICY_DLIST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define DL_NIL UINT32_MAX

typedef struct dl_node {
  uint32_t prev, next;
} dl_node;

typedef struct dl_list {
  uint32_t head, tail; /* head = most recent end, tail = oldest end */
  uint32_t count;
  uint64_t units;
} dl_list;

static inline void dl_init(dl_list *l) {
  l->head = l->tail = DL_NIL;
  l->count = 0;
  l->units = 0;
}

static inline void dl_push_head(dl_list *l, dl_node *n, uint32_t i, uint64_t units) {
  n[i].prev = DL_NIL;
  n[i].next = l->head;
  if (l->head != DL_NIL)
    n[l->head].prev = i;
  else
    l->tail = i;
  l->head = i;
  l->count++;
  l->units += units;
}

static inline void dl_push_tail(dl_list *l, dl_node *n, uint32_t i, uint64_t units) {
  n[i].next = DL_NIL;
  n[i].prev = l->tail;
  if (l->tail != DL_NIL)
    n[l->tail].next = i;
  else
    l->head = i;
  l->tail = i;
  l->count++;
  l->units += units;
}

static inline void dl_remove(dl_list *l, dl_node *n, uint32_t i, uint64_t units) {
  if (n[i].prev != DL_NIL)
    n[n[i].prev].next = n[i].next;
  else
    l->head = n[i].next;
  if (n[i].next != DL_NIL)
    n[n[i].next].prev = n[i].prev;
  else
    l->tail = n[i].prev;
  n[i].prev = n[i].next = DL_NIL;
  l->count--;
  l->units -= units;
}

/* i is on l. Not a remove and a push: the count and units stay, and i,
 * not the head, has a node before it and the head one after. */
static inline void dl_move_to_head(dl_list *l, dl_node *n, uint32_t i) {
  uint32_t head = l->head;
  if (head == i) return;
  uint32_t prev = n[i].prev, next = n[i].next;
  n[prev].next = next;
  if (next != DL_NIL)
    n[next].prev = prev;
  else
    l->tail = prev;
  n[i].prev = DL_NIL;
  n[i].next = head;
  n[head].prev = i;
  l->head = i;
}

/* Appends l's members to out[*n .. max-1] from its tail (the victim end of
 * every list policy) towards its head: the order they would leave in. */
static inline void dl_upcoming(const dl_list *l, const dl_node *links, uint32_t *out, uint32_t *n,
                               uint32_t max) {
  for (uint32_t i = l->tail; i != DL_NIL && *n < max; i = links[i].prev) out[(*n)++] = i;
}

/* What a clock hand standing on `start` (DL_NIL: the tail) would take from
 * l, walking towards the head and round from the tail again, with nothing
 * accessed meanwhile: on its first round the members whose bit is clear, on
 * its second the ones it found set (and cleared), in the same order.
 * Appended to out[*n .. max-1]; reads the bits as the hits write them. */
static inline void dl_upcoming_clock(const dl_list *l, const dl_node *links,
                                     _Atomic uint8_t *const bits, uint32_t start, uint32_t *out,
                                     uint32_t *n, uint32_t max) {
  if (start == DL_NIL) start = l->tail;
  for (int round = 0; round < 2; round++) {
    uint32_t i = start;
    for (uint32_t k = 0; k < l->count && *n < max; k++) {
      if (i == DL_NIL) i = l->tail;
      bool set = atomic_load_explicit(&bits[i], memory_order_relaxed) != 0;
      if (set == (round == 1)) out[(*n)++] = i;
      i = links[i].prev;
    }
  }
}

#endif

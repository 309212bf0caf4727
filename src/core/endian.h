/*
 * core/endian.h — little-endian integers in byte buffers.
 *
 * Every format hotset writes (the log, the control file, binary traces)
 * stores its integers little-endian. These read and write them a byte at a
 * time, so the code says what the format is rather than what the machine
 * is; compilers turn each into one load or store on little-endian CPUs.
 */
#ifndef HOTSET_CORE_ENDIAN_H
#define HOTSET_CORE_ENDIAN_H

#include <stdint.h>

static inline void le_put16(unsigned char *p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static inline void le_put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline void le_put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint16_t le_get16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t le_get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t le_get64(const unsigned char *p) {
  return (uint64_t)le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}

#endif

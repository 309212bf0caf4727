/*
 * core/crc32c.h — CRC-32C, the checksum of the write-ahead log's records
 * and of the pages it protects.
 *
 * A cyclic redundancy check treats a message as a long polynomial over the
 * two-element field and keeps the remainder of its division by a fixed
 * generator polynomial. Any error pattern that is not itself a multiple of
 * the generator changes the remainder, so the choice of generator decides
 * which errors are always caught: all bursts no longer than 32 bits for any
 * 32-bit generator, and, depending on the generator, every pattern of a few
 * flipped bits up to some message length (its Hamming distance there).
 *
 * CRC-32C uses the generator Guy Castagnoli and his co-authors found by
 * searching for 32-bit codes in 1993 (0x1EDC6F41; 0x82F63B78 when written
 * bit-reversed, the way a least-significant-bit-first implementation uses
 * it). Over the lengths a storage engine checksums — a log record of a few
 * dozen bytes to a page of 8 KiB — it keeps a larger Hamming distance than
 * the older CRC-32 of Ethernet and zip, so more of the small multi-bit
 * corruptions are certain to be detected rather than caught with
 * probability 1 - 2^-32. It is also the one 32-bit CRC with an instruction
 * of its own: SSE4.2's crc32 (x86-64, since 2008) computes exactly this
 * code, 8 bytes at a time. That pair of reasons made it the checksum of
 * iSCSI, SCTP, ext4's metadata and Btrfs, and of PostgreSQL's WAL records
 * since 9.5, which is the design the log here follows.
 *
 * The convention is the common one (the check value of "123456789" is
 * 0xE3069283): the remainder starts as all ones and is inverted at the end,
 * so leading zero bytes still count. The inversion is undone on entry when
 * continuing, which is why a running checksum starts from 0 and chains:
 *
 *   hs_crc32c(hs_crc32c(0, a, n), b, m) == hs_crc32c(0, a followed by b, n + m)
 *
 * Two implementations compute it: a table-driven one in plain C that runs
 * everywhere, and one with the crc32 instruction, chosen at run time when
 * the CPU has it. A log written on one machine is read and verified on
 * another, so the two must give the same value for every input, alignment
 * and length; tests/test_crc32c.c checks both against a bit-at-a-time
 * reference.
 */
#ifndef HOTSET_CORE_CRC32C_H
#define HOTSET_CORE_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The CRC-32C of data[0..len), continuing from crc (0 to start), with the
 * fastest implementation this CPU runs; chosen once, at first use, safely
 * from any number of threads. */
uint32_t hs_crc32c(uint32_t crc, const void *data, size_t len);

/* The same value from lookup tables, on every CPU. */
uint32_t hs_crc32c_portable(uint32_t crc, const void *data, size_t len);

/* Whether this CPU has SSE4.2's crc32 instruction (always false off x86-64). */
bool hs_crc32c_hw_available(void);

/* The same value with the crc32 instruction. Call it only when
 * hs_crc32c_hw_available(): elsewhere on x86-64 it would stop the program
 * with an illegal instruction. On other architectures it is the portable
 * implementation. */
uint32_t hs_crc32c_hw(uint32_t crc, const void *data, size_t len);

#endif

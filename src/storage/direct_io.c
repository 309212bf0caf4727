/*
 * storage/direct_io.c — finding out what O_DIRECT needs under a data
 * directory (direct_io.h).
 *
 * Why probe instead of trusting open(2). Whether O_DIRECT works is a
 * property of the file system, not of the flag: ramfs (and tmpfs before
 * Linux 6.6) refuses it with EINVAL, some FUSE file systems accept the flag
 * and fail the transfers, and the alignment differs (ext4 on a 512-byte
 * device takes 512-byte-aligned transfers, a 4Kn device 4096). A storage
 * manager that learned this on its first read would fail deep inside a
 * buffer pool, with a message about one block. So the probe does one real
 * direct write and read on an unnamed file beside the relations, and
 * reports the file system by name when anything in it is refused; there
 * is no silent fallback to buffered I/O, which would make every figure
 * measured "direct" a lie.
 *
 * Alignment. statx(STATX_DIOALIGN) (Linux 6.1) gives the memory and offset
 * alignment per file. Older kernels cannot say: 4096 is then assumed for
 * both, the largest logical block size in common use (PostgreSQL aligns
 * its direct I/O buffers to 4096 for the same reason).
 */
#include "storage/direct_io.h"

#include "core/error.h"
#include "core/seams.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* What is assumed where statx cannot tell the alignment. */
#define DIO_FALLBACK_ALIGN 4096u

static const struct {
  unsigned long magic;
  const char *name;
} fs_names[] = {
    {0xEF53ul, "ext2/ext3/ext4"},
    {0x58465342ul, "xfs"},
    {0x9123683Eul, "btrfs"},
    {0x01021994ul, "tmpfs"},
    {0x858458F6ul, "ramfs"},
    {0x794C7630ul, "overlayfs"},
    {0x6969ul, "nfs"},
    {0xF2F52010ul, "f2fs"},
    {0x65735546ul, "fuse"},
    {0x2FC12FC1ul, "zfs"},
    {0xFE534D42ul, "smb2"},
    {0xFF534D42ul, "cifs"},
    {0x01021997ul, "9p"},
    {0xCA451A4Eul, "bcachefs"},
    {0x73717368ul, "squashfs"},
    {0x5346544Eul, "ntfs"},
    {0x4D44ul, "vfat"},
    {0x3153464Aul, "jfs"},
};

void dio_fs_name(const char *path, char *buf, size_t len) {
  struct statfs sf;
  if (statfs(path, &sf) != 0) {
    snprintf(buf, len, "an unknown file system");
    return;
  }
  unsigned long magic = (unsigned long)sf.f_type & 0xFFFFFFFFul;
  for (size_t i = 0; i < sizeof fs_names / sizeof fs_names[0]; i++) {
    if (fs_names[i].magic == magic) {
      snprintf(buf, len, "%s", fs_names[i].name);
      return;
    }
  }
  snprintf(buf, len, "file system type 0x%lx", magic);
}

/* An unnamed file in `dir` (O_TMPFILE), or a named one removed at once
 * where the file system cannot make unnamed ones: created exclusively,
 * never through a symlink, under a name no other probe in this process or
 * another uses at the same time. Returns the fd or -1 with errno set. */
static int probe_file(const char *dir) {
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != ENOENT)) return fd;
  static _Atomic unsigned probes;
  for (int tries = 0; tries < 100; tries++) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/hotset.direct-probe.%ld.%u", dir, (long)getpid(),
                 atomic_fetch_add(&probes, 1)) >= (int)sizeof path) {
      errno = ENAMETOOLONG;
      return -1;
    }
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      unlink(path);
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  return -1;
}

bool dio_alignment(int fd, dio_info *out) {
  out->mem_align = DIO_FALLBACK_ALIGN;
  out->offset_align = DIO_FALLBACK_ALIGN;
#ifdef STATX_DIOALIGN
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN)) {
    if (stx.stx_dio_offset_align == 0) return false;
    out->mem_align = stx.stx_dio_mem_align ? stx.stx_dio_mem_align : 1;
    out->offset_align = stx.stx_dio_offset_align;
  }
#endif
  if (seams.dio_alignment) seams.dio_alignment(out);
  return true;
}

/* One page written and read back through O_DIRECT: 0 or the errno. */
static int probe_transfer(int fd, uint32_t page_size, uint32_t align) {
  void *page;
  if (posix_memalign(&page, align < 4096 ? 4096 : align, page_size) != 0) return ENOMEM;
  memset(page, 0x5A, page_size);
  int err = 0;
  ssize_t n = pwrite(fd, page, page_size, 0);
  if (n < 0)
    err = errno;
  else if (n != (ssize_t)page_size)
    err = EIO;
  if (!err) {
    n = pread(fd, page, page_size, 0);
    if (n < 0)
      err = errno;
    else if (n != (ssize_t)page_size)
      err = EIO;
  }
  free(page);
  return err;
}

static hs_status refused(const char *dir, const dio_info *info, int err, const char *what) {
  return hs_fail(HS_ERR_INVALID, err,
                 "direct I/O is not possible in \"%s\": the file system there (%s) refuses "
                 "O_DIRECT (%s: %s); use a directory on a file system that supports it, or "
                 "turn direct_io off",
                 dir, info->fs_name, what, strerror(err));
}

hs_status dio_probe(const char *dir, uint32_t page_size, dio_info *out) {
  memset(out, 0, sizeof *out);
  dio_fs_name(dir, out->fs_name, sizeof out->fs_name);
  int fd = probe_file(dir);
  if (fd < 0)
    return hs_fail(hs_status_from_errno(errno), errno,
                   "could not create a file in \"%s\" to try direct I/O on it: %s", dir,
                   strerror(errno));
  hs_status st = HS_OK;
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_DIRECT) != 0) {
    st = refused(dir, out, errno, "turning O_DIRECT on");
  } else if (!dio_alignment(fd, out)) {
    st = refused(dir, out, EINVAL, "statx says no direct I/O for its files");
  } else if (page_size % out->offset_align != 0 || page_size % out->mem_align != 0) {
    uint32_t need = out->offset_align > out->mem_align ? out->offset_align : out->mem_align;
    st = hs_fail(HS_ERR_INVALID, 0,
                 "direct I/O in \"%s\" (%s) moves blocks of %u bytes, more than the %u-byte "
                 "page size: use pages of at least %u bytes, or turn direct_io off",
                 dir, out->fs_name, need, page_size, need);
  } else {
    int err = probe_transfer(fd, page_size, out->mem_align);
    /* EINVAL (or EOPNOTSUPP) is the file system saying no to O_DIRECT
     * transfers; anything else (ENOSPC on a full disk, EIO) is not a
     * refusal and must not read as one: a pool must still open on a full
     * disk to recover. */
    if (err == ENOMEM)
      st = hs_fail(HS_ERR_NOMEM, err, "no memory for a page to try direct I/O with");
    else if (err == EINVAL || err == EOPNOTSUPP)
      st = refused(dir, out, err, "a page written and read back");
    else if (err)
      st = hs_fail(hs_status_from_errno(err), err,
                   "could not write and read back a test page with O_DIRECT in \"%s\" (%s): %s",
                   dir, out->fs_name, strerror(err));
  }
  close(fd);
  return st;
}

/* SPDX-License-Identifier: MIT */
/* plugin_file.c: a plugin file checked before dlopen maps it (plugin_file.h). pread only. */
#include "plugin_file.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "log.h"

#if UINTPTR_MAX > 0xFFFFFFFFu
#define HOST_CLASS ELFCLASS64
typedef Elf64_Ehdr host_ehdr;
typedef Elf64_Phdr host_phdr;
#else
#define HOST_CLASS ELFCLASS32
typedef Elf32_Ehdr host_ehdr;
typedef Elf32_Phdr host_phdr;
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#else
#define HOST_MACHINE EM_NONE /* unknown here: not checked */
#endif

/* Read exactly n bytes at off; false when the file is shorter or the read fails. */
static bool read_at(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

/* Does the range [off, off + n) lie inside a file of size bytes? */
static bool inside(uint64_t off, uint64_t n, uint64_t size)
{
    return off <= size && n <= size - off;
}

/* The ELF header's identification and type, checked against this host. */
static bool check_header(const host_ehdr *h, uint64_t size, char *why, size_t len)
{
    if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0)
        return host_format(why, len, "not a shared object (no ELF header)"), false;
    if (h->e_ident[EI_CLASS] != HOST_CLASS)
        return host_format(why, len, "ELF class %u: this host loads %d-bit objects (class %d)",
                           h->e_ident[EI_CLASS], HOST_CLASS == ELFCLASS64 ? 64 : 32, HOST_CLASS),
               false;
    if (h->e_ident[EI_DATA] != HOST_DATA)
        return host_format(why, len, "ELF data encoding %u: not this host's byte order",
                           h->e_ident[EI_DATA]),
               false;
    if (HOST_MACHINE != EM_NONE && h->e_machine != HOST_MACHINE)
        return host_format(why, len, "built for ELF machine %u, this host is machine %u",
                           h->e_machine, HOST_MACHINE),
               false;
    if (h->e_type != ET_DYN)
        return host_format(why, len,
                           "ELF type %u: not a shared object (ET_DYN); build with "
                           "-shared -fPIC",
                           h->e_type),
               false;
    if (h->e_phentsize != sizeof(host_phdr) || h->e_phnum == 0 || h->e_phnum == PN_XNUM)
        return host_format(why, len, "bad program header table (%u entries of %u bytes)",
                           h->e_phnum, h->e_phentsize),
               false;
    uint64_t ph = (uint64_t)h->e_phnum * h->e_phentsize;
    if (!inside(h->e_phoff, ph, size))
        return host_format(why, len,
                           "truncated: the program headers end at byte %llu, the file has %llu",
                           (unsigned long long)(h->e_phoff + ph), (unsigned long long)size),
               false;
    uint64_t sh = (uint64_t)h->e_shnum * h->e_shentsize;
    if (h->e_shoff && !inside(h->e_shoff, sh, size))
        return host_format(why, len,
                           "truncated: the section headers end at byte %llu, the file has %llu",
                           (unsigned long long)(h->e_shoff + sh), (unsigned long long)size),
               false;
    return true;
}

bool host_elf_check_fd(int fd, char *why, size_t len)
{
    struct stat st;
    host_ehdr h;
    if (fstat(fd, &st) != 0) return host_format(why, len, "%s", strerror(errno)), false;
    uint64_t size = (uint64_t)st.st_size;
    if (size < sizeof h) {
        if (size >= SELFMAG && read_at(fd, &h, SELFMAG, 0) &&
            memcmp(h.e_ident, ELFMAG, SELFMAG) == 0)
            return host_format(why, len, "truncated: %llu bytes, less than an ELF header",
                               (unsigned long long)size),
                   false;
        return host_format(why, len, "not a shared object (no ELF header)"), false;
    }
    if (!read_at(fd, &h, sizeof h, 0))
        return host_format(why, len, "cannot read it: %s", strerror(errno)), false;
    if (!check_header(&h, size, why, len)) return false;
    for (unsigned i = 0; i < h.e_phnum; i++) {
        host_phdr p;
        if (!read_at(fd, &p, sizeof p, h.e_phoff + (uint64_t)i * sizeof p))
            return host_format(why, len, "cannot read program header %u", i), false;
        if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC) continue;
        if (!inside(p.p_offset, p.p_filesz, size))
            return host_format(
                       why, len, "truncated: segment %u ends at byte %llu, the file has %llu", i,
                       (unsigned long long)(p.p_offset + p.p_filesz), (unsigned long long)size),
                   false;
    }
    return true;
}

bool host_elf_check_path(const char *path, char *why, size_t len)
{
    int fd = host_fs_open_regular(path, why, len);
    if (fd < 0) return false;
    bool ok = host_elf_check_fd(fd, why, len);
    close(fd);
    return ok;
}

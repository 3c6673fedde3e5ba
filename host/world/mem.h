/* SPDX-License-Identifier: MIT */
/* mem.h: counted allocation for plugins: every block knows its account (one per plugin).
 *
 * Each block carries a header (owner account, size, links) in front of the 16-byte
 * aligned pointer the plugin sees. The headers of an account form a doubly linked list,
 * so what a plugin still holds when it is unloaded can be reported by name and freed.
 * Every live payload pointer is also in one open-addressing set, so a pointer the host
 * did not hand out (or already freed) is recognized without reading memory around it,
 * and refused. The host is single-threaded: so is this module.
 */
#ifndef HOST_MEM_H
#define HOST_MEM_H

#include <stddef.h>
#include <stdint.h>

typedef struct host_mem_block host_mem_block;

typedef struct host_mem_account {
    size_t bytes;      /* currently allocated */
    size_t blocks;     /* currently allocated blocks */
    size_t peak_bytes; /* highest `bytes` seen */
    uint64_t total_allocs;
    host_mem_block *list;
} host_mem_account;

/* The process's heap policy, set once at the start of main (ecs-host's, and ecs-bench's,
 * which times the host's code as ecs-host runs it): memory freed at the top of the heap is
 * kept for reuse up to HOST_HEAP_KEEP bytes instead of glibc's default (128 KiB, raised as
 * large blocks are freed). A session loads, unloads and reloads scenes of tens of MB: giving
 * them back took the loading thread about 10 ms in the middle of a 100,000-entity load (the
 * kernel unmapping the last scene's pages), and every page taken back costs a page fault
 * and its zeroing again. Nothing where the C library is not glibc. */
#define HOST_HEAP_KEEP ((size_t)256 << 20)
void host_mem_policy(void);

/* Allocate size bytes counted to acct. NULL on failure or size 0. */
void *host_mem_alloc(host_mem_account *acct, size_t size);

/* Resize ptr (NULL: like alloc; size 0: like free, returns NULL). The block stays with
 * the account that allocated it. On failure NULL is returned and ptr is unchanged. A
 * pointer that is not a live host block: NULL, *bad = 1 (bad may be NULL). */
void *host_mem_realloc(host_mem_account *acct, void *ptr, size_t size, int *bad);

/* Free ptr (NULL does nothing). Returns 0, or -1 when ptr is not a live host block
 * (then nothing is freed). */
int host_mem_free(void *ptr);

/* Count every block of from to `to` instead (from is left empty). */
void host_mem_move_all(host_mem_account *to, host_mem_account *from);

/* Free every block still held by acct; returns the bytes that were freed. */
size_t host_mem_release_all(host_mem_account *acct);

/* Ask for huge pages on the 2 MiB pages inside a large block of the host's own (a parse
 * tree, a scene's text): faulting hundreds of megabytes in 4 KiB pages costs as much as
 * filling them. Only a hint; nothing happens where the system has none. */
void host_mem_advise_huge(void *block, size_t size);

/* size bytes of address space, zero-filled on first touch (mmap, MAP_NORESERVE: the OS
 * commits pages as they are touched), or NULL. With huge set, the block starts on a 2 MiB
 * boundary and asks for huge pages: an array written front to back (the entity manager's)
 * then faults once per 2 MiB instead of once per 4 KiB, which on a VM is most of what
 * filling it costs. Give it back with host_mem_unreserve and the same size. */
void *host_mem_reserve(size_t size, int huge);
void host_mem_unreserve(void *block, size_t size);

/* Free the host's table of live blocks (at exit, after every account was released). */
void host_mem_shutdown(void);

#endif

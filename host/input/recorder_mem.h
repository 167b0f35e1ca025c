/*
 * The flight recorder as Linux on the traced machine sees it (efipt recover
 * --linux, docs/recorder.md): the UEFI variable that says where the region
 * is, through efivarfs; the region itself through a physical memory file
 * (/dev/mem: EfiReservedMemoryType memory is E820 "reserved", which
 * CONFIG_STRICT_DEVMEM lets root read).
 */
#ifndef EFIPT_HOST_RECORDER_MEM_H
#define EFIPT_HOST_RECORDER_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "core/recorder.h"

/* The region in a physical memory file. */
struct recmem {
	int fd;
	uint64_t base;		/* physical address of the file's offset 0 */
	uint64_t phys;		/* the region */
	const char *path;
	int err;		/* errno of the first failed read */
};

/* struct ptrec_reader's read: len bytes at offset off of the region (ctx:
 * struct recmem). 0, or -1 (m->err says why the first time). */
int recmem_read(void *ctx, uint64_t off, void *dst, size_t len);

/* The recorder's variable in efivarfs directory dir. 0; 1 no recorder or a
 * variable that is not one; 2 unreadable; why says which. */
int recmem_read_var(const char *dir, struct ptrec_var *v, char *why, size_t cap);

#endif

/*
 * Linux kernel symbols for the analyses (top, flame, calls, symbols): a
 * System.map or /proc/kallsyms ("ADDRESS TYPE NAME [MODULE]" lines) read
 * as one more image, "vmlinux", spanning the kernel's text: each text
 * symbol (types t, T, w, W) is a function up to the next one. No code, no
 * lines: like a linker map (docs/symbols.md).
 *
 * The map's addresses are the link addresses; a kernel running with KASLR
 * is shifted by its offset (the slide): given, or found from the trace
 * (kernsyms_find_slide). /proc/kallsyms of the traced boot already holds
 * the running addresses (slide 0).
 */
#ifndef EFIPT_HOST_KERNSYMS_H
#define EFIPT_HOST_KERNSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "host/symbols/symmap.h"

/* The text symbols of a map, sorted by address (names owned). */
struct kernsyms {
	char path[4096];
	uint64_t *addr;
	char **name;
	size_t n;
	uint64_t text_lo, text_hi;	/* [_text or the lowest, _etext or the highest + 1) */
	size_t lines, zero;		/* lines read; text symbols with address 0 */
};

/* Read path. 0, or -1 with "PATH: reason" in err (unreadable, no text
 * symbols, all addresses 0: /proc/kallsyms read without root). */
int kernsyms_read(struct kernsyms *k, const char *path, char *err, size_t errlen);
void kernsyms_free(struct kernsyms *k);

/*
 * The KASLR slide from a trace: the branch targets its IP packets name in
 * the kernel's half of the address space (TIP, TIP.PGE, FUP) are compared
 * with the function entries shifted by each candidate (0 to 1 GiB in 2 MiB
 * steps, x86-64's CONFIG_PHYSICAL_ALIGN): the slide under which most of
 * them are entries. 0 and *hits, or -1 with why (no kernel targets, no
 * candidate clearly best).
 */
int kernsyms_find_slide(const struct kernsyms *k, const uint8_t *trace, size_t n, uint64_t *slide,
			unsigned *hits, char *why, size_t cap);

/* The image the analyses see: named "vmlinux", base text_lo + slide, its
 * functions in a symfile (how: SYMHOW_MAP, notes say from where). 0, or -1
 * out of memory. */
int kernsyms_image(const struct kernsyms *k, uint64_t slide, struct image *im);

#endif

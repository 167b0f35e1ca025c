/*
 * GNU ld map files (-Map; EDK2 writes NAME.map beside each module's
 * NAME.debug) as the last source of function names: no code bytes, no
 * types, no lines, only where the linker put each input section and symbol.
 */
#ifndef EFIPT_HOST_LDMAP_H
#define EFIPT_HOST_LDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "host/symbols/symfile.h"

/*
 * Read path into sf (from_map set): the code output sections (.text*, in
 * sf->code without bytes) and the functions in them. A function is an
 * input section .text.NAME (-ffunction-sections; GCC's clone suffixes such
 * as .constprop.0 dropped, as DWARF names them), split at each symbol the
 * map lists inside an input section (assembly puts several in one .text).
 * 0, or -1 with "PATH: reason" in err (not a map, no code, truncated).
 */
int ldmap_open(struct symfile *sf, const char *path, char *err, size_t errlen);

/* How much larger than the map's code section the image's may be (GenFw
 * pads a section to the section alignment, a page at most). */
#define LDMAP_SLACK 0x1000

/*
 * Do the map's sections lie where the image has them? hdr: the image's
 * first n bytes as loaded (its PE headers). Each code section of the map
 * must start where one of the image's code sections starts and end within
 * LDMAP_SLACK of its end, inside the image's size. 1 yes; 0 no, why says
 * where; -1 the headers are not a PE image.
 */
int ldmap_check(const struct symfile *sf, const uint8_t *hdr, size_t n, uint64_t image_size,
		char *why, size_t cap);

#endif

/*
 * Names by number: each distinct string added gets the next handle (0, 1,
 * ...) and keeps it, so a writer can say a name once and refer to it by
 * number after (Perfetto's interned names, the JSON writer's escaped
 * copies).
 */
#ifndef EFIPT_HOST_NAME_TABLE_H
#define EFIPT_HOST_NAME_TABLE_H

#include <stdint.h>

#define NTAB_NONE UINT32_MAX

struct ntab {
	char **s;		/* by handle: a copy of each string */
	uint32_t n, cap;
	uint32_t *slot;		/* open addressing: handle + 1, 0 empty */
	uint32_t nslot;		/* a power of two, at least 2n */
};

/* The handle of s (added if new), or NTAB_NONE when out of memory. */
uint32_t ntab_add(struct ntab *t, const char *s);
void ntab_free(struct ntab *t);

#endif

/*
 * Arrays that double as they fill: grow_array(&a, &cap, n, sizeof(*a),
 * FIRST) before writing a[n].
 */
#ifndef EFIPT_HOST_GROW_H
#define EFIPT_HOST_GROW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Room for element n in *p (*cap elements of size bytes): the array
 * doubles (first elements at first). false when memory is out or the size
 * would pass SIZE_MAX; *p and *cap are then unchanged. */
static inline bool grow_array(void **p, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : first;
	if (c < *cap || c > SIZE_MAX / size)
		return false;
	void *q = realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

#endif

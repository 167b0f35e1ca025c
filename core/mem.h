/*
 * Byte helpers for core/, which has no libc. Small and inline: the compiler
 * turns fixed-size copies into moves. Unaligned little-endian loads are
 * assembled from bytes so no type-punned access is ever made.
 */
#ifndef EFIPT_CORE_MEM_H
#define EFIPT_CORE_MEM_H

#include <stddef.h>
#include <stdint.h>

static inline void *efipt_memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--)
		*d++ = *s++;
	return dst;
}

static inline void *efipt_memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

static inline int efipt_memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x < *y ? -1 : 1;
	return 0;
}

static inline size_t efipt_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static inline int efipt_strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

/* Little-endian loads of 1..8 bytes from an arbitrary address. */
static inline uint64_t efipt_load_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline uint16_t efipt_le16(const uint8_t *p) { return (uint16_t)efipt_load_le(p, 2); }
static inline uint32_t efipt_le32(const uint8_t *p) { return (uint32_t)efipt_load_le(p, 4); }
static inline uint64_t efipt_le64(const uint8_t *p) { return efipt_load_le(p, 8); }

static inline void efipt_store_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

#endif

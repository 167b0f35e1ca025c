/*
 * The QEMU plugin's packet generator (qemu-plugin/ptgen.c) writing into a
 * buffer, for the tests that read its packets back.
 */
#ifndef EFIPT_TESTS_PTGEN_BUF_H
#define EFIPT_TESTS_PTGEN_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ptgen_buf {
	uint8_t *data;
	size_t len, cap;
};

/* ptgen's write callback (ctx: a struct ptgen_buf); false when full. */
static inline bool ptgen_buf_write(void *ctx, const uint8_t *buf, size_t n)
{
	struct ptgen_buf *b = ctx;
	if (b->len + n > b->cap)
		return false;
	memcpy(b->data + b->len, buf, n);
	b->len += n;
	return true;
}

#endif

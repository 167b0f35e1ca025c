#include "tests/lib/span_copy.h"

int span_copy(void *ctx, uint64_t phys, uint64_t len)
{
	struct span_copy *c = ctx;
	if (len > c->cap - c->len)
		return 1;
	simmem_read(c->mem, phys, c->buf + c->len, (size_t)len);
	c->len += (size_t)len;
	return 0;
}

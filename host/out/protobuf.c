/* Protocol buffer encoding: see protobuf.h. */
#include <string.h>

#include "host/out/protobuf.h"

void pb_init(struct pb_buf *b, void *mem, size_t cap)
{
	b->p = mem;
	b->cap = cap;
	pb_reset(b);
}

void pb_reset(struct pb_buf *b)
{
	b->len = 0;
	b->full = false;
}

size_t pb_varint_size(uint64_t v)
{
	/* 7 bits a byte: the significant bits, rounded up */
	return ((size_t)(64 - __builtin_clzll(v | 1)) + 6) / 7;
}

/* Room for n more bytes, else the buffer is full from now on. */
static bool room(struct pb_buf *b, size_t n)
{
	if (b->full || n > b->cap - b->len) {
		b->full = true;
		return false;
	}
	return true;
}

static void put_varint(struct pb_buf *b, uint64_t v)
{
	b->len += (size_t)(pb_put_varint(b->p + b->len, v) - (b->p + b->len));
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
	if (room(b, pb_varint_size(v)))
		put_varint(b, v);
}

void pb_uint_room(struct pb_buf *b, uint32_t field, uint64_t v)
{
	uint64_t key = (uint64_t)field << 3 | PB_VARINT;
	if (room(b, pb_varint_size(key) + pb_varint_size(v))) {
		put_varint(b, key);
		put_varint(b, v);
	}
}

void pb_int(struct pb_buf *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *d, size_t n)
{
	uint64_t key = (uint64_t)field << 3 | PB_LEN;
	size_t head = pb_varint_size(key) + pb_varint_size(n);
	if (n > SIZE_MAX - head || !room(b, head + n))
		return;
	put_varint(b, key);
	put_varint(b, n);
	if (n)
		memcpy(b->p + b->len, d, n);
	b->len += n;
}

void pb_str(struct pb_buf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

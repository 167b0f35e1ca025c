/*
 * The part of the protocol buffer wire format a writer needs: varints and
 * fields of wire type 0 (varint) and 2 (length-delimited), appended to a
 * buffer the caller owns. A nested message is encoded into its own buffer
 * first, then appended whole (its length goes before it).
 *
 *   field key  = field number << 3 | wire type
 *   varint     = 7 bits a byte, least significant first, bit 7 set on
 *                every byte but the last (1..10 bytes)
 *   int64      = its two's complement as a varint (10 bytes when negative)
 *   wire type 2 = key, length as a varint, the bytes
 */
#ifndef EFIPT_HOST_PROTOBUF_H
#define EFIPT_HOST_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_LEN = 2 };

/* A buffer of fixed capacity: a field that does not fit is not written,
 * and full says so (every later append is refused too). */
struct pb_buf {
	uint8_t *p;
	size_t len, cap;
	bool full;
};

void pb_init(struct pb_buf *b, void *mem, size_t cap);
/* Empty it again (full cleared). */
void pb_reset(struct pb_buf *b);
/* Bytes the varint of v takes (1..10). */
size_t pb_varint_size(uint64_t v);
void pb_varint(struct pb_buf *b, uint64_t v);
/* v as a varint at q; returns the end. */
static inline uint8_t *pb_put_varint(uint8_t *q, uint64_t v)
{
	while (v >= 0x80) {
		*q++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*q++ = (uint8_t)v;
	return q;
}
/* pb_uint near the end of the buffer: what fits. */
void pb_uint_room(struct pb_buf *b, uint32_t field, uint64_t v);
/* Field number field with wire type 0: uint32/64, int32/64, bool, enum.
 * Inline: a timeline writes tens of millions of them. With room for the
 * longest key and value (5 + 10 bytes) no sizes are needed first. */
static inline void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (b->full || b->cap - b->len < 15) {
		pb_uint_room(b, field, v);
		return;
	}
	uint8_t *p = b->p + b->len;
	uint8_t *q = pb_put_varint(pb_put_varint(p, (uint64_t)field << 3 | PB_VARINT), v);
	b->len += (size_t)(q - p);
}
void pb_int(struct pb_buf *b, uint32_t field, int64_t v);
/* Field number field with wire type 2: bytes, a string (without its NUL),
 * or the message encoded in m. */
void pb_bytes(struct pb_buf *b, uint32_t field, const void *d, size_t n);
void pb_str(struct pb_buf *b, uint32_t field, const char *s);
/* Inline: every timeline event is a message in a packet. */
static inline void pb_msg(struct pb_buf *b, uint32_t field, const struct pb_buf *m)
{
	if (m->full) {
		b->full = true;
	} else if (!b->full && m->len < 128 && b->cap - b->len >= 6 + m->len) {
		/* key (at most 5 bytes) and a one-byte length */
		uint8_t *q = pb_put_varint(b->p + b->len, (uint64_t)field << 3 | PB_LEN);
		*q++ = (uint8_t)m->len;
		__builtin_memcpy(q, m->p, m->len);
		b->len = (size_t)(q - b->p) + m->len;
	} else {
		pb_bytes(b, field, m->p, m->len);
	}
}

#endif

/* host/out/protobuf.c: varints and fields against the wire format's
 * own examples (protobuf.dev, "Encoding"), and a full buffer that refuses
 * whole fields. */
#include <string.h>

#include "check.h"
#include "host/out/protobuf.h"

/* b holds exactly the n bytes of want */
static int same(const struct pb_buf *b, const char *want, size_t n)
{
	return !b->full && b->len == n && !memcmp(b->p, want, n);
}

int main(void)
{
	uint8_t mem[64], mem2[64];
	struct pb_buf b, m;
	static const struct {
		uint64_t v;
		const char *bytes;
		size_t n;
	} varints[] = {
		{ 0, "\x00", 1 },
		{ 1, "\x01", 1 },
		{ 127, "\x7f", 1 },
		{ 128, "\x80\x01", 2 },
		{ 150, "\x96\x01", 2 },
		{ 300, "\xac\x02", 2 },
		{ 16383, "\xff\x7f", 2 },
		{ 16384, "\x80\x80\x01", 3 },
		{ 0xffffffffull, "\xff\xff\xff\xff\x0f", 5 },
		{ 1ull << 63, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10 },
		{ UINT64_MAX, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10 },
	};
	int good = 1;
	for (size_t i = 0; i < sizeof(varints) / sizeof(varints[0]); i++) {
		pb_init(&b, mem, sizeof(mem));
		pb_varint(&b, varints[i].v);
		good &= REQUIRE_QUIET(same(&b, varints[i].bytes, varints[i].n) &&
					      pb_varint_size(varints[i].v) == varints[i].n,
				      "pb: varints", "value %llu", (unsigned long long)varints[i].v);
	}
	CHECK(good, "pb: varints of 1 to 10 bytes");

	pb_init(&b, mem, sizeof(mem));
	pb_uint(&b, 1, 150);
	CHECK(same(&b, "\x08\x96\x01", 3), "pb: field 1 = 150 is 08 96 01");
	pb_reset(&b);
	pb_str(&b, 2, "testing");
	CHECK(same(&b, "\x12\x07testing", 9), "pb: string field 2 is 12 07 and the bytes");
	pb_init(&m, mem2, sizeof(mem2));
	pb_uint(&m, 1, 150);
	pb_reset(&b);
	pb_msg(&b, 3, &m);
	CHECK(same(&b, "\x1a\x03\x08\x96\x01", 5), "pb: embedded message field 3 is 1a 03 08 96 01");
	pb_reset(&b);
	pb_uint(&b, 30, 1);
	pb_uint(&b, 60, 0);
	CHECK(same(&b, "\xf0\x01\x01\xe0\x03\x00", 6), "pb: keys past field 15 take two bytes");
	pb_reset(&b);
	pb_int(&b, 4, -1);
	CHECK(same(&b, "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11),
	      "pb: a negative int64 is ten bytes of two's complement");
	pb_reset(&b);
	pb_bytes(&b, 8, NULL, 0);
	CHECK(same(&b, "\x42\x00", 2), "pb: an empty message is its key and length 0");

	/* a field that does not fit is not written, nor anything after */
	pb_init(&b, mem, 4);
	pb_uint(&b, 1, 1);
	pb_uint(&b, 1, 150);
	CHECK(b.full && b.len == 2 && !memcmp(b.p, "\x08\x01", 2),
	      "pb: a field past the capacity is refused whole");
	pb_uint(&b, 1, 1);
	CHECK(b.full && b.len == 2, "pb: a full buffer refuses every later field");
	pb_reset(&b);
	CHECK(!b.full && !b.len, "pb: reset empties it");
	pb_str(&b, 2, "four");
	CHECK(b.full && !b.len, "pb: a string past the capacity is refused whole");
	pb_init(&m, mem2, 1);
	pb_uint(&m, 1, 150);
	pb_init(&b, mem, sizeof(mem));
	pb_msg(&b, 3, &m);
	CHECK(b.full && !b.len, "pb: a message embedding a full one is full");
	return check_exit();
}

/* codechanges.bin records; see codechg.h. */
#include "core/codechg.h"
#include "core/mem.h"

void codechg_header(uint8_t *out)
{
	efipt_memcpy(out, CODECHG_MAGIC, 8);
	efipt_store_le(out + 8, CODECHG_RECORD, 4);
	efipt_store_le(out + 12, 0, 4);
}

void codechg_put(uint8_t *out, const struct codechg *c)
{
	efipt_memset(out, 0, CODECHG_RECORD);
	efipt_store_le(out, c->pos, 8);
	efipt_store_le(out + 8, c->addr, 8);
	efipt_store_le(out + 16, c->cpu, 2);
	out[18] = c->len;
	out[19] = c->flags;
	efipt_store_le(out + 20, c->flags & CODECHG_OTHER_CPU ? c->by : c->cpu, 2);
	efipt_memcpy(out + 24, c->bytes, c->len <= CODECHG_MAX_LEN ? c->len : CODECHG_MAX_LEN);
}

long codechg_check(const uint8_t *buf, size_t size, const char **why, uint64_t *at)
{
	*at = 0;
	if (size < CODECHG_HEADER) {
		*why = "shorter than its 16-byte header";
		return -1;
	}
	if (efipt_memcmp(buf, CODECHG_MAGIC, 8)) {
		*why = "not a code change file (no EFIPTCC1 at its start)";
		return -1;
	}
	if (efipt_le32(buf + 8) != CODECHG_RECORD) {
		*at = 8;
		*why = "record size is not 40";
		return -1;
	}
	size_t body = size - CODECHG_HEADER;
	if (body % CODECHG_RECORD) {
		*at = CODECHG_HEADER + body / CODECHG_RECORD * CODECHG_RECORD;
		*why = "the last record is cut short";
		return -1;
	}
	return (long)(body / CODECHG_RECORD);
}

int codechg_get(const uint8_t *buf, size_t size, size_t i, struct codechg *c, const char **why)
{
	size_t off = CODECHG_HEADER + i * CODECHG_RECORD;
	if (size < CODECHG_HEADER || i >= (size - CODECHG_HEADER) / CODECHG_RECORD) {
		*why = "no such record";
		return -1;
	}
	const uint8_t *r = buf + off;
	c->pos = efipt_le64(r);
	c->addr = efipt_le64(r + 8);
	c->cpu = efipt_le16(r + 16);
	c->len = r[18];
	c->flags = r[19];
	c->by = c->flags & CODECHG_OTHER_CPU ? efipt_le16(r + 20) : c->cpu;
	efipt_memcpy(c->bytes, r + 24, CODECHG_MAX_LEN);
	if (!c->len || c->len > CODECHG_MAX_LEN) {
		*why = "a code length of 0 or above 16";
		return -1;
	}
	if (c->flags & ~CODECHG_OTHER_CPU) {
		*why = "unknown flags (byte 19 of the record)";
		return -1;
	}
	if (c->addr + c->len - 1 < c->addr) {
		*why = "code that wraps around the address space";
		return -1;
	}
	return 0;
}

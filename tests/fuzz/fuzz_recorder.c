/*
 * libFuzzer target for the recorder region parser (core/recorder*.c): what
 * efipt.efi recover and efipt recover --linux read from memory a reset or
 * another boot may have changed. Input: an 8-byte header offset, one byte
 * of switches, then the region's bytes. The switches let the fuzzer past
 * the checksums it cannot forge: bit 0 recomputes the header's CRC, bit 1
 * each section's; bit 2 hands the last 32 bytes in as output MSRs.
 */
#include <stdint.h>
#include <string.h>

#include "core/crc32.h"
#include "core/recorder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t region[1 << 20];
static struct ptrec r;
static char text[1 << 18];

struct mem {
	const uint8_t *b;
	size_t n;
};

static int rd(void *ctx, uint64_t off, void *dst, size_t len)
{
	const struct mem *m = ctx;
	if (off > m->n || len > m->n - off)
		return -1;
	memcpy(dst, m->b + off, len);
	return 0;
}

static int span(void *ctx, uint64_t off, uint64_t len)
{
	uint64_t *sum = ctx;
	*sum += off + len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[1024];
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	if (size < 9)
		return 0;
	uint64_t hsel;
	memcpy(&hsel, data, 8);
	uint8_t fix = data[8];
	size_t len = size - 9;
	if (len > sizeof(region))
		return 0;
	memcpy(region, data + 9, len);
	struct ptrec_var v;
	ptrec_var_decode(region, len < sizeof(v) ? len : sizeof(v), &v, &sb);
	size_t rsize = len & ~(size_t)0xfff;
	if (rsize < 2 * PTREC_HEADER_BYTES)
		return 0;
	memset(&v, 0, sizeof(v));
	v.region_size = rsize;
	v.header_off = (hsel % (rsize / 4096 - 1)) * 4096;
	v.region_phys = 0x100000;
	struct ptrec_header h;
	memcpy(&h, region + v.header_off, sizeof(h));
	if (!memcmp(h.magic, PTREC_MAGIC, 8)) {
		v.generation = h.generation;
		if (!(h.region_phys & 0xfff))
			v.region_phys = h.region_phys;
	}
	if (fix & 2)
		for (uint32_t i = 0; i < h.nsect && i < PTREC_MAX_SECTIONS; i++) {
			struct ptrec_section *s = &h.sect[i];
			if (s->off <= rsize && s->used <= rsize - s->off)
				s->crc = crc32_update(0, region + s->off, (size_t)s->used);
		}
	if (fix & 3) {
		h.crc = 0;
		h.crc = crc32_update(0, &h, sizeof(h));
		memcpy(region + v.header_off, &h, sizeof(h));
	}
	struct mem m = { region, rsize };
	struct ptrec_reader reader = { rd, &m };
	if (ptrec_open(&r, &v, &reader, &sb) != PTREC_OK)
		return 0;
	struct ptrec_msrs msrs = { 0 };
	if ((fix & 4) && len >= 32 + 9) {
		msrs.valid = true;
		memcpy(&msrs.ctl, data + size - 32, 8);
		memcpy(&msrs.status, data + size - 24, 8);
		memcpy(&msrs.base, data + size - 16, 8);
		memcpy(&msrs.mask, data + size - 8, 8);
	}
	struct ptrec_end e;
	sb_init(&sb, why, sizeof(why));
	if (ptrec_find_end(&r, &msrs, &e, &sb) == 0) {
		uint64_t sum = 0;
		ptrec_trace_spans(&r, &e, span, &sum);
		sb_init(&sb, text, sizeof(text));
		struct ptrec_here here = { 1, true, "fuzz", false };
		ptrec_manifest_members(&r, &e, &here, why, &sb);
	}
	struct ptrec_code c;
	for (unsigned i = 0; ptrec_code(&r, i, &c); i++)
		if (c.off > rsize || c.size > rsize - c.off)
			__builtin_trap(); /* a snapshot outside the region */
	sb_init(&sb, text, sizeof(text));
	ptrec_images_json(&r, &sb);
	sb_init(&sb, text, sizeof(text));
	ptrec_memmap_json(&r, &sb);
	sb_init(&sb, text, sizeof(text));
	ptrec_describe(&r, &sb);
	struct cpuid_set set;
	ptrec_cpuid(&r, &set);
	return 0;
}

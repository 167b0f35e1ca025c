/*
 * libFuzzer target for the firmware boot trace's untrusted inputs: the
 * options text (PCD or the EfiptNextBoot variable: fwtrace_parse_options,
 * fwtrace_options_text) and a record found in memory (fwtrace_check; a
 * record that passes is adopted and its trace extracted, as efipt.efi
 * collect does, over memory that reads as zeros). The first byte picks:
 * 1 takes the bytes as a record; 2 patches a valid record (a stopped 192K
 * ToPA trace of two regions) at the offsets the input gives, 3 bytes per
 * change, and seals it with a good CRC, so the checks behind it are
 * reached; 3 does the same to a table with two application processors'
 * records after the image (EfiptDxe --cpus), each adopted and extracted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/boot_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void zero_read(void *ctx, uint64_t phys, void *dst, size_t len)
{
	(void)ctx, (void)phys;
	memset(dst, 0, len);
}

static int count_span(void *ctx, uint64_t phys, uint64_t len)
{
	(void)phys;
	*(uint64_t *)ctx += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fwtrace_opts opts;
	static struct boottrace_work work;
	char msg[1024];
	struct strbuf sb;
	sb_init(&sb, msg, sizeof(msg));
	if (size < 1)
		return 0;
	uint8_t which = data[0] % 4;
	data++;
	size--;
	if (which == 0) {
		char *text = malloc(size + 1);
		memcpy(text, data, size);
		text[size] = 0;
		fwtrace_parse_options(&opts, text, &sb);
		char out[FWTRACE_OPTIONS_MAX];
		fwtrace_options_text(data, size, out, sizeof(out), &sb);
		free(text);
		return 0;
	}
	uint8_t *copy;
	if (which >= 2) {
		uint32_t ncpus = which == 3 ? 2 : 0;
		size_t n = fwtrace_size_for(1, ncpus);
		copy = calloc(1, n);
		struct fwtrace_rec *t = (struct fwtrace_rec *)copy;
		fwtrace_init(t, 1);
		t->nimages = 1;
		t->status = FWTRACE_STOPPED;
		t->stopped_at = FWTRACE_STOP_READY_TO_BOOT;
		t->output = PTCFG_OUT_TOPA;
		t->mode = PTCFG_MODE_STOP;
		t->maxphyaddr = 39;
		t->rtit_ctl = 0x210c;
		t->buf_size = 192 << 10;
		t->nreg = 2;
		t->ntab = 1;
		t->per_table = 512;
		t->reg[0] = (struct fwtrace_region){ 0x1000000, 128 << 10, 0, 0 };
		t->reg[1] = (struct fwtrace_region){ 0x1020000, 64 << 10, 0, 1 };
		t->tab[0] = (struct fwtrace_table){ 0x2000000, 0, 2 };
		t->msr_base = 0x2000000;
		t->msr_mask = 0x7f;
		t->stop_base = 0x2000000;
		t->stop_mask = (100ull << 32) | (1 << 7) | 0x7f;
		for (uint32_t k = 0; k < ncpus; k++) {
			/* an AP: the same layout 64M further up, its own number and APIC ID */
			struct fwtrace_rec *c = &fwtrace_cpus(t)[k];
			*c = *t;
			c->max_images = c->nimages = 0;
			c->cpu_number = c->apic_id = k + 1;
			for (unsigned i = 0; i < 2; i++)
				c->reg[i].base += (k + 1ull) << 26;
			c->tab[0].phys += (k + 1ull) << 26;
			c->msr_base = c->stop_base = c->tab[0].phys;
			c->size = sizeof(*c);
		}
		t->ncpus = ncpus;
		t->size = (uint32_t)n;
		for (size_t i = 0; i + 3 <= size; i += 3)
			copy[((size_t)data[i] << 8 | data[i + 1]) % n] = data[i + 2];
		/* a good CRC over what the (maybe changed) size says, where it fits */
		t->crc32 = 0;
		if (t->size <= n)
			t->crc32 = fwtrace_crc32(copy, t->size);
		size = n;
	} else {
		/* an exact-size heap copy, so any over-read is caught */
		copy = malloc(size ? size : 1);
		memcpy(copy, data, size);
	}
	struct fwtrace_rec *r = (struct fwtrace_rec *)copy;
	if (fwtrace_check(copy, size, &sb) == 0) {
		fwtrace_json(r, &sb);
		if (boottrace_adopt(r, &work, NULL, &sb) == 0) {
			struct ptout_mem mem = { 0 };
			mem.read = zero_read;
			uint64_t bytes = 0;
			struct ptout_extent ext;
			boottrace_extract(r, &work, &mem, count_span, &bytes, &ext);
		}
		for (uint32_t k = 0; k < r->ncpus; k++)
			if (boottrace_adopt(&fwtrace_cpus(r)[k], &work, NULL, &sb) == 0) {
				struct ptout_mem mem = { 0 };
				mem.read = zero_read;
				uint64_t bytes = 0;
				struct ptout_extent ext;
				boottrace_extract(&fwtrace_cpus(r)[k], &work, &mem, count_span, &bytes,
						  &ext);
			}
	}
	free(copy);
	return 0;
}

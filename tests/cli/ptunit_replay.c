/*
 * Replays a WRMSR sequence (efipt plan --format jsonl: its "topa" tables
 * and "wrmsr" steps, in order) through the PT unit's rules exactly as
 * efipt-qemu.so start=guest applies them (core/pt_unit.c, with the
 * capabilities ptcaps_emulate() gives a profile and MAXPHYADDR 40, TCG's):
 *
 *   efipt plan --cpuid PROFILE --format jsonl [OPTIONS] | ptunit_replay PROFILE
 *
 * Every write must be taken as hardware takes it (no #GP, no operational
 * error, TriggerEn where TraceEn is set), TraceEn must go on and off.
 * Prints "ok: N writes" (exit 0) or the first write refused and the rule
 * (exit 1); exit 2 on bad input.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "core/pt_rtit.h"
#include "core/pt_unit.h"

#define MAX_ENTRIES 65536

static struct {
	uint64_t addr[MAX_ENTRIES], val[MAX_ENTRIES];
	unsigned n;
} mem;

static bool read64(void *ctx, uint64_t phys, uint64_t *v)
{
	(void)ctx;
	for (unsigned i = 0; i < mem.n; i++) {
		if (mem.addr[i] == phys) {
			*v = mem.val[i];
			return true;
		}
	}
	return false;
}

static void write_bytes(void *ctx, uint64_t phys, const uint8_t *b, size_t n)
{
	(void)ctx;
	(void)phys;
	(void)b;
	(void)n;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ptunit_replay PROFILE < OPS\n");
		return 2;
	}
	static char text[1 << 20];
	FILE *f = fopen(argv[1], "r");
	size_t len = f ? fread(text, 1, sizeof(text), f) : 0;
	if (f)
		fclose(f);
	static struct cpuid_set set;
	unsigned line = 0;
	struct ptcaps caps;
	memset(&caps, 0, sizeof(caps));
	caps.maxphyaddr = 40;
	if (!len || cpuidtxt_parse(&set, text, len, 0, &line) || !ptcaps_emulate(&caps, &set)) {
		fprintf(stderr, "ptunit_replay: %s: no profile with Intel PT\n", argv[1]);
		return 2;
	}
	struct ptunit u;
	ptunit_init(&u, &caps);
	struct ptunit_mem m = { read64, write_bytes, NULL, NULL };
	char buf[1 << 16];
	unsigned writes = 0;
	bool on = false, off = false;
	while (fgets(buf, sizeof(buf), stdin)) {
		json_t *o = json_loads(buf, 0, NULL);
		const char *op = json_string_value(json_object_get(o, "op"));
		if (op && !strcmp(op, "topa")) {
			uint64_t table = strtoull(json_string_value(json_object_get(o, "table")) ?: "0",
						  NULL, 16);
			size_t i;
			json_t *e;
			json_array_foreach(json_object_get(o, "entries"), i, e) {
				uint64_t base = strtoull(json_string_value(json_object_get(e, "base")) ?: "0",
							 NULL, 16);
				uint64_t size = (uint64_t)json_integer_value(json_object_get(e, "size"));
				uint64_t code = 0;
				while (!json_is_true(json_object_get(e, "end")) && (4096ull << code) < size)
					code++;
				/* Table 33-3: END bit 0, INT bit 2, STOP bit 4, Size 9:6 */
				uint64_t v = base | code << 6 |
					     (json_is_true(json_object_get(e, "end")) ? TOPA_END : 0) |
					     (json_is_true(json_object_get(e, "int")) ? TOPA_INT : 0) |
					     (json_is_true(json_object_get(e, "stop")) ? TOPA_STOP : 0);
				if (mem.n == MAX_ENTRIES) {
					json_decref(o);
					return 2;
				}
				mem.addr[mem.n] = table + 8ull * i;
				mem.val[mem.n++] = v;
			}
		}
		bool wr = op && !strcmp(op, "wrmsr");
		uint32_t msr = wr ? (uint32_t)strtoul(json_string_value(json_object_get(o, "msr")) ?: "0",
						       NULL, 16) : 0;
		uint64_t v = wr ? strtoull(json_string_value(json_object_get(o, "value")) ?: "0", NULL, 16)
				: 0;
		json_decref(o);
		if (!wr)
			continue;
		writes++;
		char why[512] = "";
		struct strbuf wb;
		sb_init(&wb, why, sizeof(why));
		int r = ptunit_wrmsr(&u, msr, v, &m, &wb);
		if (r != PTUNIT_OK) {
			printf("refused: WRMSR 0x%x = 0x%" PRIx64 " (write %u): %s\n", msr, v, writes,
			       why);
			return 1;
		}
		if (msr == MSR_IA32_RTIT_CTL && (v & RTIT_CTL_TRACEEN)) {
			if (!ptunit_triggered(&u)) {
				printf("refused: TraceEn set without TriggerEn (write %u)\n", writes);
				return 1;
			}
			on = true;
		} else if (msr == MSR_IA32_RTIT_CTL && on) {
			off = true;
		}
	}
	if (!on || !off) {
		printf("refused: TraceEn never %s\n", on ? "cleared" : "set");
		return 1;
	}
	printf("ok: %u writes\n", writes);
	return 0;
}

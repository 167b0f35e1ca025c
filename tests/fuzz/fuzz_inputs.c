/*
 * libFuzzer target for efipt's other untrusted inputs: a CPUID dump
 * (cpuidtxt_parse + ptcaps_parse + report), a PE image (pe_read_info, file
 * and mapped layouts; pe_code_read), and a command line (cmdline_split, then the trace
 * options parser and validator against a real CPU profile's capabilities),
 * and a run directory's codechanges.bin (codechg_check, codechg_get).
 * The first byte picks the parser; the rest is its input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cmdline.h"
#include "core/codechg.h"
#include "core/cpuid_set.h"
#include "core/pe_info.h"
#include "core/pt_caps.h"
#include "core/pt_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Skylake client leaf 14H (SDM Table 33-11 values of a real CPU). */
static void skylake_caps(struct ptcaps *caps)
{
	static struct cpuid_set s;
	uint32_t r0[4] = { 0x16, 0x756e6547, 0x6c65746e, 0x49656e69 };
	uint32_t r1[4] = { 0x000506e3, 0, 0, 0 };
	uint32_t r7[4] = { 0, 0x029c6fbf, 0, 0 };
	uint32_t a[4] = { 1, 0xf, 0x7, 0 }, b[4] = { 0x02490002, 0x003f3fff, 0, 0 };
	cpuid_set_init(&s);
	cpuid_set_put(&s, 0, 0, r0);
	cpuid_set_put(&s, 1, 0, r1);
	cpuid_set_put(&s, 7, 0, r7);
	cpuid_set_put(&s, 0x14, 0, a);
	cpuid_set_put(&s, 0x14, 1, b);
	ptcaps_parse(caps, &s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t which = data[0] % 4;
	data++;
	size--;
	if (which == 0) {
		static struct cpuid_set set;
		unsigned line;
		if (cpuidtxt_parse(&set, (const char *)data, size, size ? data[0] & 1 : 0, &line) == 0) {
			struct ptcaps caps;
			ptcaps_parse(&caps, &set);
			static char out[16384];
			struct strbuf sb;
			sb_init(&sb, out, sizeof(out));
			ptcaps_report(&caps, &sb);
			ptcaps_json(&caps, &sb);
			cpuidtxt_write(&set, &sb);
		}
	} else if (which == 1) {
		/* an exact-size heap copy, so any over-read is caught */
		uint8_t *copy = malloc(size ? size : 1);
		memcpy(copy, data, size);
		struct pe_info pi;
		pe_read_info(copy, size, false, &pi);
		pe_read_info(copy, size, true, &pi);
		char name[64];
		pe_debug_name(pi.debug_path, name, sizeof(name));
		/* the executable sections, read through a callback at a base,
		 * with the image's size from its headers and a hostile one */
		struct ptimg_flat flat = { copy, 0x1000, size };
		struct ptimg img = { ptimg_flat_read, &flat };
		struct pe_code pc;
		pe_code_read(&img, 0x1000, pi.size_of_image, &pc);
		pe_code_read(&img, 0x1000, ~0ull - 0x1000, &pc);
		free(copy);
	} else if (which == 3) {
		/* an exact-size heap copy, so any over-read is caught */
		uint8_t *copy = malloc(size ? size : 1);
		memcpy(copy, data, size);
		const char *why;
		uint64_t at;
		long n = codechg_check(copy, size, &why, &at);
		for (long i = 0; i <= n; i++) { /* one past the last: refused */
			struct codechg c;
			if (!codechg_get(copy, size, (size_t)i, &c, &why) &&
			    (!c.len || c.len > CODECHG_MAX_LEN || c.addr + c.len - 1 < c.addr ||
			     (c.flags & ~CODECHG_OTHER_CPU) ||
			     (!(c.flags & CODECHG_OTHER_CPU) && c.by != c.cpu)))
				__builtin_trap();
		}
		free(copy);
	} else {
		char *buf = malloc(size + 1);
		memcpy(buf, data, size);
		buf[size] = 0;
		char *argv[65];
		int argc = cmdline_split(buf, argv, 64);
		struct ptcfg cfg;
		ptcfg_init(&cfg);
		char err[512];
		struct strbuf sb;
		sb_init(&sb, err, sizeof(err));
		for (int i = 0; i < argc;) {
			int n = ptcfg_option(&cfg, argv[i], i + 1 < argc ? argv[i + 1] : NULL, &sb);
			i += n > 0 ? n : 1;
		}
		struct ptcaps caps;
		skylake_caps(&caps);
		struct ptcfg_settings set;
		sb_reset(&sb);
		ptcfg_validate(&cfg, &caps, &set, &sb);
		free(buf);
	}
	return 0;
}

/*
 * Capability decoding over 52 real CPU profiles: every CPUID .txt in
 * tests/data/cpu-profiles is decoded by ptcaps_parse and compared with the
 * independent decoding stored next to it in profiles.json.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "host/util/file_io.h"

#define DIRPATH "tests/data/cpu-profiles"

static unsigned long hexval(json_t *v)
{
	return v && json_is_string(v) ? strtoul(json_string_value(v), NULL, 16) : 0;
}

static json_t *find_profile(json_t *all, const char *text)
{
	/* first line: "# NAME", second: "# source: SRC" */
	const char *nl = strchr(text, '\n');
	if (strncmp(text, "# ", 2) || !nl)
		return NULL;
	size_t n = (size_t)(nl - text - 2);
	const char *src = strstr(text, "# source: ");
	size_t i;
	json_t *p;
	json_array_foreach(all, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		const char *s = json_string_value(json_object_get(p, "source"));
		if (name && strlen(name) == n && !strncmp(name, text + 2, n) && src && s &&
		    !strncmp(src + 10, s, strlen(s)))
			return p;
	}
	return NULL;
}

static int flag_ok(json_t *dec, const char *key, bool got)
{
	json_t *v = json_object_get(dec, key);
	return v && json_integer_value(v) == (got ? 1 : 0);
}

static void check_profile(const char *file, const char *text, size_t len, json_t *all)
{
	char name[300];
	static struct cpuid_set set;
	unsigned line;
	int err = cpuidtxt_parse(&set, text, len, 0, &line);
	snprintf(name, sizeof(name), "parse %s", file);
	if (!CHECKF(err == 0, name, "error %d at line %u", err, line))
		return;
	json_t *p = find_profile(all, text);
	snprintf(name, sizeof(name), "profiles.json entry for %s", file);
	if (!CHECK(p, name))
		return;
	struct ptcaps c;
	ptcaps_parse(&c, &set);
	snprintf(name, sizeof(name), "%s: family/model/stepping", file);
	CHECKF(c.family == json_integer_value(json_object_get(p, "family")) &&
		       c.model == json_integer_value(json_object_get(p, "model")) &&
		       c.stepping == json_integer_value(json_object_get(p, "stepping")),
	       name, "got %u/0x%x/%u", c.family, c.model, c.stepping);
	bool pt_bit = hexval(json_object_get(p, "cpuid_7_0_ebx")) & (1u << 25);
	snprintf(name, sizeof(name), "%s: PT detection", file);
	CHECKF((c.absent == PTCAPS_PRESENT) == pt_bit, name, "absent=%d, bit25=%d", c.absent,
	       pt_bit);
	json_t *mpa = json_object_get(p, "maxphyaddr");
	if (json_is_integer(mpa) && json_integer_value(mpa)) {
		snprintf(name, sizeof(name), "%s: MAXPHYADDR", file);
		CHECKF(c.maxphyaddr == json_integer_value(mpa), name, "got %u", c.maxphyaddr);
	}
	if (!pt_bit) {
		char line_buf[256];
		struct strbuf sb;
		sb_init(&sb, line_buf, sizeof(line_buf));
		ptcaps_absent_line(&c, &sb);
		snprintf(name, sizeof(name), "%s: absence names CPUID bit", file);
		CHECKF(strstr(line_buf, "CPUID.(EAX=07H,ECX=0):EBX[25]=0"), name, "'%s'", line_buf);
		return;
	}
	json_t *dec = json_object_get(p, "decoded_from_cpuid_not_sysfs");
	if (dec) {
		snprintf(name, sizeof(name), "%s: leaf 14H flags", file);
		CHECKF(flag_ok(dec, "cr3_filtering", c.cr3_filter) &&
			       flag_ok(dec, "psb_cyc", c.psb_cyc) &&
			       flag_ok(dec, "ip_filtering", c.ip_filter) && flag_ok(dec, "mtc", c.mtc) &&
			       flag_ok(dec, "ptwrite", c.ptwrite) &&
			       flag_ok(dec, "power_event_trace", c.power_event) &&
			       flag_ok(dec, "psb_pmi_preservation", c.psb_pmi_preserve) &&
			       flag_ok(dec, "event_trace", c.event_trace) &&
			       flag_ok(dec, "tnt_disable", c.tnt_disable) &&
			       flag_ok(dec, "topa_output", c.topa) &&
			       flag_ok(dec, "topa_multiple_entries", c.topa_multi) &&
			       flag_ok(dec, "single_range_output", c.single_range) &&
			       flag_ok(dec, "output_subsys", c.trace_transport) &&
			       flag_ok(dec, "payloads_lip", c.lip) &&
			       json_integer_value(json_object_get(dec, "max_subleaf")) == c.max_subleaf,
		       name, "ebx=0x%x ecx=0x%x", c.l14_ebx, c.l14_ecx);
	}
	json_t *s1 = json_object_get(p, "cpuid_14_1");
	if (json_is_array(s1) && c.max_subleaf >= 1) {
		unsigned long eax = hexval(json_array_get(s1, 0)), ebx = hexval(json_array_get(s1, 1));
		snprintf(name, sizeof(name), "%s: leaf 14H subleaf 1", file);
		CHECKF(c.addr_ranges == (eax & 7) && c.mtc_periods == (eax >> 16) &&
			       c.cyc_thresholds == (ebx & 0xffff) && c.psb_periods == (ebx >> 16),
		       name, "ranges=%u mtc=0x%x cyc=0x%x psb=0x%x", c.addr_ranges, c.mtc_periods,
		       c.cyc_thresholds, c.psb_periods);
	}
}

static void put(struct cpuid_set *s, uint32_t leaf, uint32_t a, uint32_t b, uint32_t c,
		uint32_t d)
{
	uint32_t r[4] = { a, b, c, d };
	cpuid_set_put(s, leaf, 0, r);
}

/* 33.3.1: beyond the max leaf, CPUID repeats the highest leaf. */
static void check_leaf_limits(void)
{
	static struct cpuid_set s;
	struct ptcaps c;
	cpuid_set_init(&s);
	put(&s, 0, 0xd, 0x756e6547, 0x6c65746e, 0x49656e69); /* GenuineIntel, max 0Dh */
	put(&s, 7, 0, 1u << 25, 0, 0);
	put(&s, 0x14, 1, 0xf, 0x7, 0); /* garbage a leaf-14H reader must not trust */
	ptcaps_parse(&c, &s);
	CHECK(c.absent == PTCAPS_NO_LEAF14 && !c.topa, "bit 25 with max leaf < 14H is not PT");
	CHECK(!strcmp(c.vendor, "GenuineIntel"), "vendor string from EBX EDX ECX");
	put(&s, 0, 0x5, 0x756e6547, 0x6c65746e, 0x49656e69);
	ptcaps_parse(&c, &s);
	CHECK(c.absent == PTCAPS_NO_LEAF7, "max leaf < 7 ignores leaf 7");
	put(&s, 0, 0x14, 0x756e6547, 0x6c65746e, 0x49656e69);
	ptcaps_parse(&c, &s);
	CHECK(c.absent == PTCAPS_PRESENT && c.topa && c.single_range && c.topa_multi,
	      "max leaf 14H with bit 25 is PT");
	put(&s, 1, 0x000906ea, 0, 1u << 31, 0);
	uint32_t h[4] = { 0, 0x54474354, 0x43544743, 0x47435447 }; /* "TCGTCGTCGTCG" */
	cpuid_set_put(&s, 0x40000000u, 0, h);
	put(&s, 7, 0, 0, 0, 0);
	ptcaps_parse(&c, &s);
	char buf[256];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	ptcaps_absent_line(&c, &sb);
	CHECKF(!strcmp(buf, "Intel PT not supported: CPUID.(EAX=07H,ECX=0):EBX[25]=0 "
			    "(GenuineIntel, TCGTCGTCGTCG)"),
	       "absence line names bit, vendor and hypervisor", "'%s'", buf);
	CHECK(c.family == 6 && c.model == 0x9e && c.stepping == 0xa, "display model uses ext model");

	/* another vendor with the Intel PT bits set is not Intel PT */
	put(&s, 0, 0x14, 0x68747541, 0x444d4163, 0x69746e65); /* AuthenticAMD */
	put(&s, 7, 0, 1u << 25, 0, 0);
	ptcaps_parse(&c, &s);
	CHECK(c.absent == PTCAPS_NOT_INTEL && !c.topa, "AuthenticAMD with EBX[25]=1 is not Intel PT");
	sb_init(&sb, buf, sizeof(buf));
	ptcaps_absent_line(&c, &sb);
	CHECKF(!strcmp(buf, "Intel PT not supported: the CPU vendor is \"AuthenticAMD\" "
			    "(CPUID.(EAX=00H):EBX,EDX,ECX), not \"GenuineIntel\" (hypervisor "
			    "TCGTCGTCGTCG)"),
	       "absence line names the vendor string", "'%s'", buf);
	put(&s, 0, 0x14, 0x756e6547, 0x6c65746e, 0x49656e69);
	ptcaps_parse(&c, &s);
	CHECK(c.absent == PTCAPS_PRESENT, "the same leaves with GenuineIntel are Intel PT");
}

/* ptcaps_emulate(): a TCG guest's own CPUID (no PT, its hypervisor and
 * MAXPHYADDR) with the PT unit of a profile (efipt.efi --emulated-caps,
 * efipt-qemu.so start=guest). */
static void check_emulate(void)
{
	struct ptcaps caps;
	memset(&caps, 0, sizeof(caps));
	memcpy(caps.vendor, "GenuineIntel", 13);
	memcpy(caps.hypervisor, "TCGTCGTCGTCG", 13);
	caps.absent = PTCAPS_NO_PT_BIT;
	caps.maxphyaddr = 40;
	caps.max_leaf = 0xd;
	static struct cpuid_set prof;
	size_t len;
	unsigned line;
	char *text = read_small_file(NULL, DIRPATH "/tiger-lake-up3-core-i7-1165g7.txt", 1 << 20, &len);
	CHECK(text && !cpuidtxt_parse(&prof, text, len, 0, &line), "emulate: profile read");
	free(text);
	struct ptcaps want;
	ptcaps_parse(&want, &prof);
	CHECK(ptcaps_emulate(&caps, &prof) && caps.absent == PTCAPS_PRESENT && caps.topa_multi &&
		      caps.addr_ranges == want.addr_ranges && caps.psb_periods == want.psb_periods &&
		      caps.family == 6 && caps.model == 0x8c,
	      "emulate: the profile's PT unit, family and model");
	CHECK(!strcmp(caps.hypervisor, "TCGTCGTCGTCG") && caps.maxphyaddr == 40 &&
		      caps.max_leaf == 0xd,
	      "emulate: the machine's hypervisor, MAXPHYADDR and leaf count kept");
	struct cpuid_set none;
	cpuid_set_init(&none);
	struct ptcaps before = caps;
	CHECK(!ptcaps_emulate(&caps, &none) && !memcmp(&before, &caps, sizeof(caps)),
	      "emulate: a profile without PT is refused, caps unchanged");
}

int main(void)
{
	check_emulate();
	json_error_t je;
	json_t *all = json_load_file(DIRPATH "/profiles.json", 0, &je);
	if (!CHECKF(all && json_is_array(all), "load profiles.json", "%s", je.text))
		return check_exit();
	DIR *d = opendir(DIRPATH);
	struct dirent *e;
	unsigned n = 0;
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 4, ".txt"))
			continue;
		char path[600];
		snprintf(path, sizeof(path), DIRPATH "/%s", e->d_name);
		size_t len;
		char *text = read_small_file(NULL, path, 1 << 20, &len);
		if (text) {
			check_profile(e->d_name, text, len, all);
			n++;
		}
		free(text);
	}
	if (d)
		closedir(d);
	CHECKF(n >= 50, "all CPU profiles read", "only %u profiles", n);
	check_leaf_limits();
	json_decref(all);
	return check_exit();
}

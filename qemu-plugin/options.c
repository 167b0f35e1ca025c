/* Plugin arguments; see options.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin/options.h"

static int parse_u64(const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	*out = strtoull(v, &end, 0);
	return errno || end == v || *end || *v == '-' ? -1 : 0;
}

/* on/off as QEMU spells them (its own parser is not needed for this) */
static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true"))
		*out = true;
	else if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false"))
		*out = false;
	else
		return -1;
	return 0;
}

static int bad(const char *arg, const char *why)
{
	fprintf(stderr, "efipt-qemu: plugin argument '%s': %s\n", arg, why);
	return -1;
}

static bool is(const char *a, size_t kl, const char *key)
{
	return kl == strlen(key) && !strncmp(a, key, kl);
}

static int one(struct plugin_options *o, const char *a)
{
	const char *eq = strchr(a, '=');
	size_t kl = eq ? (size_t)(eq - a) : strlen(a);
	const char *v = eq ? eq + 1 : "";
	struct infer_config *c = &o->cfg;
	uint64_t n;
	if (is(a, kl, "dir")) {
		if (!*v || strlen(v) >= sizeof(o->dir) - 64)
			return bad(a, "needs a directory name");
		snprintf(o->dir, sizeof(o->dir), "%s", v);
	} else if (is(a, kl, "psb")) {
		if (parse_u64(v, &n) || n < 256 || n > (1u << 30))
			return bad(a, "PSB period in bytes: 256 to 1 GiB");
		o->psb = (uint32_t)n;
	} else if (is(a, kl, "noretcomp")) {
		bool on = true;
		if (eq && parse_bool(v, &on))
			return bad(a, "takes on or off");
		o->retcomp = !on;
	} else if (is(a, kl, "retcomp")) {
		/* QEMU 7.2 turns a bare "noretcomp" into "retcomp=off" */
		if (parse_bool(v, &o->retcomp))
			return bad(a, "takes on or off");
	} else if (is(a, kl, "debugport")) {
		if (!strcmp(v, "off"))
			o->debugport = 0;
		else if (parse_u64(v, &n) || !n || n > 0xffff)
			return bad(a, "takes an I/O port, 1 to 0xffff, or off");
		else
			o->debugport = (uint32_t)n;
	} else if (is(a, kl, "regs")) {
		if (parse_bool(v, &o->regs))
			return bad(a, "takes on or off");
	} else if (is(a, kl, "exit")) {
		if (parse_bool(v, &o->exit_at_stop))
			return bad(a, "takes on or off");
	} else if (is(a, kl, "limit")) {
		if (parse_u64(v, &c->limit) || !c->limit)
			return bad(a, "needs a number of instructions above 0");
	} else if (is(a, kl, "after")) {
		if (parse_u64(v, &c->after))
			return bad(a, "needs a number of instructions");
	} else if (is(a, kl, "size")) {
		if (parse_u64(v, &o->size) || o->size < 4096 || o->size > (1ull << 32))
			return bad(a, "trace size in bytes: 4096 to 4 GiB");
	} else if (is(a, kl, "mode")) {
		if (strcmp(v, "stop") && strcmp(v, "wrap"))
			return bad(a, "takes stop or wrap");
		o->wrap = !strcmp(v, "wrap");
	} else if (is(a, kl, "tsc")) {
		if (parse_bool(v, &o->timing.tsc))
			return bad(a, "takes on or off");
	} else if (is(a, kl, "mtc") || is(a, kl, "cyc")) {
		/* the MTCFreq or CycThresh encoding */
		if (parse_u64(v, &n) || n > 15)
			return bad(a, "takes an encoding 0..15");
		if (*a == 'm') {
			o->timing.mtc = true;
			o->timing.mtc_freq = (uint8_t)n;
		} else {
			o->timing.cyc = true;
			o->timing.cyc_thresh = (uint8_t)n;
		}
	} else if (is(a, kl, "shift")) {
		/* QEMU's -icount shift: 2^N ns per instruction */
		if (parse_u64(v, &n) || n > 10)
			return bad(a, "takes QEMU's icount shift, 0..10");
		o->timing.shift = (uint8_t)n;
		o->shift_given = true;
	} else if (is(a, kl, "filter")) {
		uint64_t lo, hi;
		char *dash = strchr(v, '-'), buf[64];
		if (c->nfilter >= 4)
			return bad(a, "at most 4 address ranges");
		if (!dash || (size_t)(dash - v) >= sizeof(buf))
			return bad(a, "takes START-END (inclusive addresses)");
		memcpy(buf, v, (size_t)(dash - v));
		buf[dash - v] = 0;
		if (parse_u64(buf, &lo) || parse_u64(dash + 1, &hi) || hi < lo)
			return bad(a, "takes START-END (inclusive addresses, START <= END)");
		c->filter_a[c->nfilter] = lo;
		c->filter_b[c->nfilter] = hi;
		c->nfilter++;
	} else if (is(a, kl, "cr3")) {
		/* IA32_RTIT_CR3_MATCH: bits 4:0 reserved (33.2.8) */
		if (parse_u64(v, &c->cr3_match) || (c->cr3_match & 0x1f))
			return bad(a, "takes the CR3 to trace (IA32_RTIT_CR3_MATCH: bits 4:0 zero)");
		c->cr3_filter = true;
	} else if (is(a, kl, "start")) {
		if (!strcmp(v, "reset"))
			c->start = INFER_START_RESET;
		else if (!strcmp(v, "protected"))
			c->start = INFER_START_PROTECTED;
		else if (!strcmp(v, "marker"))
			c->start = INFER_START_MARKER;
		else if (!strcmp(v, "guest"))
			c->start = INFER_START_GUEST;
		else if (!parse_u64(v, &c->start_addr))
			c->start = INFER_START_ADDR;
		else
			return bad(a, "takes reset, protected, marker, guest or an address");
	} else if (is(a, kl, "cpuid")) {
		if (!*v || strlen(v) >= sizeof(o->cpuid))
			return bad(a, "needs a file (a CPU profile: cpuid -r text)");
		snprintf(o->cpuid, sizeof(o->cpuid), "%s", v);
	} else if (is(a, kl, "physbits")) {
		if (parse_u64(v, &n) || n < 32 || n > 52)
			return bad(a, "takes the guest's MAXPHYADDR, 32 to 52");
		o->physbits = (unsigned)n;
	} else if (is(a, kl, "stop")) {
		if (!strcmp(v, "exit"))
			c->stop = INFER_STOP_EXIT;
		else if (!strcmp(v, "marker"))
			c->stop = INFER_STOP_MARKER;
		else if (!parse_u64(v, &c->stop_addr))
			c->stop = INFER_STOP_ADDR;
		else
			return bad(a, "takes exit, marker or an address");
	} else {
		return bad(a, "unknown (dir=, psb=, retcomp=, start=, stop=, after=, limit=, exit=, "
			      "size=, mode=, tsc=, mtc=, cyc=, shift=, filter=, cr3=, regs=, debugport=, cpuid=, physbits=)");
	}
	return 0;
}

int options_parse(struct plugin_options *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->psb = 4096;
	o->retcomp = true;
	o->regs = true;
	o->debugport = 0x402; /* OVMF's DEBUG() (PcdDebugIoPort) */
	o->cfg.start = INFER_START_RESET;
	o->cfg.stop = INFER_STOP_EXIT;
	o->physbits = 40; /* QEMU's TCG (TCG_PHYS_ADDR_BITS) */
	for (int i = 0; i < argc; i++) {
		size_t al = strlen(o->args);
		snprintf(o->args + al, sizeof(o->args) - al, "%s%s", al ? "," : "", argv[i]);
		if (one(o, argv[i]))
			return -1;
	}
	if (!o->dir[0])
		return bad("dir", "missing: dir=RUNDIR names the run directory to write");
	if (o->cfg.start == INFER_START_GUEST) {
		/* the guest says where and how much: none of the plugin's own */
		if (!o->cpuid[0])
			return bad("start=guest", "needs cpuid=FILE: the CPU profile whose Intel PT "
				   "the guest programs (the one efipt.efi --emulated-caps takes)");
		if (!o->regs)
			return bad("start=guest", "reads the WRMSR's registers: not with regs=off");
		if (o->cfg.stop != INFER_STOP_EXIT || o->size || o->wrap || o->cfg.nfilter ||
		    o->cfg.cr3_filter ||
		    o->cfg.limit || o->timing.tsc || o->timing.mtc || o->timing.cyc)
			return bad("start=guest", "the guest's own programming says when tracing stops, "
				   "where the output goes and which packets: no stop=, size=, mode=, "
				   "filter=, cr3=, limit=, tsc=, mtc=, cyc=");
	} else if (o->cpuid[0]) {
		return bad("cpuid", "only with start=guest");
	}
	if (o->cfg.cr3_filter && !o->regs)
		return bad("cr3", "compares CR3 with the value: not with regs=off");
	if (o->wrap && !o->size)
		o->size = 4ull << 20; /* the trace option's default size */
	/* a flight recorder must keep a PSB+ to decode from */
	if (o->wrap && o->size && o->size < 2ull * o->psb)
		return bad("mode=wrap", "size= must be at least twice psb= (a PSB+ must survive)");
	return 0;
}

const char *options_start_name(const struct plugin_options *o, char *buf, unsigned len)
{
	switch (o->cfg.start) {
	case INFER_START_RESET: return "reset";
	case INFER_START_PROTECTED: return "protected";
	case INFER_START_MARKER: return "marker";
	case INFER_START_GUEST: return "guest";
	}
	snprintf(buf, len, "0x%" PRIx64, o->cfg.start_addr);
	return buf;
}

const char *options_stop_name(const struct plugin_options *o, char *buf, unsigned len)
{
	switch (o->cfg.stop) {
	case INFER_STOP_EXIT: return "exit";
	case INFER_STOP_MARKER: return "marker";
	}
	snprintf(buf, len, "0x%" PRIx64, o->cfg.stop_addr);
	return buf;
}

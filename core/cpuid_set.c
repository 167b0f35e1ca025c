/* Raw CPUID sets and their `cpuid -r` text form; see cpuid_set.h. */
#include "core/cpuid_set.h"
#include "core/mem.h"

void cpuid_set_init(struct cpuid_set *s)
{
	s->n = 0;
}

static int leaf_cmp(uint32_t l1, uint32_t s1, uint32_t l2, uint32_t s2)
{
	if (l1 != l2)
		return l1 < l2 ? -1 : 1;
	if (s1 != s2)
		return s1 < s2 ? -1 : 1;
	return 0;
}

/* Kept sorted, so lookups and the text form are ordered. */
bool cpuid_set_put(struct cpuid_set *s, uint32_t leaf, uint32_t subleaf, const uint32_t r[4])
{
	unsigned i = 0;
	while (i < s->n && leaf_cmp(s->e[i].leaf, s->e[i].subleaf, leaf, subleaf) < 0)
		i++;
	if (i < s->n && leaf_cmp(s->e[i].leaf, s->e[i].subleaf, leaf, subleaf) == 0) {
		efipt_memcpy(s->e[i].r, r, sizeof(s->e[i].r));
		return true;
	}
	if (s->n >= CPUID_SET_MAX)
		return false;
	for (unsigned j = s->n; j > i; j--)
		s->e[j] = s->e[j - 1];
	s->e[i].leaf = leaf;
	s->e[i].subleaf = subleaf;
	efipt_memcpy(s->e[i].r, r, sizeof(s->e[i].r));
	s->n++;
	return true;
}

bool cpuid_set_get(const struct cpuid_set *s, uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
	for (unsigned i = 0; i < s->n; i++) {
		if (s->e[i].leaf == leaf && s->e[i].subleaf == subleaf) {
			efipt_memcpy(r, s->e[i].r, sizeof(s->e[i].r));
			return true;
		}
	}
	efipt_memset(r, 0, 4 * sizeof(uint32_t));
	return false;
}

static void capture_one(struct cpuid_set *s, cpuid_fn fn, void *ctx, uint32_t leaf,
			uint32_t sub, uint32_t r[4])
{
	fn(ctx, leaf, sub, r);
	cpuid_set_put(s, leaf, sub, r);
}

/*
 * Basic leaves 0..max (capped), with the subleaves that enumerate something:
 * 4/0Bh/1Fh until an empty level, 7 and 14h up to the count in EAX, 0Dh up to
 * 63 where non-zero. Extended leaves 80000000h.. up to their max (capped).
 */
void cpuid_set_capture(struct cpuid_set *s, cpuid_fn fn, void *ctx)
{
	uint32_t r[4];
	cpuid_set_init(s);
	fn(ctx, 0, 0, r);
	uint32_t max = r[CPUID_EAX];
	if (max > 0x20)
		max = 0x20;
	for (uint32_t leaf = 0; leaf <= max; leaf++) {
		capture_one(s, fn, ctx, leaf, 0, r);
		uint32_t nsub = 0;
		switch (leaf) {
		case 0x4:
			for (uint32_t i = 1; i < 16 && (r[CPUID_EAX] & 0x1f); i++)
				capture_one(s, fn, ctx, leaf, i, r);
			break;
		case 0x7:
		case 0x14:
			nsub = r[CPUID_EAX] < 8 ? r[CPUID_EAX] : 8;
			for (uint32_t i = 1; i <= nsub; i++)
				capture_one(s, fn, ctx, leaf, i, r);
			break;
		case 0xb:
		case 0x1f:
			for (uint32_t i = 1; i < 8 && (r[CPUID_ECX] & 0xff00); i++)
				capture_one(s, fn, ctx, leaf, i, r);
			break;
		case 0xd:
			for (uint32_t i = 1; i < 64; i++) {
				fn(ctx, leaf, i, r);
				if (i == 1 || r[0] | r[1] | r[2] | r[3])
					cpuid_set_put(s, leaf, i, r);
			}
			break;
		default:
			break;
		}
	}
	/* a hypervisor names itself at 40000000H (e.g. "TCGTCGTCGTCG") */
	if (max >= 1 && cpuid_set_get(s, 1, 0, r) && (r[CPUID_ECX] & (1u << 31)))
		capture_one(s, fn, ctx, 0x40000000u, 0, r);
	fn(ctx, 0x80000000u, 0, r);
	uint32_t xmax = r[CPUID_EAX];
	if (xmax >= 0x80000000u) {
		if (xmax > 0x80000008u)
			xmax = 0x80000008u;
		for (uint32_t leaf = 0x80000000u; leaf <= xmax; leaf++)
			capture_one(s, fn, ctx, leaf, 0, r);
	}
}

const char *cpuidtxt_errstr(int err)
{
	switch ((enum cpuidtxt_err)err) {
	case CPUIDTXT_OK:
		return "no error";
	case CPUIDTXT_SYNTAX:
		return "not a 'cpuid -r' line (expected '0xLLLLLLLL 0xSS: eax=0x... ebx=0x... ecx=0x... edx=0x...')";
	case CPUIDTXT_FULL:
		return "too many CPUID leaves in one CPU block";
	case CPUIDTXT_NO_CPU:
		return "no CPUID leaves found for the requested CPU";
	case CPUIDTXT_DUPLICATE:
		return "this leaf and subleaf were already given for this CPU (two dumps mixed?)";
	}
	return "unknown error";
}

/* ---- parsing ------------------------------------------------------------ */

struct cursor {
	const char *p, *end;
};

static void skip_blanks(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static bool take(struct cursor *c, const char *lit)
{
	size_t n = efipt_strlen(lit);
	if ((size_t)(c->end - c->p) < n || efipt_memcmp(c->p, lit, n) != 0)
		return false;
	c->p += n;
	return true;
}

/* "0x" followed by 1..8 hex digits. */
static bool take_hex32(struct cursor *c, uint32_t *v)
{
	if (!take(c, "0x") && !take(c, "0X"))
		return false;
	uint64_t acc = 0;
	unsigned digits = 0;
	while (c->p < c->end) {
		char ch = *c->p;
		unsigned d;
		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			d = (unsigned)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			d = (unsigned)(ch - 'A' + 10);
		else
			break;
		acc = acc * 16 + d;
		if (++digits > 8)
			return false;
		c->p++;
	}
	*v = (uint32_t)acc;
	return digits > 0;
}

static bool parse_leaf_line(struct cursor *c, uint32_t *leaf, uint32_t *sub, uint32_t r[4])
{
	static const char *const names[4] = { "eax=", "ebx=", "ecx=", "edx=" };
	skip_blanks(c);
	if (!take_hex32(c, leaf))
		return false;
	skip_blanks(c);
	if (!take_hex32(c, sub))
		return false;
	if (!take(c, ":"))
		return false;
	for (int i = 0; i < 4; i++) {
		skip_blanks(c);
		if (!take(c, names[i]) || !take_hex32(c, &r[i]))
			return false;
	}
	skip_blanks(c);
	return c->p == c->end;
}

/* A header is "CPU:" or "CPU <n>:" (with optional trailing text). */
static bool is_cpu_header(struct cursor c)
{
	skip_blanks(&c);
	return take(&c, "CPU ") || take(&c, "CPU:");
}

int cpuidtxt_parse(struct cpuid_set *s, const char *text, size_t len, unsigned cpu_index,
		   unsigned *err_line)
{
	cpuid_set_init(s);
	const char *p = text, *end = text + len;
	unsigned line = 0;
	int block = -1; /* leaves before any header belong to block 0 */
	bool got = false;
	*err_line = 0;
	while (p < end) {
		const char *eol = p;
		while (eol < end && *eol != '\n')
			eol++;
		struct cursor c = { p, eol };
		line++;
		p = eol < end ? eol + 1 : eol;
		skip_blanks(&c);
		if (c.p == c.end || *c.p == '#')
			continue;
		if (is_cpu_header(c)) {
			block++;
			if (got && block > (int)cpu_index)
				break;
			continue;
		}
		int this_block = block < 0 ? 0 : block;
		uint32_t leaf, sub, r[4];
		if (!parse_leaf_line(&c, &leaf, &sub, r)) {
			*err_line = line;
			return CPUIDTXT_SYNTAX;
		}
		if (this_block != (int)cpu_index)
			continue;
		uint32_t before[4];
		if (cpuid_set_get(s, leaf, sub, before)) {
			/* which of the two is the CPU? Neither silently. */
			*err_line = line;
			return CPUIDTXT_DUPLICATE;
		}
		if (!cpuid_set_put(s, leaf, sub, r)) {
			*err_line = line;
			return CPUIDTXT_FULL;
		}
		got = true;
	}
	return got ? CPUIDTXT_OK : CPUIDTXT_NO_CPU;
}

void cpuidtxt_write(const struct cpuid_set *s, struct strbuf *out)
{
	sb_puts(out, "CPU:\n");
	for (unsigned i = 0; i < s->n; i++) {
		const struct cpuid_leaf *e = &s->e[i];
		sb_printf(out, "   0x%08x 0x%02x: eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n",
			  e->leaf, e->subleaf, e->r[0], e->r[1], e->r[2], e->r[3]);
	}
}

/* Interrupt vectors from the guest's IDT; see idt.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "qemu-plugin/idt.h"
#include "qemu-plugin/plugin_api.h"

enum { R_FSBASE = 16, R_GSBASE, R_CS, R_SS, R_DS, R_ES };

/* The legacy prefixes and REX of an instruction: where its opcode starts. */
struct prefixes {
	unsigned at;
	bool asz;	/* 67 */
	bool osz;	/* 66 */
	int seg;	/* override: R_FSBASE/R_GSBASE/R_CS.. or -1 */
	uint8_t rex;	/* the REX byte right before the opcode, or 0 */
};

static void read_prefixes(const uint8_t *b, unsigned len, struct prefixes *p)
{
	memset(p, 0, sizeof(*p));
	p->seg = -1;
	for (; p->at < len; p->at++) {
		uint8_t c = b[p->at];
		if (c == 0x67)
			p->asz = true;
		else if (c == 0x66)
			p->osz = true;
		else if (c == 0x64)
			p->seg = R_FSBASE;
		else if (c == 0x65)
			p->seg = R_GSBASE;
		else if (c == 0x2e)
			p->seg = R_CS;
		else if (c == 0x36)
			p->seg = R_SS;
		else if (c == 0x3e)
			p->seg = R_DS;
		else if (c == 0x26)
			p->seg = R_ES;
		else if (c != 0xf0 && c != 0xf2 && c != 0xf3 && (c & 0xf0) != 0x40)
			break;
		/* a REX counts only right before the opcode (64-bit code;
		 * elsewhere 40-4F are INC/DEC and end the prefixes: see
		 * idt_lidt()) */
		p->rex = (c & 0xf0) == 0x40 ? c : 0;
	}
}

/* LIDT m: 0F 01 /3 with mod != 3 (SDM Vol. 2, LGDT/LIDT). */
bool idt_is_lidt(const uint8_t *b, unsigned len)
{
	struct prefixes p;
	read_prefixes(b, len, &p);
	if (p.at + 3 > len || b[p.at] != 0x0f || b[p.at + 1] != 0x01)
		return false;
	uint8_t m = b[p.at + 2];
	return (m >> 3 & 7) == 3 && m >> 6 != 3;
}

void idt_cpu_init(struct idt_cpu *c)
{
	c->cached_vector = -1;
#if PAPI_REGS
	static const char *const names[IDT_NREGS] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
		"fs_base", "gs_base", "cs", "ss", "ds", "es",
	};
	GArray *all = qemu_plugin_get_registers();
	memset(c->h, 0, sizeof(c->h));
	for (guint i = 0; all && i < all->len; i++) {
		qemu_plugin_reg_descriptor *d = &g_array_index(all, qemu_plugin_reg_descriptor, i);
		for (unsigned k = 0; k < IDT_NREGS; k++)
			if (!c->h[k] && d->name && !strcmp(d->name, names[k]))
				c->h[k] = d->handle;
	}
	if (all)
		g_array_free(all, true);
	if (!c->buf)
		c->buf = g_byte_array_new();
#endif
}

static bool reg(struct idt_cpu *c, unsigned k, uint64_t *v)
{
	return k < IDT_NREGS && papi_reg_value(c->h[k], c->buf, v);
}

/* The offset of a 16-bit ModRM memory operand (SDM Vol. 2, Table 2-1);
 * *ss: its default segment is SS (BP-based). */
static bool ea16(struct idt_cpu *c, const uint8_t *m, unsigned left, uint64_t *off, bool *ss)
{
	static const int8_t base[8] = { 3, 3, 5, 5, 6, 7, 5, 3 };	/* BX BX BP BP SI DI BP BX */
	static const int8_t index[8] = { 6, 7, 6, 7, -1, -1, -1, -1 };	/* SI DI SI DI */
	unsigned mod = m[0] >> 6, rm = m[0] & 7;
	uint64_t v, sum = 0;
	unsigned dlen = mod == 1 ? 1 : mod == 2 || (mod == 0 && rm == 6) ? 2 : 0;
	if (1 + dlen > left)
		return false;
	int64_t disp = dlen == 1 ? (int8_t)m[1] : dlen == 2 ? (int16_t)(m[1] | m[2] << 8) : 0;
	*ss = base[rm] == 5 && !(mod == 0 && rm == 6);
	if (!(mod == 0 && rm == 6)) {
		if (!reg(c, (unsigned)base[rm], &v))
			return false;
		sum += v;
		if (index[rm] >= 0) {
			if (!reg(c, (unsigned)index[rm], &v))
				return false;
			sum += v;
		}
	}
	*off = (sum + (uint64_t)disp) & 0xffff;
	return true;
}

/* The offset of a 32/64-bit ModRM memory operand (Tables 2-2, 2-3; 64-bit
 * code: REX.B/X extend base and index, mod 0 rm 5 is RIP-relative). */
static bool ea32(struct idt_cpu *c, const uint8_t *m, unsigned left, uint8_t rex, bool code64,
		 unsigned asize, uint64_t next_ip, uint64_t *off, bool *ss)
{
	unsigned mod = m[0] >> 6, rm = m[0] & 7, at = 1;
	int b = (int)rm, x = -1, scale = 0;
	bool riprel = false;
	if (rm == 4) {
		if (left < 2)
			return false;
		uint8_t sib = m[1];
		at = 2;
		scale = sib >> 6;
		x = (sib >> 3 & 7) | (rex & 2 ? 8 : 0);
		if (x == 4)
			x = -1; /* no index */
		b = sib & 7;
		if (b == 5 && mod == 0)
			b = -1; /* disp32, no base */
	} else if (rm == 5 && mod == 0) {
		b = -1;
		riprel = code64;
	}
	if (b >= 0)
		b |= rex & 1 ? 8 : 0;
	unsigned dlen = mod == 1 ? 1 : mod == 2 || b < 0 ? 4 : 0;
	if (at + dlen > left)
		return false;
	int64_t disp = dlen == 1 ? (int8_t)m[at]
				 : dlen == 4 ? (int32_t)((uint32_t)m[at] | (uint32_t)m[at + 1] << 8 |
							 (uint32_t)m[at + 2] << 16 |
							 (uint32_t)m[at + 3] << 24)
					     : 0;
	uint64_t v, sum = (uint64_t)disp;
	if (riprel)
		sum += next_ip; /* next_ip: ModRM is the LIDT's last bytes */
	if (b >= 0) {
		if (!reg(c, (unsigned)b, &v))
			return false;
		sum += v;
	}
	if (x >= 0) {
		if (!reg(c, (unsigned)x, &v))
			return false;
		sum += v << scale;
	}
	*ss = (b & 7) == 4 || (b & 7) == 5;
	*off = asize == 64 ? sum : sum & 0xffffffff;
	return true;
}

void idt_lidt(struct idt_cpu *c, const uint8_t *b, unsigned len, uint64_t ip, uint64_t cr0,
	      uint64_t efer)
{
	bool pe = cr0 & 1, lma = efer & (1u << 10);	/* CR0.PE, IA32_EFER.LMA */
	unsigned mode = lma ? 64 : pe ? 32 : 16;
	struct prefixes p;
	read_prefixes(b, len, &p);
	if (mode != 64)
		p.rex = 0;
	c->lidts++;
	unsigned asize = mode == 64 ? (p.asz ? 32 : 64) : mode == 32 ? (p.asz ? 16 : 32)
								 : (p.asz ? 32 : 16);
	uint64_t off = 0, seg = 0;
	bool ss = false, ok;
	if (p.at + 3 > len) {
		c->unread++;
		return;
	}
	const uint8_t *m = b + p.at + 2;
	unsigned left = len - p.at - 2;
	if (asize == 16)
		ok = ea16(c, m, left, &off, &ss);
	else
		ok = ea32(c, m, left, p.rex, mode == 64, asize, ip + len, &off, &ss);
	int sreg = p.seg >= 0 ? p.seg : ss ? R_SS : R_DS;
	if (ok && (sreg == R_FSBASE || sreg == R_GSBASE))
		ok = reg(c, (unsigned)sreg, &seg);
	else if (ok && mode == 16 && reg(c, (unsigned)sreg, &seg))
		seg = (seg & 0xffff) << 4; /* real mode: selector * 16 */
	else
		seg = 0; /* IA-32e: 0; protected mode: flat (see idt.h) */
	uint8_t d[10];
	/* base: 8 bytes in 64-bit code, else 4 (24 bits with a 16-bit
	 * operand size) */
	unsigned n = mode == 64 ? 10 : 6;
	uint64_t at = seg + off;
	if (mode != 64)
		at &= 0xffffffff;
	if (!ok || !papi_read_memory(at, d, n)) {
		c->unread++;
		return;
	}
	uint64_t base = 0;
	for (unsigned i = n; i > 2; i--)
		base = base << 8 | d[i - 1];
	bool o16 = mode == 16 ? !p.osz : p.osz;
	if (mode != 64 && o16)
		base &= 0xffffff;
	c->base = base;
	c->limit = (uint32_t)(d[0] | d[1] << 8);
	c->known = true;
	c->cached_vector = -1;
}

/* The handler of gate v (size bytes at g), or 0 for none (not present, a
 * task gate, a reserved type). */
static uint64_t gate_target(const uint8_t *g, unsigned size)
{
	if (size == 4) /* real mode: offset, segment */
		return (uint64_t)(g[2] | g[3] << 8) * 16 + (uint64_t)(g[0] | g[1] << 8);
	unsigned type = g[5] & 0x1f;	/* S = 0 and the type: SDM Vol. 3, 6.11, 6.14.1 */
	if (!(g[5] & 0x80))
		return 0;
	uint64_t lo = (uint64_t)(g[0] | g[1] << 8), hi = (uint64_t)(g[6] | g[7] << 8);
	if (size == 16)
		return type == 0x0e || type == 0x0f ? lo | hi << 16 |
			(uint64_t)(g[8] | g[9] << 8 | g[10] << 16 | (uint32_t)g[11] << 24) << 32 : 0;
	if (type == 0x0e || type == 0x0f)
		return lo | hi << 16;
	return type == 0x06 || type == 0x07 ? lo : 0; /* 16-bit gates */
}

int idt_vector(struct idt_cpu *c, uint64_t cr0, uint64_t efer, uint64_t handler,
	       const char **why)
{
	unsigned size = efer & (1u << 10) ? 16 : cr0 & 1 ? 8 : 4;
	uint64_t base = size == 4 && !c->known ? 0 : c->base;	/* real mode: the IVT at 0 */
	uint32_t limit = size == 4 && !c->known ? 0x3ff : c->limit;
	if (!c->known && size != 4) {
		*why = c->unread ? "the LIDT's operand could not be read" : "no LIDT seen";
		return -1;
	}
	uint8_t g[16];
	/* the last handler's gate again, if it still points there */
	if (c->cached_vector >= 0 && handler == c->cached_handler &&
	    (uint64_t)(c->cached_vector + 1) * size - 1 <= limit &&
	    papi_read_memory(base + (uint64_t)c->cached_vector * size, g, size) &&
	    gate_target(g, size) == handler)
		return c->cached_vector;
	static __thread uint8_t table[256 * 16];
	unsigned n = (limit + 1) / size;
	if (n > 256)
		n = 256;
	if (!n || !papi_read_memory(base, table, n * size)) {
		*why = "the IDT could not be read";
		return -1;
	}
	int found = -1, count = 0;
	for (unsigned v = 0; v < n; v++)
		if (gate_target(table + v * size, size) == handler) {
			found = (int)v;
			count++;
		}
	if (count != 1) {
		*why = count ? "several IDT gates point at the handler"
			     : "no IDT gate points at the handler";
		return -1;
	}
	c->cached_handler = handler;
	c->cached_vector = found;
	return found;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

bool idt_is_handler(struct idt_cpu *c, uint64_t cr0, uint64_t efer, uint64_t addr)
{
	unsigned size = efer & (1u << 10) ? 16 : cr0 & 1 ? 8 : 4;
	if (!c->known || size == 4)
		return false;
	if (c->handlers_size != size || c->handlers_lidts != c->lidts) {
		static __thread uint8_t table[256 * 16];
		unsigned n = (c->limit + 1) / size;
		if (n > 256)
			n = 256;
		c->nhandlers = 0;
		c->handlers_size = size;
		c->handlers_lidts = c->lidts;
		if (!n || !papi_read_memory(c->base, table, n * size))
			return false; /* asked again after the next LIDT */
		for (unsigned v = 0; v < n; v++) {
			uint64_t h = gate_target(table + v * size, size);
			if (h)
				c->handlers[c->nhandlers++] = h;
		}
		qsort(c->handlers, c->nhandlers, sizeof(c->handlers[0]), cmp_u64);
	}
	return bsearch(&addr, c->handlers, c->nhandlers, sizeof(c->handlers[0]), cmp_u64);
}

void idt_seen_handler(struct idt_cpu *c, uint64_t handler)
{
	if (c->handlers_size &&
	    !bsearch(&handler, c->handlers, c->nhandlers, sizeof(c->handlers[0]), cmp_u64))
		c->handlers_size = 0; /* read at the next question */
}

bool idt_frame_ip(uint64_t cr0, uint64_t efer, uint64_t rsp, int vector, uint64_t *ip)
{
	bool lma = efer & (1u << 10);
	if (!(cr0 & 1) || vector < 0)
		return false;
	/* exceptions that push an error code (SDM Vol. 3, Table 6-1): #DF,
	 * #TS, #NP, #SS, #GP, #PF, #AC, #CP, #VC, #SX */
	static const uint32_t errcode = 1u << 8 | 1u << 10 | 1u << 11 | 1u << 12 | 1u << 13 |
					1u << 14 | 1u << 17 | 1u << 21 | 1u << 29 | 1u << 30;
	unsigned slot = lma ? 8 : 4;	/* IA-32e: 8-byte pushes (6.14.2) */
	uint64_t at = rsp + (vector < 32 && (errcode >> vector & 1) ? slot : 0);
	uint8_t f[24];
	if (!lma)
		at &= 0xffffffff;
	if (!papi_read_memory(at, f, 3 * slot))
		return false;
	uint64_t v = 0, flags = 0;
	for (unsigned i = slot; i > 0; i--) {
		v = v << 8 | f[i - 1];
		flags = flags << 8 | f[2 * slot + i - 1];
	}
	if (!(flags & 2) || (vector >= 32 && !(flags & 0x200)))
		return false;	/* EFLAGS bit 1 is always set; IF for an interrupt */
	/* canonical with 48 or 57 address bits */
	uint64_t top48 = v >> 47, top57 = v >> 56;
	if (lma && top48 && top48 != 0x1ffff && top57 && top57 != 0xff)
		return false;
	*ip = v;
	return v != 0;
}

int idt_apic_timer_vector(void)
{
	/* the xAPIC's registers (SDM Vol. 3, 11.4.1, Table 11-1): version at
	 * 0x30 (0x1X: an integrated APIC), LVT Timer at 0x320 */
	uint8_t ver[4], lvt[4];
	if (!papi_read_memory(0xfee00030, ver, 4) || (ver[0] & 0xf0) != 0x10 ||
	    !papi_read_memory(0xfee00320, lvt, 4) || (lvt[2] & 1))
		return -1; /* unreadable, not an APIC, or masked (bit 16) */
	return lvt[0];
}

void idt_record(struct idt_file *f, unsigned cpu, uint64_t insn, uint64_t ip, uint64_t handler,
		int vector, const char *why, int timer_vector)
{
	pthread_mutex_lock(&f->lock);
	if (f->open) {
		outfile_printf(&f->out, "{\"cpu\": %u, \"insn\": %" PRIu64 ", \"ip\": \"0x%" PRIx64
			       "\", \"handler\": \"0x%" PRIx64 "\", ", cpu, insn, ip, handler);
		if (vector < 0)
			outfile_printf(&f->out, "\"vector\": null, \"why\": \"%s\"}\n", why);
		else if (timer_vector < 0)
			outfile_printf(&f->out, "\"vector\": %d}\n", vector);
		else
			outfile_printf(&f->out, "\"vector\": %d, \"timer\": %s}\n", vector,
				       vector == timer_vector ? "true" : "false");
		f->records++;
		f->known += vector >= 0;
		f->timer += vector >= 0 && vector == timer_vector;
		if (timer_vector >= 0)
			f->timer_vector = timer_vector;
	}
	pthread_mutex_unlock(&f->lock);
}

void idt_manifest(const struct idt_file *f, bool recorded, uint64_t after_branch, char *buf,
		  size_t len)
{
	if (!recorded) {
		snprintf(buf, len, "{\"recorded\": false, \"why\": \"needs QEMU 9.2 or newer (plugin "
			 "API 4: registers and guest memory, for the IDT) and regs=on\"}");
		return;
	}
	int n = snprintf(buf, len, "{\"recorded\": true, \"file\": \"interrupts.jsonl\", "
			 "\"records\": %" PRIu64 ", \"vectors_known\": %" PRIu64 ", \"timer\": %"
			 PRIu64 ", \"after_branch\": %" PRIu64, f->records, f->known, f->timer,
			 after_branch);
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, f->timer_vector >= 0 ?
			 ", \"apic_timer_vector\": %d}" : "}", f->timer_vector);
}

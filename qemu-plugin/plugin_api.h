/*
 * QEMU's plugin API as efipt's plugins use it, from version 1 (QEMU 7.2)
 * to 4 (QEMU 9.2 to 10.0), chosen at compile time by the QEMU_PLUGIN_VERSION of
 * the qemu-plugin.h built against: one definition per difference, nothing
 * else differs. The differences (QEMU's docs/devel/tcg-plugins.rst and the
 * version notes in qemu-plugin.h):
 *  - version 2 (QEMU 9.0): inline operations count into a scoreboard (one
 *    entry per vCPU) instead of a plain variable; registers can be read in
 *    callbacks registered with QEMU_PLUGIN_CB_R_REGS; the header includes
 *    glib.h; qemu_plugin_n_max_vcpus() is gone (qemu_info_t has the count
 *    in every version);
 *  - version 3 (QEMU 9.1): qemu_plugin_insn_data() copies the bytes into a
 *    buffer instead of returning a pointer;
 *  - version 4 (QEMU 9.2, 10.0): qemu_plugin_read_memory_vaddr().
 * Header-only: tests/qemu/insnlog.c, built on its own, includes it too.
 */
#ifndef EFIPT_PLUGIN_PLUGIN_API_H
#define EFIPT_PLUGIN_PLUGIN_API_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <qemu/qemu-plugin.h>

#if !defined(QEMU_PLUGIN_VERSION) || QEMU_PLUGIN_VERSION < 1
#error "this qemu-plugin.h is older than QEMU 7.2's (plugin API version 1): efipt's plugins need QEMU 7.2 or newer"
#elif QEMU_PLUGIN_VERSION > 4
#error "this qemu-plugin.h is newer than efipt's plugins know (plugin API versions 1, QEMU 7.2, to 4, QEMU 10.0): see docs/qemu.md, Platforms"
#endif

/* Registers (R_REGS callbacks) from version 2, guest memory from 4. */
#define PAPI_REGS (QEMU_PLUGIN_VERSION >= 2)
#define PAPI_MEMORY (QEMU_PLUGIN_VERSION >= 4)

/* The instruction's bytes into out (at most 16); returns its length. */
static inline size_t papi_insn_bytes(const struct qemu_plugin_insn *in, uint8_t out[16])
{
	size_t n = qemu_plugin_insn_size(in);
	if (n > 16)
		n = 16;
#if QEMU_PLUGIN_VERSION >= 3
	return qemu_plugin_insn_data(in, out, n);
#else
	memcpy(out, qemu_plugin_insn_data(in), n);
	return n;
#endif
}

/* A count per vCPU that instructions add to inline (no callback). */
struct papi_counter {
#if QEMU_PLUGIN_VERSION >= 2
	struct qemu_plugin_scoreboard *score;
#else
	uint64_t count;		/* one for all vCPUs */
#endif
};

static inline bool papi_counter_init(struct papi_counter *c)
{
#if QEMU_PLUGIN_VERSION >= 2
	c->score = qemu_plugin_scoreboard_new(sizeof(uint64_t));
	return c->score != NULL;
#else
	c->count = 0;
	return true;
#endif
}

/* Each execution of in adds 1 to the count of the vCPU running it. */
static inline void papi_count_insn(struct papi_counter *c, struct qemu_plugin_insn *in)
{
#if QEMU_PLUGIN_VERSION >= 2
	qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(in, QEMU_PLUGIN_INLINE_ADD_U64,
							    qemu_plugin_scoreboard_u64(c->score), 1);
#else
	qemu_plugin_register_vcpu_insn_exec_inline(in, QEMU_PLUGIN_INLINE_ADD_U64, &c->count, 1);
#endif
}

static inline uint64_t papi_counter_get(const struct papi_counter *c, unsigned vcpu)
{
#if QEMU_PLUGIN_VERSION >= 2
	return qemu_plugin_u64_get(qemu_plugin_scoreboard_u64(c->score), vcpu);
#else
	(void)vcpu;
	return c->count;
#endif
}

/*
 * Registers, in callbacks registered with papi_cb_flags(true) (version 2
 * on). QEMU's x86 set is gdb's: GPRs, rip, eflags, segment selectors and
 * some bases, cr0/2/3/4/8, efer; not the CS descriptor (CS.L, CS.D), GDTR
 * or IDTR. With version 1 nothing is found and nothing can be read.
 */
enum papi_reg {
	PAPI_CR0, PAPI_CR3, PAPI_EFER, PAPI_EFLAGS,
	PAPI_RAX, PAPI_RCX, PAPI_RDX, PAPI_RSI, PAPI_RSP,
	PAPI_NREGS
};

struct papi_regs {
#if PAPI_REGS
	struct qemu_plugin_register *h[PAPI_NREGS];
	GByteArray *buf;
#endif
	bool found;
};

/* In a vCPU's init callback: the handles of the registers above. */
static inline bool papi_regs_find(struct papi_regs *r)
{
	r->found = false;
#if PAPI_REGS
	static const char *const names[PAPI_NREGS] = {
		"cr0", "cr3", "efer", "eflags", "rax", "rcx", "rdx", "rsi", "rsp",
	};
	GArray *all = qemu_plugin_get_registers();
	unsigned n = 0;
	memset(r->h, 0, sizeof(r->h));
	for (guint i = 0; all && i < all->len; i++) {
		qemu_plugin_reg_descriptor *d = &g_array_index(all, qemu_plugin_reg_descriptor, i);
		for (unsigned k = 0; k < PAPI_NREGS; k++)
			if (!r->h[k] && d->name && !strcmp(d->name, names[k])) {
				r->h[k] = d->handle;
				n++;
			}
	}
	if (all)
		g_array_free(all, true);
	if (!r->buf)
		r->buf = g_byte_array_new();
	r->found = n == PAPI_NREGS && r->buf;
#endif
	return r->found;
}

/* The value now of the register whose handle is h (from a vCPU's
 * qemu_plugin_get_registers(); x86: little endian, 4 or 8 bytes), read
 * through buf. */
static inline bool papi_reg_value(void *h, void *buf, uint64_t *v)
{
	*v = 0;
#if PAPI_REGS
	GByteArray *b = buf;
	if (!h || !b)
		return false;
	g_byte_array_set_size(b, 0);
	int n = qemu_plugin_read_register(h, b);
	if (n <= 0 || n > 8 || b->len < (guint)n)
		return false;
	for (int i = n - 1; i >= 0; i--)
		*v = *v << 8 | b->data[i];
	return true;
#else
	(void)h;
	(void)buf;
	return false;
#endif
}

/* The register's value now. */
static inline bool papi_reg(struct papi_regs *r, enum papi_reg k, uint64_t *v)
{
#if PAPI_REGS
	if (!r->found) {
		*v = 0;
		return false;
	}
	return papi_reg_value(r->h[k], r->buf, v);
#else
	(void)r;
	(void)k;
	*v = 0;
	return false;
#endif
}

/* The callback flags for a callback that reads registers (or not). */
static inline enum qemu_plugin_cb_flags papi_cb_flags(bool regs)
{
	return regs && PAPI_REGS ? QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS;
}

/* len bytes of guest memory at linear address addr (version 4 on). */
static inline bool papi_read_memory(uint64_t addr, void *out, size_t len)
{
#if PAPI_MEMORY
	static __thread GByteArray *buf;
	if (!buf)
		buf = g_byte_array_new();
	if (!len || !qemu_plugin_read_memory_vaddr(addr, buf, len) || buf->len < len)
		return false;
	memcpy(out, buf->data, len);
	return true;
#else
	(void)addr;
	(void)out;
	(void)len;
	return false;
#endif
}

/* How many vCPUs the machine may have (system emulation only). */
static inline unsigned papi_max_vcpus(const qemu_info_t *info)
{
	int n = info->system_emulation ? info->system.max_vcpus : 1;
	return n > 0 ? (unsigned)n : 1;
}

#endif

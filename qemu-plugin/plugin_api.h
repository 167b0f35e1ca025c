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

/* How many vCPUs the machine may have (system emulation only). */
static inline unsigned papi_max_vcpus(const qemu_info_t *info)
{
	int n = info->system_emulation ? info->system.max_vcpus : 1;
	return n > 0 ? (unsigned)n : 1;
}

#endif

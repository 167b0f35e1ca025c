/*
 * The packets a processor writes for a flow the caller describes branch by
 * branch (SDM Vol. 3C 33.4 and the generation table 33-55 in 33.7), through
 * core/pt_writer.h (TNT batching, IP and RET compression, PSB+ every psb
 * bytes): MODE.Exec before the IP packet that enters another code size
 * (33.4.2.8), FUP+TIP for events, TIP.PGE/TIP.PGD where tracing starts and
 * stops, and the timing packets of the emulated clock. Never OVF: the
 * output is a file, never full.
 */
#ifndef EFIPT_PLUGIN_PTGEN_H
#define EFIPT_PLUGIN_PTGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pt_writer.h"

#define PTGEN_BUF (1u << 16)

/*
 * The emulated clock (docs/qemu.md "Timing"). QEMU's guest TSC under
 * -icount shift=N counts nanoseconds, 2^N per instruction executed
 * (icount_to_ns()), so the emulated TSC runs at 1 GHz and is the
 * instruction count << N. Around it, values a CPU could have: a 25 MHz
 * core crystal clock (CPUID.15H: TSC = crystal * EBX / EAX = 40), the
 * nominal ratio 10 (1 GHz / 100 MHz) and a core clock equal to the TSC
 * (CBR 10), so an instruction takes 2^N core cycles.
 */
#define PTGEN_TSC_HZ 1000000000ull
#define PTGEN_CPUID15_EAX 1u
#define PTGEN_CPUID15_EBX 40u
#define PTGEN_CPUID15_ECX 25000000u	/* crystal Hz */
#define PTGEN_NOM_RATIO 10u
#define PTGEN_CBR 10u

/* The timing packets asked for (IA32_RTIT_CTL TSCEn, MTCEn, CYCEn). */
struct ptgen_timing {
	bool tsc, mtc, cyc;
	uint8_t mtc_freq;	/* MTCFreq: an MTC every 2^mtc_freq crystal ticks */
	uint8_t cyc_thresh;	/* CycThresh: a CYC once 2^(T-1) cycles passed (0: 1) */
	uint8_t shift;		/* 2^shift ns (TSC ticks, cycles) per instruction */
};

struct ptgen {
	struct ptwr w;		/* the packets; w.bytes, w.full, w.mode */

	/* time: *insns (instructions executed so far) << timing.shift */
	struct ptgen_timing timing;
	bool timed;		/* any timing packet asked for */
	const uint64_t *insns;
	uint64_t cyc_tsc;	/* time the last CYC counted to */
	uint64_t mtc_edge;	/* crystal ticks >> mtc_freq at the last MTC or TMA */
	uint64_t tnt_time;	/* time of the first branch the pending TNT holds */
	bool resync;		/* the stream was cut: PSB+ at the next enable */
	bool cr3_known;		/* CR3 (registers: plugin API 2 on) for PSB+ */
	uint64_t cr3;
	uint8_t buf[PTGEN_BUF];
};

void ptgen_init(struct ptgen *g, uint32_t psb_period, bool retcomp,
		bool (*write)(void *ctx, const uint8_t *buf, size_t n), void *ctx);

/* Timing packets from the instruction count at *insns (see above). */
void ptgen_set_timing(struct ptgen *g, const struct ptgen_timing *t, const uint64_t *insns);
/* The emulated TSC now. */
uint64_t ptgen_now(const struct ptgen *g);

/* A conditional branch: taken or not (33.4.2.1). */
void ptgen_jcc(struct ptgen *g, bool taken);
/* A near CALL (not a zero-length one) whose next IP is ret_to. */
void ptgen_call(struct ptgen *g, uint64_t ret_to);
/* A near RET that went to target: a TNT bit if the stack says so, else TIP. */
void ptgen_ret(struct ptgen *g, uint64_t target);
/* An indirect or far branch to target, executing in mode there. */
void ptgen_tip(struct ptgen *g, uint64_t target, unsigned mode);
/* An asynchronous event (or software interrupt) at from, going to target
 * in mode: FUP(from), [MODE.Exec], TIP(target) (Table 33-55 cases 11-13). */
void ptgen_event(struct ptgen *g, uint64_t from, uint64_t target, unsigned mode);
/* The same for an event that changed CR3: FUP, PIP, MODE.Exec, TIP. */
void ptgen_event_pip(struct ptgen *g, uint64_t from, uint64_t target, unsigned mode);
/* CR3 is now cr3: a PIP (33.4.2.7), and in every PSB+ from here on. */
void ptgen_pip(struct ptgen *g, uint64_t cr3);
/* CR3 known without a write: into every PSB+ from here on. */
void ptgen_set_cr3(struct ptgen *g, uint64_t cr3);
/* Code size changed without an IP packet to carry it: MODE.Exec now. */
void ptgen_mode(struct ptgen *g, unsigned mode);
/* True when psb_period bytes went by since the last PSB+. */
bool ptgen_psb_due(const struct ptgen *g);
/* PSB+ with the next instruction's IP (tracing on) or none (off). */
void ptgen_psb(struct ptgen *g, bool enabled, uint64_t ip, unsigned mode);
/* Tracing starts at ip in mode: PSB+ when nothing was written yet (or
 * resync),
 * MODE.Exec, TIP.PGE(ip). */
void ptgen_enable(struct ptgen *g, uint64_t ip, unsigned mode);
/* The filter (33.2.5.3) turns packets off on the way to ip, out of range
 * (Table 33-21): TIP.PGD(ip) after a branch, TIP.PGD() without IP instead
 * of a conditional branch's TNT bit (suppress_ip), FUP(from), TIP.PGD(ip)
 * after an event at from (from 0: none). */
void ptgen_leave(struct ptgen *g, uint64_t from, uint64_t ip, bool suppress_ip);
/* Tracing stops before the instruction at ip: FUP(ip), TIP.PGD(). */
void ptgen_disable(struct ptgen *g, uint64_t ip);
/* Write out what is buffered; false if any write failed. */
bool ptgen_flush(struct ptgen *g);

#endif

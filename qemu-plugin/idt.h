/*
 * The vector of each interrupt or exception in an emulated trace, into the
 * run directory's interrupts.jsonl (docs/format.md): one object per event
 * (FUP+TIP) traced, in trace order,
 *
 *   {"cpu": 0, "insn": 123456, "ip": "0x7f8e1234", "handler": "0x7fe01000",
 *    "vector": 32, "timer": true}
 *
 * "insn" is the index in CPU cpu's decoded trace of the first instruction
 * after the event (the handler's), "ip" the FUP's (where the event struck),
 * "handler" the TIP's. QEMU's plugin API tells neither the vector nor IDTR
 * (its x86 registers are gdb's: no IDTR, GDTR or segment bases but FS/GS),
 * so the plugin watches every LIDT (0F 01 /3), reads its memory operand
 * (plugin API 4, QEMU 9.2 on), and at an event looks for the IDT gate that
 * points at the handler: the vector is that gate's number when exactly one
 * does (else "vector": null and "why"). "timer": the vector is the one the
 * local APIC's LVT Timer register holds, unmasked (read at the event from
 * the APIC's default address 0xFEE00000, checked to be an APIC by its
 * version register; absent when it cannot be read).
 */
#ifndef EFIPT_PLUGIN_IDT_H
#define EFIPT_PLUGIN_IDT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin/outfile.h"

/* The registers an LIDT's operand address may use: the 16 GPRs, FS and
 * GS bases, the selectors of CS, SS, DS, ES (real mode: base = selector *
 * 16). */
enum { IDT_NREGS = 22 };

/* One vCPU's IDTR as its LIDTs loaded it. */
struct idt_cpu {
	void *h[IDT_NREGS];	/* register handles, NULL: not offered */
	void *buf;		/* GByteArray for reading them */
	bool known;		/* an LIDT ran and its operand was read */
	uint64_t base;
	uint32_t limit;
	uint64_t lidts, unread;	/* LIDTs seen; operands that could not be read */
	uint64_t cached_handler;	/* the last handler found ... */
	int cached_vector;		/* ... and its vector (-1: none) */
	uint64_t handlers[256];		/* every gate's handler, sorted ... */
	unsigned nhandlers;
	uint64_t handlers_lidts;	/* ... as read after this many LIDTs */
	unsigned handlers_size;		/* ... with gates of this size (0: not read) */
};

/* interrupts.jsonl, shared by the vCPUs (under its lock). */
struct idt_file {
	struct outfile out;
	bool open;
	pthread_mutex_t lock;
	uint64_t records, known, timer;
	int timer_vector;	/* the LVT Timer's last seen (-1: never read) */
};

/* Is the instruction (len bytes) an LIDT with a memory operand? (The
 * prefixes and ModRM decide; the code size does not.) */
bool idt_is_lidt(const uint8_t *b, unsigned len);

/* In a vCPU's init callback: the register handles (plugin API 2 on). */
void idt_cpu_init(struct idt_cpu *c);

/*
 * In the LIDT's execution callback (before it runs, registers readable):
 * the operand's linear address from its bytes and the registers, in the
 * mode CR0.PE and EFER.LMA give (IA-32e: 64-bit code; protected mode:
 * 32-bit, flat segments, which QEMU does not let a plugin check: a wrong
 * base finds no gate at the handler, no wrong vector), and the IDTR it
 * loads, read from guest memory (plugin API 4).
 */
void idt_lidt(struct idt_cpu *c, const uint8_t *b, unsigned len, uint64_t ip, uint64_t cr0,
	      uint64_t efer);

/* At an event delivered in the mode CR0/EFER give that went to handler:
 * its vector (0..255), or -1 with *why saying why it is not known. */
int idt_vector(struct idt_cpu *c, uint64_t cr0, uint64_t efer, uint64_t handler,
	       const char **why);

/* Is addr some gate's handler (protected or IA-32e mode)? The handlers
 * are read after each LIDT, when the caller says (handlers_size = 0: when
 * tracing starts), and again after an event went to a handler not among
 * them (firmware writes gates into the IDT it loaded, e.g. EDK2's
 * exception handler library): cheap enough to ask after every near
 * indirect branch. */
bool idt_is_handler(struct idt_cpu *c, uint64_t cr0, uint64_t efer, uint64_t addr);

/* An event went to handler: read the gates again if it is not among them. */
void idt_seen_handler(struct idt_cpu *c, uint64_t handler);

/* At the first instruction of the handler of vector, entered by an event
 * with the stack pointer now rsp: the IP its frame holds, if the frame
 * looks like one (EFLAGS bit 1 set; IF set for vectors 32 and up, which
 * only an external interrupt or INT n reaches; a canonical IP). */
bool idt_frame_ip(uint64_t cr0, uint64_t efer, uint64_t rsp, int vector, uint64_t *ip);

/* The local APIC's LVT Timer vector when unmasked, else -1. */
int idt_apic_timer_vector(void);

/* The record of one event into the file. */
void idt_record(struct idt_file *f, unsigned cpu, uint64_t insn, uint64_t ip, uint64_t handler,
		int vector, const char *why, int timer_vector);

/* The manifest's "interrupts" object into buf (JSON), for a run with
 * (recorded) or without the file; after_branch: events found right after
 * a near indirect branch, RET or Jcc (idt_frame_ip()). */
void idt_manifest(const struct idt_file *f, bool recorded, uint64_t after_branch, char *buf,
		  size_t len);

#endif

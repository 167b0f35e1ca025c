/*
 * The interrupt and exception vectors of a run directory (interrupts.jsonl,
 * written by efipt qemu: qemu-plugin/idt.h), by CPU and instruction index,
 * and their names: "timer interrupt, vector 0x20" where the vector is the
 * local APIC timer's, an exception's SDM mnemonic and name for vectors 0-31
 * ("#PF page fault, vector 0x0e"), else "interrupt vector 0xNN". calls and
 * timeline name each interrupt with them.
 */
#ifndef EFIPT_HOST_IRQLOG_H
#define EFIPT_HOST_IRQLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct irqlog_rec {
	unsigned cpu;
	uint64_t insn;		/* the handler's first instruction's index */
	uint64_t ip, handler;
	int vector;		/* -1: not known */
	bool timer;		/* the local APIC timer's vector */
};

struct irqlog {
	struct irqlog_rec *v;	/* by cpu, then insn */
	size_t n, cap;
};

/* Parse the file's text (len bytes, untrusted): 0, or -1 with err set
 * (the line number and what is wrong, or out of memory); *l is then empty. */
int irqlog_parse(struct irqlog *l, const char *text, size_t len, char *err, size_t errlen);
/* Read dir/interrupts.jsonl: 0 read; 1 no such file (*l empty); -1 printed,
 * prefixed by "efipt cmd". */
int irqlog_read(struct irqlog *l, const char *dir, const char *cmd);
void irqlog_free(struct irqlog *l);

/* The record of CPU cpu's event whose handler starts at instruction insn,
 * or NULL. */
const struct irqlog_rec *irqlog_find(const struct irqlog *l, unsigned cpu, uint64_t insn);
/* Its name (static storage), NULL when the vector is not known. */
const char *irqlog_name(const struct irqlog_rec *r);

#endif

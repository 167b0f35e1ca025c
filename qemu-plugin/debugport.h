/*
 * Firmware DEBUG output: the bytes the guest writes to its debug port (OVMF's
 * DEBUG() goes to I/O port 0x402, QEMU's -debugcon), each placed at the
 * instruction that wrote it, into the run directory's debugport.jsonl
 * (docs/format.md): one object per instruction execution that wrote,
 *
 *   {"cpu": 0, "insn": 123456, "ip": "0x7f8e1234", "bytes": "Loading driver\n"}
 *
 * "insn" is the index of that instruction in CPU cpu's decoded trace (0:
 * the first traced), the REP iterations of one OUTS one execution; "bytes"
 * a JSON string whose characters are the bytes (\u0000-\u00ff). The bytes of
 * OUT DX,AL/AX/EAX come from RAX (registers: plugin API 2, QEMU 9.0 on),
 * those of OUTSB/W/D from guest memory at RSI (plugin API 4, QEMU 10.0);
 * with an older QEMU nothing is recorded (the manifest says so).
 */
#ifndef EFIPT_PLUGIN_DEBUGPORT_H
#define EFIPT_PLUGIN_DEBUGPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qemu-plugin/insn_info.h"
#include "qemu-plugin/outfile.h"

/* What an instruction writes to an I/O port, from its bytes (len of them):
 * 0 nothing, else its size in bytes per iteration (1, 2 or 4 for code size
 * mode, operand-size prefix applied); *port: the port of OUT imm8, -1 for
 * DX; *string: OUTS, *rep: with a REP prefix. */
unsigned dbgport_out_size(const uint8_t *b, unsigned len, unsigned mode, int *port, bool *string,
			  bool *rep);

#define DBGPORT_QUEUE 256
#define DBGPORT_TEXT 4096
#define DBGPORT_CHUNK 248

/* The bytes of one OUT (or up to DBGPORT_CHUNK of a REP OUTS: several for
 * a longer one), until its instruction is fed to the inference. */
struct dbgport_out {
	uint64_t call;		/* its execution callback's number (infer.calls) */
	uint64_t ip;
	uint8_t n;
	uint8_t bytes[DBGPORT_CHUNK];
};

/* One vCPU's OUTs waiting for their place in the trace. */
struct dbgport_queue {
	struct dbgport_out q[DBGPORT_QUEUE];
	unsigned head, len;
	uint64_t dropped;	/* more than DBGPORT_QUEUE waiting */
	/* the last REP OUTS recorded: QEMU may run its iterations in one
	 * callback or call again for each (or after an interrupt); a callback
	 * of the same instruction whose RSI moved into what was read, with
	 * RCX counting what is left of it, is a continuation, recorded already */
	uint64_t rep_ip, rep_from, rep_to;
};

/* The file, shared by the vCPUs (the caller serializes). */
struct dbgport_file {
	struct outfile out;
	bool open;
	uint64_t records, bytes;
	/* the record being built: one instruction execution's bytes */
	unsigned cpu;
	uint64_t insn, ip;
	size_t n;
	uint8_t text[DBGPORT_TEXT];
};

bool dbgport_push(struct dbgport_queue *q, const struct dbgport_out *o);
/* The oldest OUT waiting, or NULL. */
const struct dbgport_out *dbgport_head(const struct dbgport_queue *q);
void dbgport_pop(struct dbgport_queue *q);

/* Bytes of CPU cpu's instruction insn at ip into the file. */
void dbgport_record(struct dbgport_file *f, unsigned cpu, uint64_t insn, uint64_t ip,
		    const uint8_t *b, size_t n);
/* The record being built out. */
void dbgport_flush(struct dbgport_file *f);

#endif

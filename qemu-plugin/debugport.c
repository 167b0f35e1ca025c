/* The debug port's bytes; see debugport.h. */
#include <string.h>

#include "core/x86_insn.h"
#include "qemu-plugin/debugport.h"

/* OUT DX,AL (EE), OUT DX,eAX (EF), OUTSB (6E), OUTSW/D (6F): the opcode is
 * the last byte; OUT imm8,AL (E6 ib), OUT imm8,eAX (E7 ib): the one before;
 * every byte before the opcode a prefix (SDM Vol. 2, OUT, OUTS). */
unsigned dbgport_out_size(const uint8_t *b, unsigned len, unsigned mode, int *port, bool *string,
			  bool *rep)
{
	if (!len)
		return 0;
	unsigned at = len - 1;
	*port = -1;
	if (len >= 2 && (b[len - 2] == 0xe6 || b[len - 2] == 0xe7)) {
		at = len - 2;
		*port = b[len - 1];
	}
	uint8_t op = b[at];
	if (op != 0xee && op != 0xef && op != 0x6e && op != 0x6f && op != 0xe6 && op != 0xe7)
		return 0;
	if ((op == 0xe6 || op == 0xe7) != (*port >= 0))
		return 0;
	bool osz = false;
	*rep = false;
	for (unsigned i = 0; i < at; i++) {
		switch (b[i]) {
		case 0x66: osz = true; break;
		case 0xf2: case 0xf3: *rep = true; break;
		case 0x67: case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
		case 0xf0:
			break;
		default:
			/* REX in 64-bit code (its W does not widen a port) */
			if (mode == X86_MODE_64 && (b[i] & 0xf0) == 0x40)
				break;
			return 0;
		}
	}
	*string = op == 0x6e || op == 0x6f;
	if (op == 0xee || op == 0x6e || op == 0xe6)
		return 1;
	bool wide = mode == X86_MODE_16 ? osz : !osz;
	return wide ? 4 : 2;
}

bool dbgport_push(struct dbgport_queue *q, const struct dbgport_out *o)
{
	if (q->len == DBGPORT_QUEUE) {
		q->dropped++;
		return false;
	}
	q->q[(q->head + q->len++) % DBGPORT_QUEUE] = *o;
	return true;
}

const struct dbgport_out *dbgport_head(const struct dbgport_queue *q)
{
	return q->len ? &q->q[q->head] : NULL;
}

void dbgport_pop(struct dbgport_queue *q)
{
	if (!q->len)
		return;
	q->head = (q->head + 1) % DBGPORT_QUEUE;
	q->len--;
}

/* a JSON string of bytes: each byte the character of that code point */
static void put_text(struct outfile *o, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = b[i];
		if (c == '"' || c == '\\')
			outfile_printf(o, "\\%c", c);
		else if (c == '\n')
			outfile_printf(o, "\\n");
		else if (c == '\r')
			outfile_printf(o, "\\r");
		else if (c == '\t')
			outfile_printf(o, "\\t");
		else if (c < 0x20 || c >= 0x7f)
			outfile_printf(o, "\\u%04x", c);
		else
			outfile_write(o, &c, 1);
	}
}

void dbgport_flush(struct dbgport_file *f)
{
	if (!f->n || !f->open) {
		f->n = 0;
		return;
	}
	outfile_printf(&f->out, "{\"cpu\": %u, \"insn\": %llu, \"ip\": \"0x%llx\", \"bytes\": \"",
		       f->cpu, (unsigned long long)f->insn, (unsigned long long)f->ip);
	put_text(&f->out, f->text, f->n);
	outfile_printf(&f->out, "\"}\n");
	f->records++;
	f->n = 0;
}

void dbgport_record(struct dbgport_file *f, unsigned cpu, uint64_t insn, uint64_t ip,
		    const uint8_t *b, size_t n)
{
	if (f->n && (f->cpu != cpu || f->insn != insn || f->ip != ip || f->n + n > DBGPORT_TEXT))
		dbgport_flush(f);
	f->cpu = cpu;
	f->insn = insn;
	f->ip = ip;
	memcpy(f->text + f->n, b, n);
	f->n += n;
	f->bytes += n;
}

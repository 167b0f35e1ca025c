/* Per-instruction classification; see insn_info.h. */
#include <string.h>

#include "qemu-plugin/insn_info.h"

const uint8_t pinsn_marker_start[PINSN_MARKER_LEN] = { 0x0f, 0x1f, 0x84, 0x00, 'E', 'P', 'T', '1' };
const uint8_t pinsn_marker_stop[PINSN_MARKER_LEN] = { 0x0f, 0x1f, 0x84, 0x00, 'E', 'P', 'T', '0' };

unsigned pinsn_init(struct pinsn *p, uint64_t addr, const uint8_t *bytes, unsigned len)
{
	memset(p, 0, sizeof(*p));
	if (len > 15)
		len = 15;
	p->addr = addr;
	p->len = (uint8_t)len;
	memcpy(p->bytes, bytes, len);
	unsigned modes = 0;
	for (int m = X86_MODE_16; m <= X86_MODE_64; m++) {
		struct x86_insn in;
		if (x86_decode(&in, bytes, len, addr, (enum x86_mode)m) != (int)len)
			continue;
		modes |= PINSN_MODE_BIT(m);
		p->iclass[m] = in.iclass;
		p->zero_len_call[m] = in.zero_len_call;
		p->target[m] = in.has_target ? in.target : 0;
		if (m == X86_MODE_16 && in.osize == 32 &&
		    (in.iclass == X86_IC_FAR_JMP || in.iclass == X86_IC_FAR_CALL))
			p->flags |= PINSN_FAR32;
		/* MOV CR0, r (0F 22 /0; 32-bit code has no REX.R for CR8) */
		if (m == X86_MODE_32 && in.enc == X86_ENC_LEGACY && in.map == X86_MAP_0F &&
		    in.opcode == 0x22 && !((in.modrm >> 3) & 7))
			p->flags |= PINSN_MOV_CR0;
	}
	if (len == PINSN_MARKER_LEN && !memcmp(bytes, pinsn_marker_start, len))
		p->flags |= PINSN_START;
	if (len == PINSN_MARKER_LEN && !memcmp(bytes, pinsn_marker_stop, len))
		p->flags |= PINSN_STOP;
	p->modes = (uint8_t)modes;
	return modes;
}

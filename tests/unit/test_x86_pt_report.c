/*
 * x86_pt_report(): the packet Intel PT reports each instruction class with,
 * against SDM 33.2.1 Table 33-1 written out here on its own, and the flow
 * decoder's needs_packet()/takes_tip(), which must be exactly that
 * definition for every class.
 */
#include <stdio.h>

#include "check.h"
#include "core/pt_flow_int.h"
#include "core/x86_insn.h"

/* Table 33-1 by class; 0 marks a class this table forgets. */
enum { NONE = 1 + X86_PT_NONE, TNT = 1 + X86_PT_TNT, TIP = 1 + X86_PT_TIP };
static const unsigned char sdm[X86_IC_COUNT] = {
	[X86_IC_OTHER] = NONE,
	[X86_IC_JCC] = TNT,		/* conditional branch */
	[X86_IC_JMP_DIRECT] = NONE,	/* unconditional direct branch */
	[X86_IC_CALL_DIRECT] = NONE,
	[X86_IC_JMP_INDIRECT] = TIP,	/* indirect branch */
	[X86_IC_CALL_INDIRECT] = TIP,
	[X86_IC_RET_NEAR] = TIP,	/* unless compressed to a TNT bit */
	[X86_IC_FAR_JMP] = TIP,		/* far transfers */
	[X86_IC_FAR_CALL] = TIP,
	[X86_IC_FAR_RET] = TIP,
	[X86_IC_INT] = TIP,
	[X86_IC_IRET] = TIP,
	[X86_IC_SYSCALL] = TIP,
	[X86_IC_SYSRET] = TIP,
	[X86_IC_SYSENTER] = TIP,
	[X86_IC_SYSEXIT] = TIP,
	[X86_IC_VMLAUNCH] = TIP,
	[X86_IC_VMRESUME] = TIP,
	[X86_IC_VMCALL] = TIP,		/* a VM exit, reported like one */
	[X86_IC_PTWRITE] = NONE,	/* not branches */
	[X86_IC_MOV_CR3] = NONE,
	[X86_IC_HLT] = NONE,
	[X86_IC_UD] = NONE,
};

static const char *report_name(int r)
{
	switch (r) {
	case X86_PT_NONE:
		return "none";
	case X86_PT_TNT:
		return "tnt";
	case X86_PT_TIP:
		return "tip";
	}
	return "?";
}

int main(void)
{
	char name[96];
	for (unsigned ic = 0; ic < X86_IC_COUNT; ic++) {
		int r = x86_pt_report(ic);
		snprintf(name, sizeof(name), "report %s", x86_iclass_name((int)ic));
		CHECKF(sdm[ic] && r == sdm[ic] - 1, name, "x86_pt_report() %s (%d), Table 33-1 %s",
		       report_name(r), r, sdm[ic] ? report_name(sdm[ic] - 1) : "(not listed)");
		snprintf(name, sizeof(name), "decoder %s", x86_iclass_name((int)ic));
		CHECKF(needs_packet(ic) == (r != X86_PT_NONE) && takes_tip(ic) == (r == X86_PT_TIP), name,
		       "needs_packet %d takes_tip %d, x86_pt_report() %s", needs_packet(ic),
		       takes_tip(ic), report_name(r));
	}
	/* a class x86_decode() never gives: the decoder waits for a packet */
	static const unsigned bad[] = { X86_IC_COUNT, 31, 255 };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "unknown class %u", bad[i]);
		CHECKF(x86_pt_report(bad[i]) == X86_PT_TIP && needs_packet(bad[i]) && takes_tip(bad[i]),
		       name, "x86_pt_report() %s", report_name(x86_pt_report(bad[i])));
	}
	return check_exit();
}

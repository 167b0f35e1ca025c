/* #GP guard; see gp_guard.h. */
#include <efi.h>
#include <efilib.h>

#include "arch/x86_64/cpu_fault.h"
#include "efi/console.h"
#include "efi/fs.h"
#include "efi/gp_guard.h"

/* The parts of the PI spec's EFI_SYSTEM_CONTEXT_X64 this handler touches:
 * everything up to Rip, which sits at byte offset 672. */
struct system_context_x64 {
	UINT64 exception_data;
	UINT8 fxsave[512];
	UINT64 dr[6];      /* Dr0-Dr3, Dr6, Dr7 */
	UINT64 cr[6];      /* Cr0-Cr4, Cr8 */
	UINT64 rflags, ldtr, tr;
	UINT64 gdtr[2], idtr[2];
	UINT64 rip;
};
_Static_assert(__builtin_offsetof(struct system_context_x64, rip) == 672,
	       "EFI_SYSTEM_CONTEXT_X64.Rip offset");

typedef void(EFIAPI *cpu_interrupt_handler)(INTN type, struct system_context_x64 *ctx);

/* EFI_CPU_ARCH_PROTOCOL, in the order the PI spec defines its members. */
struct cpu_arch_protocol {
	void *flush_data_cache;
	void *enable_interrupt;
	void *disable_interrupt;
	void *get_interrupt_state;
	void *init;
	EFI_STATUS(EFIAPI *register_interrupt_handler)(struct cpu_arch_protocol *self, INTN type,
						       cpu_interrupt_handler handler);
	/* further members unused */
};

#define EXCEPT_X64_GP_FAULT 13

static struct cpu_arch_protocol *cpu_arch;
static UINTN hits;
static bool warned;

static void EFIAPI on_gp(INTN type, struct system_context_x64 *ctx)
{
	(void)type;
	if (cpu_fault_fixup(&ctx->rip)) {
		hits++;
		return;
	}
	/* Not ours: there is nothing safe to resume. Stop here, visibly, rather
	 * than return into the faulting instruction forever. */
	for (;;)
		__asm__ volatile("cli; hlt");
}

EFI_STATUS gp_guard_install(void)
{
	EFI_GUID guid = { 0x26baccb1, 0x6f42, 0x11d4,
			  { 0xbc, 0xe7, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81 } };
	struct cpu_arch_protocol *p;
	if (cpu_arch)
		return EFI_SUCCESS;
	EFI_STATUS st = uefi_call_wrapper(BS->LocateProtocol, 3, &guid, NULL, (void **)&p);
	if (!EFI_ERROR(st))
		st = p->register_interrupt_handler(p, EXCEPT_X64_GP_FAULT, on_gp);
	if (EFI_ERROR(st)) {
		if (!warned)
			con_printf("efipt: no #GP guard (%s): MSR accesses rely on the CPUID "
				   "checks alone\n",
				   efi_status_name(st));
		warned = true;
		return st;
	}
	cpu_arch = p;
	return EFI_SUCCESS;
}

void gp_guard_remove(void)
{
	if (cpu_arch)
		cpu_arch->register_interrupt_handler(cpu_arch, EXCEPT_X64_GP_FAULT, NULL);
	cpu_arch = NULL;
}

UINTN gp_guard_hits(void)
{
	return hits;
}

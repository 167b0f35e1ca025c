/* The application processors through MP services; see mp_services.h. */
#include <efi.h>
#include <efilib.h>

#include "efi/fs.h"
#include "efi/mp_services.h"

/* PI spec EFI_CPU_PHYSICAL_LOCATION and EFI_PROCESSOR_INFORMATION, with room
 * for the extended topology a firmware may write after them. */
struct mp_location {
	UINT32 package, core, thread;
};

struct mp_processor_information {
	UINT64 processor_id;
	UINT32 status_flag;
	struct mp_location location;
	UINT32 extended[6];
};

typedef VOID(EFIAPI *mp_procedure)(VOID *arg);

/* EFI_MP_SERVICES_PROTOCOL, its members in the PI spec's order. */
struct mp_services_protocol {
	EFI_STATUS(EFIAPI *get_number_of_processors)(struct mp_services_protocol *self,
						     UINTN *all, UINTN *enabled);
	EFI_STATUS(EFIAPI *get_processor_info)(struct mp_services_protocol *self, UINTN number,
					       struct mp_processor_information *info);
	EFI_STATUS(EFIAPI *startup_all_aps)(struct mp_services_protocol *self, mp_procedure fn,
					    BOOLEAN single_thread, EFI_EVENT wait,
					    UINTN timeout_us, VOID *arg, UINTN **failed);
	EFI_STATUS(EFIAPI *startup_this_ap)(struct mp_services_protocol *self, mp_procedure fn,
					    UINTN number, EFI_EVENT wait, UINTN timeout_us,
					    VOID *arg, BOOLEAN *finished);
	void *switch_bsp;
	void *enable_disable_ap;
	EFI_STATUS(EFIAPI *who_am_i)(struct mp_services_protocol *self, UINTN *number);
};

static struct mp_services_protocol *mp;

EFI_STATUS mp_open(struct strbuf *why)
{
	EFI_GUID guid = { 0x3fdda605, 0xa76e, 0x4f46,
			  { 0xad, 0x29, 0x12, 0xf4, 0x53, 0x1b, 0x3d, 0x08 } };
	if (mp)
		return EFI_SUCCESS;
	EFI_STATUS st = uefi_call_wrapper(BS->LocateProtocol, 3, &guid, NULL, (void **)&mp);
	if (EFI_ERROR(st)) {
		mp = NULL;
		sb_printf(why, "this firmware has no EFI_MP_SERVICES_PROTOCOL "
			       "(3fdda605-a76e-4f46-ad29-12f4531b3d08): %s; without it efipt "
			       "cannot run code on the application processors",
			  efi_status_name(st));
	}
	return st;
}

EFI_STATUS mp_count(UINTN *all, UINTN *enabled)
{
	return mp->get_number_of_processors(mp, all, enabled);
}

EFI_STATUS mp_self(UINTN *number)
{
	return mp->who_am_i(mp, number);
}

EFI_STATUS mp_info(UINTN number, struct mp_cpu *cpu)
{
	struct mp_processor_information info;
	SetMem(&info, sizeof(info), 0);
	EFI_STATUS st = mp->get_processor_info(mp, number, &info);
	if (EFI_ERROR(st))
		return st;
	cpu->number = number;
	cpu->apic_id = info.processor_id;
	cpu->status = info.status_flag;
	cpu->package = info.location.package;
	cpu->core = info.location.core;
	cpu->thread = info.location.thread;
	return EFI_SUCCESS;
}

struct mp_call {
	void (*fn)(void *arg);
	void *arg;
};

static VOID EFIAPI mp_trampoline(VOID *p)
{
	struct mp_call *c = p;
	c->fn(c->arg);
}

EFI_STATUS mp_run(UINTN number, void (*fn)(void *arg), void *arg)
{
	UINTN self;
	EFI_STATUS st = mp_self(&self);
	if (EFI_ERROR(st))
		return st;
	if (number == self) {
		fn(arg);
		return EFI_SUCCESS;
	}
	struct mp_call c = { fn, arg };
	return mp->startup_this_ap(mp, mp_trampoline, number, NULL, MP_TIMEOUT_US, &c, NULL);
}

/*
 * Test-only UEFI application for the flight recorder tests
 * (tests/qemu/t_recorder*.sh): what an OS loader that hangs or resets does,
 * and the damage a recovery must survive. Its load options are one command:
 *
 *   reset-seq HOW...           run N of a sequence (its own variable counts
 *                              them): the Nth HOW, one of warm
 *                              (ResetSystem(EfiResetWarm)), cf9 (06H to port
 *                              0CF9H: a hard reset without power cycle), hang
 *                              (interrupts off, until something resets the
 *                              machine), ebs (ExitBootServices, then a warm
 *                              reset); past the last: clear the count, return
 *   save | restore             keep efipt's variable in one of rectool's /
 *                              put it back (after a corruption below)
 *   header-crc                 flip a byte of the recorder header
 *   cold                       fill the header page with garbage, as RAM
 *                              after a power cycle
 *   stale                      the variable names the next generation
 *   outside                    the variable names memory beyond RAM
 *   firmware                   the variable names memory this boot's
 *                              firmware uses (BootServicesData)
 *   trace-crc                  flip a byte in the layout section
 *
 * Messages go to the debug port 0xE9 ("rectool: ...").
 */
#include <efi.h>
#include <efilib.h>

#include "core/crc32.h"
#include "core/recorder.h"

static EFI_GUID efipt_guid = { 0xaa730c61, 0xb6f5, 0x41ef,
			       { 0x87, 0x0d, 0x4e, 0x00, 0x37, 0x4d, 0x98, 0x97 } };
/* rectool's own: 3e2c1a4f-6b7d-4e8f-9a0b-1c2d3e4f5a6b */
static EFI_GUID tool_guid = { 0x3e2c1a4f, 0x6b7d, 0x4e8f,
			      { 0x9a, 0x0b, 0x1c, 0x2d, 0x3e, 0x4f, 0x5a, 0x6b } };
#define ATTR (EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS | \
	      EFI_VARIABLE_RUNTIME_ACCESS)

static void say(const char *s)
{
	for (; *s; s++)
		__asm__ volatile("outb %0, %1" ::"a"(*s), "Nd"((uint16_t)0xe9));
}

static void say_hex(uint64_t v)
{
	char b[19] = "0x";
	for (int i = 0; i < 16; i++)
		b[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
	b[18] = 0;
	say(b);
}

static bool arg_is(const CHAR16 *a, const char *want)
{
	for (; *want; a++, want++)
		if (*a != (CHAR16)*want)
			return false;
	return *a == 0 || *a == ' ';
}

static EFI_STATUS get_var(CHAR16 *name, EFI_GUID *g, struct ptrec_var *v)
{
	UINTN n = sizeof(*v);
	UINT32 attr;
	return uefi_call_wrapper(RT->GetVariable, 5, name, g, &attr, &n, v);
}

static EFI_STATUS set_var(CHAR16 *name, EFI_GUID *g, struct ptrec_var *v)
{
	return uefi_call_wrapper(RT->SetVariable, 5, name, g, ATTR, sizeof(*v), v);
}

/* What an OS loader does last: ExitBootServices with the current map key. */
static void exit_boot_services(EFI_HANDLE image)
{
	for (int tries = 0; tries < 8; tries++) {
		UINTN n, key, dsize;
		UINT32 dver;
		EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&n, &key, &dsize, &dver);
		if (!map)
			continue;
		if (!EFI_ERROR(uefi_call_wrapper(BS->ExitBootServices, 2, image, key)))
			return;
		FreePool(map);
	}
}

static EFI_STATUS reset_seq(EFI_HANDLE image, const CHAR16 *args)
{
	UINT8 step = 0;
	UINTN n = 1;
	UINT32 attr;
	uefi_call_wrapper(RT->GetVariable, 5, L"RectoolStep", &tool_guid, &attr, &n, &step);
	const CHAR16 *how = args;
	for (UINT8 i = 0; i < step && *how; i++) {
		while (*how && *how != ' ')
			how++;
		while (*how == ' ')
			how++;
	}
	if (!*how) {
		uefi_call_wrapper(RT->SetVariable, 5, L"RectoolStep", &tool_guid, 0, 0, NULL);
		say("rectool: sequence done, returning\n");
		return EFI_SUCCESS;
	}
	step++;
	uefi_call_wrapper(RT->SetVariable, 5, L"RectoolStep", &tool_guid, ATTR, 1, &step);
	if (arg_is(how, "warm")) {
		say("rectool: ResetSystem(EfiResetWarm)\n");
		uefi_call_wrapper(RT->ResetSystem, 4, EfiResetWarm, EFI_SUCCESS, 0, NULL);
	} else if (arg_is(how, "ebs")) {
		say("rectool: ExitBootServices, then ResetSystem(EfiResetWarm)\n");
		exit_boot_services(image);
		/* a runtime service: still there after ExitBootServices */
		uefi_call_wrapper(RT->ResetSystem, 4, EfiResetWarm, EFI_SUCCESS, 0, NULL);
	} else if (arg_is(how, "cf9")) {
		say("rectool: out 0xcf9, 0x06\n");
		__asm__ volatile("outb %0, %1" ::"a"((UINT8)0x06), "Nd"((uint16_t)0xcf9));
	} else {
		say("rectool: hanging\n");
		/* a machine that hangs after ExitBootServices: interrupts off */
		__asm__ volatile("cli");
	}
	for (;;)
		__asm__ volatile("pause");
}

/* The first BootServicesData range of this boot's map. */
static UINT64 firmware_data(void)
{
	UINTN n, key, dsize;
	UINT32 dver;
	EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&n, &key, &dsize, &dver);
	UINT64 at = 0;
	for (UINTN i = 0; map && i < n && !at; i++) {
		EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((UINT8 *)map + i * dsize);
		if (d->Type == EfiBootServicesData && d->NumberOfPages >= 2 &&
		    d->PhysicalStart >= 0x100000)
			at = d->PhysicalStart;
	}
	if (map)
		FreePool(map);
	return at;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab);
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	InitializeLib(image, systab);
	EFI_LOADED_IMAGE *li;
	EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
	uefi_call_wrapper(BS->HandleProtocol, 3, image, &lip, (void **)&li);
	/* the options: "path command [argument]" */
	const CHAR16 *a = li->LoadOptions ? li->LoadOptions : L"";
	while (*a && *a != ' ')
		a++;
	while (*a == ' ')
		a++;
	if (arg_is(a, "reset-seq")) {
		a += 9;
		while (*a == ' ')
			a++;
		return reset_seq(image, a);
	}
	struct ptrec_var v;
	if (arg_is(a, "restore")) {
		if (EFI_ERROR(get_var(L"RectoolSave", &tool_guid, &v)))
			return EFI_NOT_FOUND;
		set_var(L"" PTREC_VAR_NAME, &efipt_guid, &v);
		say("rectool: variable restored\n");
		return EFI_SUCCESS;
	}
	if (EFI_ERROR(get_var(L"" PTREC_VAR_NAME, &efipt_guid, &v))) {
		say("rectool: no efipt recorder variable\n");
		return EFI_NOT_FOUND;
	}
	UINT8 *region = (UINT8 *)(UINTN)v.region_phys;
	struct ptrec_header *h = (struct ptrec_header *)(region + v.header_off);
	bool is_header = !CompareMem(h->magic, PTREC_MAGIC, 8);
	if (arg_is(a, "peek")) {
		say(is_header ? "rectool: header there\n" : "rectool: no header\n");
		return EFI_SUCCESS;
	}
	if (!is_header && (arg_is(a, "header-crc") || arg_is(a, "trace-crc"))) {
		say("rectool: no recorder header to damage\n");
		return EFI_NOT_FOUND;
	}
	if (arg_is(a, "save")) {
		set_var(L"RectoolSave", &tool_guid, &v);
		say("rectool: variable saved, region ");
		say_hex(v.region_phys);
		say("\n");
	} else if (arg_is(a, "header-crc")) {
		h->reserved[100] ^= 0x5a;
		say("rectool: header byte flipped\n");
	} else if (arg_is(a, "cold")) {
		UINT32 x = 0x12345678;
		for (UINTN i = 0; i < PTREC_HEADER_BYTES; i++) {
			x = x * 1103515245 + 12345;
			((UINT8 *)h)[i] = (UINT8)(x >> 16);
		}
		say("rectool: header page filled with garbage\n");
	} else if (arg_is(a, "trace-crc")) {
		region[h->sect[0].off + 12] ^= 0x01;
		say("rectool: layout byte flipped\n");
	} else if (arg_is(a, "stale") || arg_is(a, "outside") || arg_is(a, "firmware")) {
		if (arg_is(a, "stale"))
			v.generation++;
		else if (arg_is(a, "outside"))
			v.region_phys = 0xfff00000000ull;
		else
			v.region_phys = firmware_data();
		v.crc = 0;
		v.crc = crc32_update(0, &v, sizeof(v));
		set_var(L"" PTREC_VAR_NAME, &efipt_guid, &v);
		say("rectool: variable changed, region ");
		say_hex(v.region_phys);
		say("\n");
	} else {
		say("rectool: unknown command\n");
		return EFI_INVALID_PARAMETER;
	}
	return EFI_SUCCESS;
}

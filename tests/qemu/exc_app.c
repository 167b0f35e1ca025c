/*
 * Test-only UEFI application: exceptions the firmware handles and returns
 * from, between the trace markers (t_qemu_exceptions.sh). Through the CPU
 * architectural protocol it installs handlers for #BP (vector 3, a trap:
 * the saved RIP is already past the INT3) and #UD (vector 6, a fault: the
 * handler moves the saved RIP past the 2-byte UD2, as a debugger's would),
 * then runs EXC_ROUNDS rounds of INT3 and UD2, removes the handlers,
 * writes what they counted (or why it could not run) to the debug port
 * 0x402 (-debugcon) and powers QEMU off through isa-debug-exit.
 */
#include <efi.h>
#include <efilib.h>

#define MARKER_START() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x31")
#define MARKER_STOP() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x30")
#define EXC_ROUNDS 5

/* The UEFI PI specification's EFI_CPU_ARCH_PROTOCOL (gnu-efi has none):
 * only RegisterInterruptHandler is called. */
static EFI_GUID cpu_arch_guid = { 0x26baccb1, 0x6f42, 0x11d4,
				  { 0xbc, 0xe7, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81 } };
typedef VOID(EFIAPI *cpu_handler)(INTN type, VOID *context);
struct cpu_arch {
	VOID *flush_data_cache, *enable_interrupt, *disable_interrupt, *get_interrupt_state, *init;
	EFI_STATUS(EFIAPI *register_interrupt_handler)(struct cpu_arch *self, INTN type,
							cpu_handler handler);
};

/* EFI_SYSTEM_CONTEXT_X64 (UEFI specification, Debug Support protocol): RIP
 * after ExceptionData, the 512-byte FXSAVE area, DR0-3/6/7, CR0-4/8,
 * RFLAGS, LDTR, TR, GDTR[2] and IDTR[2]. */
#define CONTEXT_X64_RIP (8 + 512 + 6 * 8 + 6 * 8 + 8 + 2 * 8 + 4 * 8)

static volatile UINTN hits[7];

/* one line to QEMU's debugcon: this app has no console the test can read */
static void say(const char *line, UINTN n)
{
	for (; *line; line++)
		__asm__ volatile("outb %0, %1" : : "a"((UINT8)*line), "Nd"((UINT16)0x402));
	__asm__ volatile("outb %0, %1" : : "a"((UINT8)('0' + n % 10)), "Nd"((UINT16)0x402));
	__asm__ volatile("outb %0, %1" : : "a"((UINT8)'\n'), "Nd"((UINT16)0x402));
}

static void power_off(void)
{
	__asm__ volatile("outb %0, %1" : : "a"((UINT8)0), "Nd"((UINT16)0xf4));
}

static VOID EFIAPI on_exception(INTN type, VOID *context)
{
	if (type == 6)
		*(UINT64 *)((UINT8 *)context + CONTEXT_X64_RIP) += 2; /* past UD2 */
	if (type >= 0 && type < 7)
		hits[type]++;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab);
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	InitializeLib(image, systab);
	struct cpu_arch *cpu = NULL;
	EFI_STATUS st = uefi_call_wrapper(BS->LocateProtocol, 3, &cpu_arch_guid, NULL, (VOID **)&cpu);
	if (EFI_ERROR(st)) {
		say("exc_app: no CPU architectural protocol, status low digit ", st);
		power_off();
		return st;
	}
	st = cpu->register_interrupt_handler(cpu, 3, on_exception);
	if (!EFI_ERROR(st))
		st = cpu->register_interrupt_handler(cpu, 6, on_exception);
	if (EFI_ERROR(st)) {
		say("exc_app: RegisterInterruptHandler failed, status low digit ", st);
		cpu->register_interrupt_handler(cpu, 3, NULL);
		power_off();
		return st;
	}
	MARKER_START();
	for (int i = 0; i < EXC_ROUNDS; i++) {
		__asm__ volatile("int3");
		__asm__ volatile("ud2");
	}
	MARKER_STOP();
	cpu->register_interrupt_handler(cpu, 3, NULL);
	cpu->register_interrupt_handler(cpu, 6, NULL);
	say("exc_app: #BP ", hits[3]);
	say("exc_app: #UD ", hits[6]);
	power_off();
	return hits[3] == EXC_ROUNDS && hits[6] == EXC_ROUNDS ? EFI_SUCCESS : EFI_ABORTED;
}

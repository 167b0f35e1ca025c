/*
 * Test-only UEFI application for efipt-qemu.so start=guest
 * (tests/qemu/t_qemu_guest_bad.sh): it programs Intel PT with its own
 * WRMSRs the way a careless or hostile guest would, and powers QEMU off
 * through isa-debug-exit (port 0xf4). Under TCG the WRMSRs to the
 * IA32_RTIT_* MSRs are ignored; the plugin follows them as the CPU of
 * its profile would (Tiger Lake: ToPA with many entries, 2 address
 * ranges). What it does, said on the debug console (port 0xe9):
 *
 * default (rtit_bad.efi), one step after another, each with STATUS
 * cleared after it:
 *   base:  IA32_RTIT_OUTPUT_BASE with bits 6:0 set (#GP, SDM 33.2.8.7)
 *   range: IA32_RTIT_ADDR2_A and IA32_RTIT_CTL.ADDR2_CFG=1 on a CPU with
 *          2 ranges (#GP: the MSR is not enumerated, Table 33-11;
 *          ADDRn_CFG beyond CPUID.(14H,1):EAX[2:0], 33.2.8.2)
 *   noend: a ToPA table without END, its next entries whatever memory
 *          holds (all ones): once the first region fills, the output
 *          reaches an entry with reserved bits (ToPA error 1, 33.2.7.2)
 *   loop:  END to a table whose entry 0 is END back (error 4b)
 *   many:  a table of 1000000 entries, every one the same 4 KiB region,
 *          END back at the end: valid, and the unit reads only the
 *          entries the output reaches
 * -DRTIT_NEVER_ENABLE (rtit_noen.efi): the output and IA32_RTIT_CTL
 *   programmed, TraceEn never set.
 * -DRTIT_NO_DISABLE (rtit_nodis.efi): TraceEn set with a good ToPA,
 *   then power-off with it still set.
 * -DRTIT_TOGGLE (rtit_toggle.efi): a good ToPA (one 256 KiB region, END
 *   back), TraceEn set, work, TraceEn cleared, other work untraced, TraceEn
 *   set again with nothing reprogrammed (the output goes on where it was,
 *   SDM 33.2.7.2), work, TraceEn cleared, power-off
 *   (tests/qemu/t_qemu_guest_toggle.sh).
 * No other firmware service than AllocatePages is called.
 */
#include <efi.h>
#include <efilib.h>

#define MSR_OUTPUT_BASE 0x560
#define MSR_OUTPUT_MASK 0x561
#define MSR_CTL 0x570
#define MSR_STATUS 0x571
#define MSR_ADDR2_A 0x584

#define CTL_TRACEEN (1ull << 0)
#define CTL_OS (1ull << 2)
#define CTL_TOPA (1ull << 8)
#define CTL_BRANCHEN (1ull << 13)
#define CTL_ADDR2_CFG_FILTER (1ull << 40)
#define CTL_ON (CTL_TRACEEN | CTL_OS | CTL_TOPA | CTL_BRANCHEN)

#define TOPA_END (1ull << 0)
#define TOPA_SIZE_256K (6ull << 6) /* 4 KiB << 6, bits 9:6 */

#define MANY 1000000u

static void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static void say(const char *s)
{
	for (; *s; s++)
		__asm__ volatile("outb %0, %1" : : "a"(*s), "Nd"((uint16_t)0xe9));
}

#ifndef RTIT_NEVER_ENABLE
static __attribute__((noipa)) uint32_t step(uint32_t x)
{
	return (x & 1) ? 3 * x + 1 : x / 2;
}

/* branches enough for well over 4 KiB of packets */
/* noipa: each call runs (no call with the same n folded into another) */
static __attribute__((noipa)) uint32_t work(uint32_t n)
{
	uint32_t c = 0;
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t x = i; x != 1; x = step(x))
			c++;
	return c;
}
#endif

static uint64_t pages(EFI_SYSTEM_TABLE *st, UINTN n)
{
	EFI_PHYSICAL_ADDRESS a = 0;
	if (st->BootServices->AllocatePages(AllocateAnyPages, EfiLoaderData, n, &a) != EFI_SUCCESS) {
		say("rtit app: AllocatePages failed\n");
		return 0;
	}
	return a;
}

static void power_off(void)
{
	__asm__ volatile("outb %0, %1" : : "a"((uint8_t)0), "Nd"((uint16_t)0xf4));
}

#if !defined(RTIT_NEVER_ENABLE) && !defined(RTIT_NO_DISABLE) && !defined(RTIT_TOGGLE)
/* TraceEn on with the table at table, some work, off, STATUS cleared */
static uint32_t traced(uint64_t table, uint32_t n)
{
	wrmsr(MSR_OUTPUT_BASE, table);
	wrmsr(MSR_OUTPUT_MASK, 0);
	wrmsr(MSR_CTL, CTL_ON);
	uint32_t c = work(n);
	wrmsr(MSR_CTL, 0);
	wrmsr(MSR_STATUS, 0);
	return c;
}
#endif

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st);
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	(void)image;
	volatile uint32_t sink = 0;
	uint64_t region = pages(st, 1), table = pages(st, 2);
	if (!region || !table)
		return EFI_OUT_OF_RESOURCES;
	uint64_t *t = (uint64_t *)(UINTN)table;
	for (unsigned i = 0; i < 1024; i++)
		t[i] = 0;
	t[0] = region; /* 4 KiB (Size 0) */
	t[1] = table | TOPA_END;
#if defined(RTIT_NEVER_ENABLE)
	say("rtit app: programmed, never enabled\n");
	wrmsr(MSR_OUTPUT_BASE, table);
	wrmsr(MSR_OUTPUT_MASK, 0);
	wrmsr(MSR_CTL, CTL_ON & ~CTL_TRACEEN);
#elif defined(RTIT_NO_DISABLE)
	say("rtit app: enabled, powering off with TraceEn set\n");
	wrmsr(MSR_OUTPUT_BASE, table);
	wrmsr(MSR_OUTPUT_MASK, 0);
	wrmsr(MSR_CTL, CTL_ON);
	sink += work(60);
#elif defined(RTIT_TOGGLE)
	/* a ToPA region is aligned to its size (ToPA error 2b, 33.2.7.2) */
	uint64_t big = pages(st, 128);
	if (!big)
		return EFI_OUT_OF_RESOURCES;
	big = (big + 0x3ffff) & ~0x3ffffull;
	t[0] = big | TOPA_SIZE_256K;
	say("rtit app: span 1\n");
	wrmsr(MSR_OUTPUT_BASE, table);
	wrmsr(MSR_OUTPUT_MASK, 0);
	wrmsr(MSR_CTL, CTL_ON);
	sink += work(40);
	wrmsr(MSR_CTL, CTL_ON & ~CTL_TRACEEN);
	say("rtit app: untraced\n");
	sink += work(70);
	say("rtit app: span 2\n");
	wrmsr(MSR_CTL, CTL_ON);
	sink += work(50);
	wrmsr(MSR_CTL, CTL_ON & ~CTL_TRACEEN);
	say("rtit app: done\n");
#else
	say("rtit app: base\n");
	wrmsr(MSR_OUTPUT_BASE, table | 0x40);
	say("rtit app: range\n");
	wrmsr(MSR_ADDR2_A, 0x1000);
	wrmsr(MSR_OUTPUT_BASE, table);
	wrmsr(MSR_OUTPUT_MASK, 0);
	wrmsr(MSR_CTL, CTL_ON | CTL_ADDR2_CFG_FILTER);
	say("rtit app: noend\n");
	for (unsigned i = 1; i < 1024; i++)
		t[i] = ~0ull;
	sink += traced(table, 1000);
	say("rtit app: loop\n");
	uint64_t *b = (uint64_t *)(UINTN)(table + 4096);
	t[1] = (table + 4096) | TOPA_END;
	b[0] = table | TOPA_END;
	sink += traced(table, 1000);
	say("rtit app: many\n");
	UINTN n = (MANY + 1) * 8 / 4096 + 1;
	uint64_t many = pages(st, n);
	if (!many)
		return EFI_OUT_OF_RESOURCES;
	uint64_t *m = (uint64_t *)(UINTN)many;
	for (unsigned i = 0; i < MANY; i++)
		m[i] = region;
	m[MANY] = many | TOPA_END;
	sink += traced(many, 2000);
	say("rtit app: done\n");
#endif
	power_off();
	return sink ? EFI_SUCCESS : EFI_ABORTED;
}

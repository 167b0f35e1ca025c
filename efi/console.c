/* Console output; see console.h. */
#include <efi.h>
#include <efilib.h>

#include "core/strbuf.h"
#include "efi/console.h"

static bool debugcon_on;

void con_set_debugcon(bool on)
{
	debugcon_on = on;
}

static void debugcon_putc(char c)
{
	__asm__ volatile("outb %0, %1" ::"a"(c), "Nd"((uint16_t)0xe9));
}

void con_debugcon_puts(const char *s)
{
	for (; debugcon_on && *s; s++)
		debugcon_putc(*s);
}

/* ConOut takes UCS-2 and wants CR LF; convert in small chunks. */
void con_puts(const char *s)
{
	CHAR16 out[130];
	unsigned n = 0;
	for (; *s; s++) {
		if (debugcon_on)
			debugcon_putc(*s);
		if (*s == '\n')
			out[n++] = L'\r';
		out[n++] = (CHAR16)(unsigned char)*s;
		if (n >= 126) {
			out[n] = 0;
			uefi_call_wrapper(ST->ConOut->OutputString, 2, ST->ConOut, out);
			n = 0;
		}
	}
	if (n) {
		out[n] = 0;
		uefi_call_wrapper(ST->ConOut->OutputString, 2, ST->ConOut, out);
	}
}

void con_printf(const char *fmt, ...)
{
	char buf[1024];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	__builtin_va_list ap;
	__builtin_va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	__builtin_va_end(ap);
	con_puts(buf);
	if (sb.truncated)
		con_puts("...[line truncated]\n");
}

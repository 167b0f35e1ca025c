/*
 * Bounded text builder for core/ (no libc). Output past the capacity is
 * dropped and remembered in `truncated`, so callers check once at the end.
 * The buffer is always NUL-terminated when cap > 0.
 *
 * sb_printf understands: %% %c %s %d %i %u %x %X with optional flags '-' '0',
 * a width, and the length modifiers l, ll, z. Nothing else (no floats).
 */
#ifndef EFIPT_CORE_STRBUF_H
#define EFIPT_CORE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
	char *buf;
	size_t cap; /* bytes available, including the terminating NUL */
	size_t len; /* bytes written, excluding the NUL */
	bool truncated;
};

void sb_init(struct strbuf *sb, char *buf, size_t cap);
void sb_putc(struct strbuf *sb, char c);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putn(struct strbuf *sb, const char *s, size_t n);
void sb_printf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, __builtin_va_list ap);
/* Append s as the body of a JSON string (quotes not included): control
 * characters escaped, valid UTF-8 kept, any other byte as the text \\xNN
 * (the output is always valid UTF-8, so valid JSON). */
void sb_json_escape(struct strbuf *sb, const char *s);
/* Append s as a JSON string, quotes included. */
void sb_json_str(struct strbuf *sb, const char *s);
/* Append s as XML character data or attribute text (& < > " ' escaped;
 * control characters other than tab and newline, not allowed in XML 1.0,
 * become '?'). */
void sb_xml_escape(struct strbuf *sb, const char *s);
/* Reset to empty, keeping the buffer. */
void sb_reset(struct strbuf *sb);

#endif

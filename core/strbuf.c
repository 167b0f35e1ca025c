/* Bounded text builder; see strbuf.h. */
#include "core/strbuf.h"
#include "core/utf8.h"

void sb_init(struct strbuf *sb, char *buf, size_t cap)
{
	sb->buf = buf;
	sb->cap = cap;
	sb->len = 0;
	sb->truncated = false;
	if (cap)
		buf[0] = 0;
}

void sb_reset(struct strbuf *sb)
{
	sb_init(sb, sb->buf, sb->cap);
}

void sb_putc(struct strbuf *sb, char c)
{
	if (sb->len + 1 < sb->cap) {
		sb->buf[sb->len++] = c;
		sb->buf[sb->len] = 0;
	} else {
		sb->truncated = true;
	}
}

void sb_putn(struct strbuf *sb, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_putc(sb, s[i]);
}

void sb_puts(struct strbuf *sb, const char *s)
{
	while (*s)
		sb_putc(sb, *s++);
}

static void put_padded(struct strbuf *sb, const char *s, size_t n, unsigned width,
		       bool left, char pad)
{
	size_t fill = width > n ? width - n : 0;
	if (!left)
		while (fill--)
			sb_putc(sb, pad);
	sb_putn(sb, s, n);
	if (left)
		while (fill--)
			sb_putc(sb, ' ');
}

/* Format v in `base` into tmp (from the end); return the start. */
static char *utoa(char *end, uint64_t v, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char *p = end;
	do {
		*--p = digits[v % base];
		v /= base;
	} while (v);
	return p;
}

void sb_vprintf(struct strbuf *sb, const char *fmt, __builtin_va_list ap)
{
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			sb_putc(sb, *f);
			continue;
		}
		f++;
		bool left = false;
		char pad = ' ';
		for (;; f++) {
			if (*f == '-')
				left = true;
			else if (*f == '0')
				pad = '0';
			else
				break;
		}
		unsigned width = 0;
		while (*f >= '0' && *f <= '9')
			width = width * 10 + (unsigned)(*f++ - '0');
		int lng = 0; /* 0: int, 1: long, 2: long long, 3: size_t */
		if (*f == 'l') {
			lng = 1;
			if (*++f == 'l') {
				lng = 2;
				f++;
			}
		} else if (*f == 'z') {
			lng = 3;
			f++;
		}
		char tmp[24];
		char *end = tmp + sizeof(tmp);
		switch (*f) {
		case '%':
			sb_putc(sb, '%');
			break;
		case 'c': {
			char c = (char)__builtin_va_arg(ap, int);
			put_padded(sb, &c, 1, width, left, ' ');
			break;
		}
		case 's': {
			const char *s = __builtin_va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			size_t n = 0;
			while (s[n])
				n++;
			put_padded(sb, s, n, width, left, ' ');
			break;
		}
		case 'd':
		case 'i': {
			int64_t v = lng == 2 ? __builtin_va_arg(ap, long long)
				  : lng == 1 ? __builtin_va_arg(ap, long)
				  : lng == 3 ? (int64_t)__builtin_va_arg(ap, size_t)
					     : __builtin_va_arg(ap, int);
			uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
			char *p = utoa(end, mag, 10, false);
			if (v < 0) {
				if (pad == '0' && width) {
					sb_putc(sb, '-');
					width--;
				} else {
					*--p = '-';
				}
			}
			put_padded(sb, p, (size_t)(end - p), width, left, pad);
			break;
		}
		case 'u':
		case 'x':
		case 'X': {
			uint64_t v = lng == 2 ? __builtin_va_arg(ap, unsigned long long)
				   : lng == 1 ? __builtin_va_arg(ap, unsigned long)
				   : lng == 3 ? __builtin_va_arg(ap, size_t)
					      : __builtin_va_arg(ap, unsigned int);
			char *p = utoa(end, v, *f == 'u' ? 10 : 16, *f == 'X');
			put_padded(sb, p, (size_t)(end - p), width, left, pad);
			break;
		}
		case 0:
			return;
		default: /* unknown conversion: show it literally */
			sb_putc(sb, '%');
			sb_putc(sb, *f);
			break;
		}
	}
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	__builtin_va_list ap;
	__builtin_va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	__builtin_va_end(ap);
}

void sb_json_escape(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned char c = *p;
		int n = c < 0x80 ? 1 : utf8_seq_len(p);
		if (c == '"' || c == '\\') {
			sb_putc(sb, '\\');
			sb_putc(sb, (char)c);
		} else if (c == '\n') {
			sb_puts(sb, "\\n");
		} else if (c == '\r') {
			sb_puts(sb, "\\r");
		} else if (c == '\t') {
			sb_puts(sb, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			sb_printf(sb, "\\u%04x", c);
		} else if (!n) {
			/* not UTF-8: the byte as text, as every efipt JSON writer
			 * shows it (JSON must be UTF-8, RFC 8259 section 8.1) */
			sb_printf(sb, "\\\\x%02x", c);
			n = 1;
		} else {
			sb_putn(sb, (const char *)p, (size_t)n);
		}
		p += n;
	}
}

void sb_json_str(struct strbuf *sb, const char *s)
{
	sb_putc(sb, '"');
	sb_json_escape(sb, s);
	sb_putc(sb, '"');
}

void sb_xml_escape(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': sb_puts(sb, "&amp;"); break;
		case '<': sb_puts(sb, "&lt;"); break;
		case '>': sb_puts(sb, "&gt;"); break;
		case '"': sb_puts(sb, "&quot;"); break;
		case '\'': sb_puts(sb, "&apos;"); break;
		default:
			sb_putc(sb, c < 0x20 && c != '\t' && c != '\n' ? '?' : (char)c);
		}
	}
}

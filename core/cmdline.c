/* Command-line splitting; see cmdline.h. */
#include "core/cmdline.h"

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int cmdline_split(char *buf, char **argv, int max_argv)
{
	int argc = 0;
	char *r = buf, *w = buf;
	for (;;) {
		while (is_blank(*r))
			r++;
		if (!*r)
			break;
		if (*r == '#') {
			while (*r && *r != '\n')
				r++;
			continue;
		}
		if (argc >= max_argv)
			return CMDLINE_TOO_MANY;
		argv[argc++] = w;
		int quoted = 0;
		for (; *r; r++) {
			if (quoted) {
				if (*r == '"') {
					quoted = 0;
					continue;
				}
				if (*r == '\\' && (r[1] == '"' || r[1] == '\\'))
					r++;
			} else if (*r == '"') {
				quoted = 1;
				continue;
			} else if (is_blank(*r)) {
				break;
			}
			*w++ = *r;
		}
		if (quoted)
			return CMDLINE_UNTERMINATED;
		/* r stays on the separator (or NUL); w may equal r, so step first */
		int more = *r != 0;
		if (more)
			r++;
		*w++ = 0;
		if (!more)
			break;
	}
	if (argc < max_argv)
		argv[argc] = 0;
	return argc;
}

int cmdline_uncomment(const char *src, size_t len, char *dst, size_t cap, size_t *bad)
{
	size_t o = 0;
	int quoted = 0, pending_blank = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)src[i];
		if (!quoted && is_blank((char)c)) {
			pending_blank = o > 0;
			continue;
		}
		/* '#' starts a comment where it starts a word, as cmdline_split has it */
		if (!quoted && c == '#' && (o == 0 || pending_blank)) {
			while (i < len && src[i] != '\n')
				i++;
			continue;
		}
		if (c == '\t' || c == '\r' || c == '\n')
			c = ' '; /* a tab or line break inside quotes */
		if (c < 0x20 || c > 0x7e) {
			*bad = i;
			return CMDLINE_NOT_ASCII;
		}
		size_t need = (size_t)pending_blank + 1;
		int pair = quoted && c == '\\' && i + 1 < len && (src[i + 1] == '"' || src[i + 1] == '\\');
		need += (size_t)pair;
		if (o + need + 1 > cap)
			return CMDLINE_TOO_LONG;
		if (pending_blank)
			dst[o++] = ' ';
		pending_blank = 0;
		dst[o++] = (char)c;
		if (pair)
			dst[o++] = src[++i];
		else if (c == '"')
			quoted = !quoted;
	}
	if (cap)
		dst[o] = 0;
	return (int)o;
}

static int word_is(const char *w, size_t n, const char *s)
{
	size_t i = 0;
	for (; i < n && s[i] && s[i] == w[i]; i++)
		;
	return i == n && !s[i];
}

unsigned cmdline_salvage(const char *raw, size_t len, size_t first, size_t step,
			 const char *const *words, unsigned n)
{
	unsigned found = 0;
	size_t start = 0, wlen = 0;
	int comment = 0;
	if (!step)
		return 0;
	for (size_t i = first;; i += step) {
		int end = i >= len;
		char c = end ? ' ' : raw[i]; /* a blank ends the last word */
		if (comment) {
			if (end)
				break;
			comment = c != '\n';
			continue;
		}
		if (!end && !is_blank(c) && c) {
			if (!wlen && c == '#') {
				comment = 1;
				continue;
			}
			if (!wlen)
				start = i;
			wlen++;
			continue;
		}
		if (wlen) {
			/* the word's bytes, every step-th from start */
			char w[24];
			size_t k = 0;
			for (; k < wlen && k < sizeof(w); k++)
				w[k] = raw[start + k * step];
			if (wlen <= sizeof(w)) {
				if (word_is(w, wlen, "--"))
					break;
				for (unsigned j = 0; j < n && j < 32; j++)
					if (word_is(w, wlen, words[j]))
						found |= 1u << j;
			}
		}
		wlen = 0;
		if (end)
			break;
	}
	return found;
}

int cmdline_is_image_name(const char *s)
{
	const char *end = s;
	while (*end)
		end++;
	if (end - s < 4)
		return 0;
	const char *x = end - 4;
	return x[0] == '.' && (x[1] | 0x20) == 'e' && (x[2] | 0x20) == 'f' && (x[3] | 0x20) == 'i';
}

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

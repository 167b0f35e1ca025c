/* CSV output: see csv_out.h. */
#include <stdio.h>

#include "decode/csv_out.h"
#include "decode/file_io.h"

void csv_field(const char *s)
{
	s = term_safe(s);
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

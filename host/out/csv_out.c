/* CSV output: see csv_out.h. */
#include <stdio.h>

#include "host/out/csv_out.h"
#include "host/util/file_io.h"

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

/* Frame names of folded stacks: see folded.h. */
#include <stdio.h>

#include "host/util/file_io.h"
#include "host/stack/folded.h"

void folded_frame_name(const struct symtab *st, uint32_t fn, char *buf, size_t cap)
{
	char name[700];
	symtab_fn_name(st, fn, name, sizeof(name));
	for (char *p = name; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = '_'; /* the format's separators */
	snprintf(buf, cap, "%s", term_safe(name));
}

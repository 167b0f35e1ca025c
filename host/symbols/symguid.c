/*
 * FV/Guid.xref lookups: see symguid.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "host/symbols/symguid.h"

static bool is_guid(const char *s)
{
	for (int i = 0; i < SYMGUID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

bool symguid_from_path(const char *path, char guid[SYMGUID_LEN + 1])
{
	const char *p = strstr(path, "FvFile(");
	if (!p || strnlen(p + 7, SYMGUID_LEN + 1) < SYMGUID_LEN + 1 || !is_guid(p + 7) ||
	    p[7 + SYMGUID_LEN] != ')')
		return false;
	memcpy(guid, p + 7, SYMGUID_LEN);
	guid[SYMGUID_LEN] = 0;
	return true;
}

int symguid_lookup(const char *xref, const char *guid, char *name, size_t cap, char *err,
		   size_t errlen)
{
	FILE *f = fopen(xref, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", xref, strerror(errno));
		return -1;
	}
	char line[1024];
	int found = 0;
	/* a line longer than the buffer continues in the next read: only a
	 * chunk that starts a line can start with a GUID and a space */
	bool at_start = true;
	while (!found && fgets(line, sizeof(line), f)) {
		bool starts = at_start;
		at_start = strchr(line, '\n') != NULL;
		if (!starts || strlen(line) < SYMGUID_LEN + 2 || !is_guid(line) ||
		    line[SYMGUID_LEN] != ' ' || strncasecmp(line, guid, SYMGUID_LEN))
			continue;
		const char *n = line + SYMGUID_LEN + 1;
		size_t len = strcspn(n, " \t\r\n");
		if (!len || len >= cap)
			continue;
		memcpy(name, n, len);
		name[len] = 0;
		found = 1;
	}
	if (!found && ferror(f)) {
		snprintf(err, errlen, "%s: read error", xref);
		found = -1;
	}
	fclose(f);
	return found;
}

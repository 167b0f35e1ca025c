/* Where a timeline goes: see timeline_sink.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/out/timeline_sink.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

int tlsink_format(const char *name, const char *path, enum tl_format *f)
{
	if (name) {
		if (!strcmp(name, "json"))
			*f = TL_JSON;
		else if (!strcmp(name, "perfetto"))
			*f = TL_PERFETTO;
		else
			return -1;
		return 0;
	}
	*f = path && (ends_with(path, ".pftrace") || ends_with(path, ".perfetto-trace"))
		     ? TL_PERFETTO : TL_JSON;
	return 0;
}

int tlsink_open(struct tl_sink *s, enum tl_format f, const char *cmd, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->ops = f == TL_PERFETTO ? &pft_sink_ops : &tev_sink_ops;
	s->cmd = cmd;
	s->w = calloc(1, s->ops->size);
	if (!s->w) {
		fprintf(stderr, "efipt %s: out of memory\n", cmd);
		return -1;
	}
	if (s->ops->open(s, cmd, path)) {
		free(s->w);
		s->w = NULL;
		return -1;
	}
	return 0;
}

uint32_t tlsink_name(struct tl_sink *s, const char *name)
{
	uint32_t h = ntab_add(&s->names, name);
	if (h == NTAB_NONE) {
		tlsink_oom(s, "the names");
		return 0;
	}
	return h;
}

static void release(struct tl_sink *s)
{
	free(s->w);
	s->w = NULL;
	ntab_free(&s->names);
}

int tlsink_close(struct tl_sink *s)
{
	int rc = -1;
	if (s->oom) {
		/* a handle would stand for a name it is not */
		fprintf(stderr, "efipt %s: out of memory for %s: the timeline is not written\n",
			s->cmd, s->oom);
		s->ops->abort(s);
	} else {
		rc = s->ops->close(s);
	}
	release(s);
	return rc;
}

const char *tlsink_str(const struct tl_sink *s, uint32_t name)
{
	return name < s->names.n ? s->names.s[name] : "";
}

void tlsink_abort(struct tl_sink *s)
{
	if (s->w)
		s->ops->abort(s);
	release(s);
}

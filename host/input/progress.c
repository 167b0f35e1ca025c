/* Progress of a long decode: see progress.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/util/file_io.h"
#include "host/input/progress.h"

#define MB (1024.0 * 1024.0)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_at(struct progress *p, uint64_t offset)
{
	if (!p->mode)
		return;
	int pct = p->total ? (int)(offset * 100 / p->total) : 100;
	if (pct > 100)
		pct = 100;
	if (p->mode == 2) {
		if (pct / 10 > p->last / 10) {
			fprintf(stderr, "%s %d%%\n", p->what, pct / 10 * 10);
			p->last = pct / 10 * 10;
		}
		return;
	}
	double t = now();
	if (t < p->next)
		return;
	p->next = t + 0.2;
	fprintf(stderr, "\r%s %3d%% (%.0f of %.0f MB) ", p->what, pct, (double)offset / MB,
		(double)p->total / MB);
	p->shown = true;
}

void progress_start(struct progress *p, const char *cmd, const char *file, uint64_t total,
		    bool streams)
{
	memset(p, 0, sizeof(*p));
	const char *e = getenv("EFIPT_PROGRESS");
	if (e && !strcmp(e, "1"))
		p->mode = 2;
	else if (!(e && !strcmp(e, "0")) && isatty(2) && total >= 8 * 1024 * 1024 &&
		 !(streams && isatty(1)))
		p->mode = 1;
	if (!p->mode)
		return;
	const char *base = strrchr(file, '/');
	snprintf(p->what, sizeof(p->what), "efipt %s: %s", cmd, term_safe(base ? base + 1 : file));
	p->total = total;
	p->next = now() + 1.0; /* nothing for a short decode */
}

void progress_end(struct progress *p)
{
	if (p->mode == 2 && p->last < 100)
		fprintf(stderr, "%s 100%%\n", p->what);
	if (p->shown)
		fprintf(stderr, "\r%*s\r", (int)strlen(p->what) + 24, "");
	p->shown = false;
}

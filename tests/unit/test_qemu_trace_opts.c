/* efipt qemu's trace options (host/qemu/qemu_trace_opts.c): the shared table's
 * rows taken from the command line, mapped to plugin arguments. */
#include <string.h>

#include "check.h"
#include "host/qemu/qemu_trace_opts.h"

static struct qemu_trace_opts t;
static char args[1024], err[1024];

/* efipt qemu's arguments (up to "--"), then QEMU's; 0 if both steps pass */
static int map(const char *const *cli, const char *const *qemu)
{
	char *v[32];
	int n = 0;
	v[n++] = "qemu";
	for (; *cli; cli++)
		v[n++] = (char *)*cli;
	v[n] = NULL;
	char *q[16];
	int qn = 0;
	for (; qemu && *qemu; qemu++)
		q[qn++] = (char *)*qemu;
	q[qn] = NULL;
	args[0] = err[0] = 0;
	if (qemu_trace_opts_take(&t, &n, v, err, sizeof(err)))
		return -1;
	return qemu_trace_opts_plugin_args(&t, qn, q, args, sizeof(args), err, sizeof(err));
}

int main(void)
{
	const char *icount[] = { "-icount", "shift=3,sleep=off", NULL };
	CHECK(!map((const char *[]){ "--tsc", "--mtc", "--cyc", NULL }, icount) &&
		      !strcmp(args, ",shift=3,tsc=on,mtc=3,cyc=0"),
	      "--tsc --mtc --cyc with -icount shift=3: defaults MTCFreq 3, CycThresh 0");
	CHECK(!map((const char *[]){ "--mtc=5", "--cyc=2", NULL }, NULL) &&
		      !strcmp(args, ",mtc=5,cyc=2"),
	      "no -icount: no shift= (the plugin assumes 1 ns per instruction)");
	CHECK(map((const char *[]){ "--tsc", NULL }, (const char *[]){ "-icount", "auto", NULL }) &&
		      strstr(err, "need a fixed instruction rate"),
	      "-icount auto refused with --tsc");
	CHECK(!map((const char *[]){ "--size", "16K", "--mode=wrap", "--psb", "4K", NULL }, NULL) &&
		      !strcmp(args, ",size=16384,mode=wrap,psb=4096"),
	      "--size, --mode wrap, --psb in bytes");
	CHECK(!map((const char *[]){ "--size=64K", NULL }, NULL) &&
		      !strcmp(args, ",size=65536,mode=stop"),
	      "--size alone: stop");
	CHECK(!map((const char *[]){ "--psb=3", "--noretcomp", NULL }, NULL) &&
		      !strcmp(args, ",psb=16384,retcomp=off"),
	      "--psb encoding 3 = 16K, --noretcomp");
	CHECK(!map((const char *[]){ "--filter", "0x1000-0x1fff", NULL }, NULL) &&
		      !strcmp(args, ",filter=0x1000-0x1fff"),
	      "--filter A-B");
	CHECK(map((const char *[]){ "--filter", "image=DxeCore", NULL }, NULL) &&
		      strstr(err, "--filter image=DxeCore: no flash image to find it in"),
	      "--filter image= refused, named");
	CHECK(!map((const char *[]){ "--cr3", "0x1f801000", NULL }, NULL) &&
		      !strcmp(args, ",cr3=0x1f801000"),
	      "--cr3 V becomes the plugin's cr3=V (CR3 filtering)");
	CHECK(map((const char *[]){ "--cr3", "0x1001", NULL }, NULL) && strstr(err, "--cr3"),
	      "--cr3 with reserved bits 4:0 refused");
	CHECK(map((const char *[]){ "--size", "6K", "--mode", "wrap", NULL }, NULL) &&
		      strstr(err, "at least twice the PSB period"),
	      "wrap smaller than two PSB periods refused");
	/* efipt qemu's own options stay, --stop included (not the TraceStop range) */
	char *v[] = { "qemu", "-o", "--tsc", "--stop", "marker", "--tsc", "--", "--tsc", NULL };
	int n = 8;
	CHECK(!qemu_trace_opts_take(&t, &n, v, err, sizeof(err)) && n == 7 &&
		      !strcmp(v[1], "-o") && !strcmp(v[2], "--tsc") && !strcmp(v[3], "--stop") &&
		      !strcmp(v[4], "marker") && !strcmp(v[5], "--") && !strcmp(v[6], "--tsc") &&
		      !v[7] && t.cfg.tsc,
	      "-o's value, --stop and what follows -- are left in place");
	return check_exit();
}

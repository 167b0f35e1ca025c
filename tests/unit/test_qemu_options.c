/* The QEMU plugin's arguments (qemu-plugin/options.c). */
#include <string.h>

#include "check.h"
#include "qemu-plugin/options.h"

static struct plugin_options o;

static int parse(const char *a, const char *b, const char *c)
{
	char *argv[3] = { (char *)a, (char *)b, (char *)c };
	int n = c ? 3 : b ? 2 : 1;
	return options_parse(&o, n, argv);
}

int main(void)
{
	char buf[32];
	CHECK(!parse("dir=/tmp/r", NULL, NULL) && !strcmp(o.dir, "/tmp/r") && o.psb == 4096 &&
		      o.retcomp && !o.exit_at_stop && o.cfg.start == INFER_START_RESET &&
		      o.cfg.stop == INFER_STOP_EXIT,
	      "defaults: psb 4096, RET compression, reset to exit");
	CHECK(!parse("dir=r", "retcomp=off", "psb=0x100") && !o.retcomp && o.psb == 256,
	      "retcomp=off, psb in hex");
	CHECK(!parse("dir=r", "noretcomp", NULL) && !o.retcomp, "bare noretcomp");
	CHECK(!parse("dir=r", "start=protected", "stop=0xfffffff0") &&
		      o.cfg.start == INFER_START_PROTECTED && o.cfg.stop == INFER_STOP_ADDR &&
		      o.cfg.stop_addr == 0xfffffff0 &&
		      !strcmp(options_stop_name(&o, buf, sizeof(buf)), "0xfffffff0") &&
		      !strcmp(options_start_name(&o, buf, sizeof(buf)), "protected"),
	      "start=protected, stop=ADDR, and their names");
	CHECK(!parse("dir=r", "start=marker", "stop=marker") &&
		      o.cfg.start == INFER_START_MARKER && o.cfg.stop == INFER_STOP_MARKER,
	      "markers");
	CHECK(!parse("dir=r", "limit=5", "exit=on") && o.cfg.limit == 5 && o.exit_at_stop,
	      "limit, exit=on");
	CHECK(!parse("dir=r", "after=7", NULL) && o.cfg.after == 7, "after");
	CHECK(!strcmp(o.args, "dir=r,after=7"), "arguments kept for the manifest");
	CHECK(parse("psb=4096", NULL, NULL), "dir= is required");
	CHECK(parse("dir=r", "psb=100", NULL), "psb below 256 refused");
	CHECK(parse("dir=r", "limit=0", NULL), "limit=0 refused");
	CHECK(parse("dir=r", "limit=-1", NULL), "negative limit refused");
	CHECK(parse("dir=r", "start=later", NULL), "unknown start refused");
	CHECK(parse("dir=r", "retcomp=maybe", NULL), "bad boolean refused");
	CHECK(parse("dir=r", "file=x", NULL), "unknown argument refused");
	CHECK(parse("dir=", NULL, NULL), "empty dir refused");
	/* the hardware trace options (host/qemu/qemu_trace_opts.c passes them) */
	CHECK(!parse("dir=r", "tsc=on", "shift=3") && o.timing.tsc && o.timing.shift == 3 &&
		      o.shift_given && !o.timing.mtc && !o.timing.cyc,
	      "tsc=on, shift=3");
	CHECK(!parse("dir=r", "mtc=5", "cyc=2") && o.timing.mtc && o.timing.mtc_freq == 5 &&
		      o.timing.cyc && o.timing.cyc_thresh == 2 && !o.shift_given,
	      "mtc=F, cyc=T");
	CHECK(parse("dir=r", "mtc=16", NULL), "MTCFreq above 15 refused");
	CHECK(parse("dir=r", "shift=11", NULL), "icount shift above 10 refused");
	CHECK(!parse("dir=r", "size=16384", NULL) && o.size == 16384 && !o.wrap, "size=, stop");
	CHECK(!parse("dir=r", "mode=wrap", NULL) && o.wrap && o.size == 4u << 20,
	      "mode=wrap alone keeps 4 MiB");
	CHECK(parse("dir=r", "size=4096", "mode=wrap"), "wrap below two PSB periods refused");
	CHECK(parse("dir=r", "size=100", NULL), "size below 4096 refused");
	CHECK(parse("dir=r", "mode=ring", NULL), "unknown mode refused");
	CHECK(!parse("dir=r", "filter=0x1000-0x1fff", "filter=0x3000-0x3000") &&
		      o.cfg.nfilter == 2 && o.cfg.filter_a[0] == 0x1000 &&
		      o.cfg.filter_b[0] == 0x1fff && o.cfg.filter_a[1] == 0x3000,
	      "filter ranges");
	CHECK(parse("dir=r", "filter=0x2000-0x1000", NULL), "filter end below start refused");
	CHECK(parse("dir=r", "filter=0x2000", NULL), "filter without an end refused");
	{
		char *five[6] = { "dir=r", "filter=1-2", "filter=3-4", "filter=5-6", "filter=7-8",
				  "filter=9-10" };
		CHECK(options_parse(&o, 6, five), "a fifth filter range refused");
	}
	return check_exit();
}

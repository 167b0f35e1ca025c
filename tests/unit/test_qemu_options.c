/* The QEMU plugin's arguments (ovmf/plugin/options.c). */
#include <string.h>

#include "check.h"
#include "ovmf/plugin/options.h"

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
	return check_exit();
}

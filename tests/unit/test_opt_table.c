/*
 * Option tables (core/opt_table.c) and the trace options built on them
 * (core/pt_config.c): value kinds, messages, usage, one row per name.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/opt_table.h"
#include "core/pt_config.h"

struct ctx {
	bool flag;
	const char *value;
	int calls;
};

static int set_value(void *c, const struct opt_row *o, const char *v, struct strbuf *err)
{
	struct ctx *x = c;
	x->calls++;
	x->value = v;
	if (v && !strcmp(v, "bad")) {
		sb_printf(err, "--%s refuses '%s'", o->name, v);
		return -1;
	}
	return 0;
}

static const struct opt_row rows[] = {
	{ "flag", OPT_FLAG, opt_set_true, offsetof(struct ctx, flag), 0, "a flag" },
	{ "val", OPT_VALUE, set_value, 0, "X", "a value" },
	{ "opt", OPT_OPTIONAL, set_value, 0, "[=Y]", "an optional value\nsecond line" },
	{ "hidden", OPT_FLAG, opt_set_true, offsetof(struct ctx, flag), 0, 0 },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static int parse(struct ctx *c, const char *arg, const char *next, char *err, size_t n)
{
	struct strbuf sb;
	sb_init(&sb, err, n);
	memset(c, 0, sizeof(*c));
	return opt_parse(rows, NROWS, c, arg, next, &sb);
}

static void test_kinds(void)
{
	struct ctx c;
	char err[128];
	CHECK(parse(&c, "--flag", "x", err, sizeof(err)) == 1 && c.flag, "flag: set, next untouched");
	CHECKF(parse(&c, "--flag=1", NULL, err, sizeof(err)) == -1 &&
		       !strcmp(err, "--flag takes no value"),
	       "flag: a value is refused by name", "%s", err);
	CHECK(parse(&c, "--val", "x", err, sizeof(err)) == 2 && !strcmp(c.value, "x"),
	      "value: from the next argument");
	CHECK(parse(&c, "--val=y", "x", err, sizeof(err)) == 1 && !strcmp(c.value, "y"),
	      "value: after '='");
	CHECKF(parse(&c, "--val", NULL, err, sizeof(err)) == -1 && !strcmp(err, "--val needs a value"),
	       "value: missing value named", "%s", err);
	CHECKF(parse(&c, "--val", "bad", err, sizeof(err)) == -1 && !strcmp(err, "--val refuses 'bad'"),
	       "value: the setter's refusal passed on", "%s", err);
	CHECK(parse(&c, "--opt", "x", err, sizeof(err)) == 1 && c.calls == 1 && !c.value,
	      "optional: no value, next untouched");
	CHECK(parse(&c, "--opt=z", NULL, err, sizeof(err)) == 1 && !strcmp(c.value, "z"),
	      "optional: value after '='");
	CHECK(parse(&c, "--valx", "x", err, sizeof(err)) == 0 && parse(&c, "--va", 0, err, 8) == 0 &&
		      parse(&c, "val", "x", err, sizeof(err)) == 0 &&
		      parse(&c, "-flag", 0, err, sizeof(err)) == 0 && parse(&c, NULL, 0, err, 8) == 0,
	      "no prefix or partial matches; not an option: 0");
}

static void test_usage(void)
{
	char buf[512];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	opt_usage(rows, NROWS, &sb);
	CHECKF(!strcmp(buf, "  --flag              a flag\n"
			    "  --val X             a value\n"
			    "  --opt[=Y]           an optional value\n"
			    "                      second line\n"),
	       "usage: aligned, continued, hidden rows left out", "%s", buf);
}

/* Every trace option has a name of its own and its line in the usage. */
static void test_trace_option_names(void)
{
	char usage[4096];
	struct strbuf sb;
	sb_init(&sb, usage, sizeof(usage));
	ptcfg_usage(&sb);
	unsigned bad = 0;
	for (int i = 0; i < PTCFG_OPT_COUNT; i++) {
		const char *ni = ptcfg_opt_name((enum ptcfg_opt)i);
		char line[64];
		snprintf(line, sizeof(line), "  --%s", ni);
		if (!strstr(usage, line))
			bad++;
		for (int j = 0; j < i; j++)
			if (!strcmp(ni, ptcfg_opt_name((enum ptcfg_opt)j)))
				bad++;
	}
	CHECKF(!bad && !sb.truncated, "trace options: unique names, each in the usage",
	       "%u bad", bad);
	struct ptcfg cfg;
	char err[128];
	struct strbuf es;
	sb_init(&es, err, sizeof(err));
	ptcfg_init(&cfg);
	CHECK(ptcfg_option(&cfg, "--user", NULL, &es) == 1 && !cfg.os && cfg.user &&
		      ptcfg_option(&cfg, "--kernel", NULL, &es) == 1 && cfg.os && cfg.user,
	      "trace options: --user alone, then --kernel adds CPL 0");
	CHECK(ptcfg_option(&cfg, "--nobranch", NULL, &es) == 1 && !cfg.branch &&
		      ptcfg_option(&cfg, "--notnt", NULL, &es) == 1 && cfg.distnt &&
		      ptcfg_option(&cfg, "--force", NULL, &es) == 1 && cfg.force,
	      "trace options: flags set their fields");
}

int main(void)
{
	test_kinds();
	test_usage();
	test_trace_option_names();
	return check_exit();
}

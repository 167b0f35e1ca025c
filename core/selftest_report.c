/* Selftest results and reports; see selftest_report.h. */
#include "core/selftest_report.h"

void selftest_init(struct selftest *t)
{
	t->n = t->failed = t->skipped = 0;
}

const struct selftest_case *selftest_record(struct selftest *t, const char *name,
					    enum selftest_result result, const char *detail)
{
	if (t->n >= SELFTEST_MAX_CASES)
		return 0;
	struct selftest_case *c = &t->c[t->n++];
	c->name = name;
	c->result = result;
	struct strbuf sb;
	sb_init(&sb, c->detail, sizeof(c->detail));
	sb_puts(&sb, detail);
	if (result == SELFTEST_FAIL)
		t->failed++;
	if (result == SELFTEST_SKIP)
		t->skipped++;
	return c;
}

const char *selftest_result_name(enum selftest_result r)
{
	switch (r) {
	case SELFTEST_PASS: return "pass";
	case SELFTEST_FAIL: return "fail";
	case SELFTEST_SKIP: return "skip";
	}
	return "fail";
}

const char *selftest_result_label(enum selftest_result r)
{
	switch (r) {
	case SELFTEST_PASS: return "PASS";
	case SELFTEST_FAIL: return "FAIL";
	case SELFTEST_SKIP: return "SKIP";
	}
	return "FAIL";
}

void selftest_json(const struct selftest *t, struct strbuf *out)
{
	sb_printf(out, "{\"tests\": %u, \"failed\": %u, \"skipped\": %u, \"cases\": [", t->n,
		  t->failed, t->skipped);
	for (unsigned i = 0; i < t->n; i++) {
		sb_puts(out, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
		sb_json_str(out, t->c[i].name);
		sb_printf(out, ", \"result\": \"%s\", \"detail\": ", selftest_result_name(t->c[i].result));
		sb_json_str(out, t->c[i].detail);
		sb_putc(out, '}');
	}
	sb_puts(out, "\n]}\n");
}

void selftest_junit(const struct selftest *t, struct strbuf *out)
{
	sb_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		       "<testsuite name=\"efipt.selftest\" tests=\"%u\" failures=\"%u\" "
		       "skipped=\"%u\">\n",
		  t->n, t->failed, t->skipped);
	for (unsigned i = 0; i < t->n; i++) {
		const struct selftest_case *c = &t->c[i];
		sb_puts(out, "  <testcase classname=\"efipt\" name=\"");
		sb_xml_escape(out, c->name);
		if (c->result == SELFTEST_PASS) {
			sb_puts(out, "\"/>\n");
			continue;
		}
		sb_printf(out, "\">\n    <%s message=\"",
			  c->result == SELFTEST_FAIL ? "failure" : "skipped");
		sb_xml_escape(out, c->detail);
		sb_puts(out, "\"/>\n  </testcase>\n");
	}
	sb_puts(out, "</testsuite>\n");
}

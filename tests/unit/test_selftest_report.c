/*
 * efipt.efi selftest's reports (core/selftest_report.c): counts, results, and
 * names and details escaped for JSON and for JUnit XML whatever they hold.
 */
#include <jansson.h>
#include <string.h>

#include "check.h"
#include "core/run_result.h"
#include "core/selftest_report.h"

static const char evil[] = "a<b&c\"d'e>";

static void fill(struct selftest *t)
{
	selftest_init(t);
	selftest_record(t, "plain", SELFTEST_PASS, "");
	selftest_record(t, evil, SELFTEST_FAIL, "detail <&\">\x01");
	selftest_record(t, "skipped", SELFTEST_SKIP, "no Intel PT");
}

static void test_junit(void)
{
	static struct selftest t;
	static char buf[8192];
	struct strbuf sb;
	fill(&t);
	sb_init(&sb, buf, sizeof(buf));
	selftest_junit(&t, &sb);
	CHECKF(strstr(buf, "tests=\"3\" failures=\"1\" skipped=\"1\""), "junit: counts", "%s", buf);
	CHECKF(strstr(buf, "name=\"a&lt;b&amp;c&quot;d&apos;e&gt;\""), "junit: name with <&\" escaped",
	       "%s", buf);
	CHECKF(!strstr(buf, evil), "junit: the raw name appears nowhere", "%s", buf);
	CHECKF(strstr(buf, "<failure message=\"detail &lt;&amp;&quot;&gt;?\"/>"),
	       "junit: failure detail escaped, control character replaced", "%s", buf);
	CHECKF(strstr(buf, "<testcase classname=\"efipt\" name=\"plain\"/>") &&
		       strstr(buf, "<skipped message=\"no Intel PT\"/>"),
	       "junit: pass and skip cases", "%s", buf);
	/* every '<' opens a tag and every '&' an entity: nothing unescaped is left */
	int bad = 0;
	for (const char *p = buf; *p; p++) {
		if (*p == '<' && !(p[1] == '?' || p[1] == '/' || (p[1] >= 'a' && p[1] <= 'z')))
			bad++;
		if (*p == '&' && strncmp(p, "&amp;", 5) && strncmp(p, "&lt;", 4) &&
		    strncmp(p, "&gt;", 4) && strncmp(p, "&quot;", 6) && strncmp(p, "&apos;", 6))
			bad++;
	}
	CHECKF(!bad, "junit: well-formed markup", "%d stray characters in %s", bad, buf);
}

static void test_json(void)
{
	static struct selftest t;
	static char buf[8192];
	struct strbuf sb;
	fill(&t);
	sb_init(&sb, buf, sizeof(buf));
	selftest_json(&t, &sb);
	json_error_t e;
	json_t *j = json_loads(buf, 0, &e);
	if (!CHECKF(j, "json: parses", "%s: %s", e.text, buf))
		return;
	json_t *c = json_array_get(json_object_get(j, "cases"), 1);
	CHECKF(json_integer_value(json_object_get(j, "tests")) == 3 &&
		       json_integer_value(json_object_get(j, "failed")) == 1 &&
		       json_integer_value(json_object_get(j, "skipped")) == 1,
	       "json: counts", "%s", buf);
	CHECKF(!strcmp(json_string_value(json_object_get(c, "name")), evil) &&
		       !strcmp(json_string_value(json_object_get(c, "result")), "fail") &&
		       !strcmp(json_string_value(json_object_get(c, "detail")), "detail <&\">\x01"),
	       "json: name and detail come back as recorded", "%s", buf);
	json_decref(j);
}

static void test_limits(void)
{
	static struct selftest t;
	selftest_init(&t);
	unsigned kept = 0;
	for (unsigned i = 0; i < SELFTEST_MAX_CASES + 3; i++)
		kept += selftest_record(&t, "x", SELFTEST_FAIL, "") != NULL;
	CHECK(kept == SELFTEST_MAX_CASES && t.n == SELFTEST_MAX_CASES &&
		      t.failed == SELFTEST_MAX_CASES,
	      "record: cases beyond the maximum are dropped, not counted");
}

static void test_run_result(void)
{
	static const enum run_result all[] = { RUN_OK, RUN_UNSUPPORTED, RUN_FAILED };
	int ok = 1;
	for (unsigned i = 0; i < 3; i++) {
		enum run_result r;
		ok &= !run_result_parse(run_result_name(all[i]), &r) && r == all[i];
	}
	enum run_result r;
	CHECK(ok && !strcmp(run_result_name(RUN_UNSUPPORTED), "unsupported") &&
		      run_result_parse("fine", &r) == -1 && run_result_parse("", &r) == -1,
	      "run result: names round-trip, unknown names refused");
}

int main(void)
{
	test_junit();
	test_json();
	test_limits();
	test_run_result();
	return check_exit();
}

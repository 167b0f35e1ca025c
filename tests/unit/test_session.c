/*
 * host/input/session.c: the input session on a run directory made here
 * (a hand-assembled loop, its trace from efipt synth), and every decoding
 * command reading its run directory once and decoding once.
 *
 * Linked with --wrap (mk/session.mk): every JSON parse (jansson's loaders)
 * and every decode (ptflow_decode) passes through the counters below.
 */
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "host/cmd/commands.h"
#include "host/input/session.h"
#include "host/util/opts.h"
#include "host/util/file_io.h"
#include "lib/test_files.h"

/* ---- counters ------------------------------------------------------------ */

enum { F_MANIFEST, F_IMAGES, F_MEMMAP, F_OTHER, NFILE };
static unsigned parses[NFILE];
static unsigned decodes;
static uint64_t decoded;	/* instructions the last decode went through */

static void count_path(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	parses[!strcmp(b, "manifest.json") ? F_MANIFEST
	       : !strcmp(b, "images.json") ? F_IMAGES
	       : !strcmp(b, "memmap.json") ? F_MEMMAP : F_OTHER]++;
}

json_t *__real_json_loadfd(int fd, size_t flags, json_error_t *error);
json_t *__wrap_json_loadfd(int fd, size_t flags, json_error_t *error);
json_t *__wrap_json_loadfd(int fd, size_t flags, json_error_t *error)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = 0;
	count_path(path);
	return __real_json_loadfd(fd, flags, error);
}

json_t *__real_json_load_file(const char *path, size_t flags, json_error_t *error);
json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error);
json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error)
{
	count_path(path);
	return __real_json_load_file(path, flags, error);
}

json_t *__real_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error);
json_t *__wrap_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error);
json_t *__wrap_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error)
{
	parses[F_OTHER]++; /* --images text */
	return __real_json_loadb(buf, len, flags, error);
}

long __real_ptflow_decode(struct ptflow_decoder *d, const uint8_t *buf, size_t size,
			  uint64_t base);
long __wrap_ptflow_decode(struct ptflow_decoder *d, const uint8_t *buf, size_t size,
			  uint64_t base);
long __wrap_ptflow_decode(struct ptflow_decoder *d, const uint8_t *buf, size_t size,
			  uint64_t base)
{
	decodes++;
	long e = __real_ptflow_decode(d, buf, size, base);
	decoded = d->stat.insns;
	return e;
}

static void reset(void)
{
	memset(parses, 0, sizeof(parses));
	decodes = 0;
}

/* ---- the run directory ----------------------------------------------------- */

static char dir[64], run[128];

/* Run a command with its standard output thrown away: its exit status. */
static int quiet(int (*cmd)(int, char **), const char *const *args)
{
	char *argv[16];
	int argc = 0;
	for (; args[argc]; argc++)
		argv[argc] = (char *)args[argc];
	argv[argc] = NULL;
	fflush(stdout);
	int saved = dup(1), null = open("/dev/null", O_WRONLY);
	dup2(null, 1);
	close(null);
	optind = 0; /* getopt_long's commands */
	int rc = cmd(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	return rc;
}

static int make_run(void)
{
	/* a loop with a call (core/pt_flow_check.c), one page at 0x1000 */
	static const uint8_t loop[] = { 0x31, 0xc0, 0xff, 0xc0, 0xe8, 0x07, 0x00, 0x00,
					0x00, 0x83, 0xf8, 0x10, 0x75, 0xf4, 0xff, 0xe3,
					0x85, 0xc0, 0x74, 0x02, 0x90, 0x90, 0xc3 };
	static uint8_t page[4096];
	memcpy(page, loop, sizeof(loop));
	snprintf(dir, sizeof(dir), "/tmp/efipt-test-session-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(run, sizeof(run), "%s/run", dir);
	if (mkdir(run, 0700) || tf_write(run, "mem-0000000000001000.bin", page, sizeof(page)))
		return -1;
	char raw[256], out[256];
	snprintf(raw, sizeof(raw), "%s/mem-0000000000001000.bin:0x1000", run);
	snprintf(out, sizeof(out), "%s/trace.pt", run);
	const char *synth[] = { "efipt synth", "--raw", raw, "--start", "0x1000", "--out", out,
				"--insns", "100000", NULL };
	int fd = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2); /* synth's summary */
	close(null);
	int rc = quiet(cmd_synth, synth);
	dup2(fd, 2);
	close(fd);
	struct stat st;
	if (rc || stat(out, &st))
		return -1;
	char manifest[1024];
	snprintf(manifest, sizeof(manifest),
		 "{\"format\":\"efipt-run\",\"format_version\":1,\"efipt_version\":\"0.1.0\","
		 "\"efipt_gitrev\":\"x\",\"run_id\":\"20260101-000000-000\","
		 "\"started\":\"2026-01-01T00:00:00\",\"command\":\"trace\","
		 "\"command_line\":\"trace --decode\",\"cpu\":{\"vendor\":\"GenuineIntel\","
		 "\"signature\":\"0x000506e3\",\"family\":6,\"model\":94,\"stepping\":3},"
		 "\"files\":[{\"name\":\"trace.pt\",\"size\":%lld,\"status\":\"written\"}],"
		 "\"status\":{\"result\":\"ok\",\"efi_status\":\"EFI_SUCCESS\",\"message\":\"traced\"}}",
		 (long long)st.st_size);
	return tf_write_text(run, "manifest.json", manifest) ||
			       tf_write_text(run, "memmap.json",
					  "{\"regions\":[{\"type\":\"LoaderCode\",\"phys\":\"0x1000\","
					  "\"pages\":1,\"attr\":\"0xf\",\"snapshot\":"
					  "\"mem-0000000000001000.bin\"}]}") ||
			       tf_write_text(run, "images.json",
					  "{\"images\":[{\"name\":\"loop.efi\",\"base\":\"0x1000\","
					  "\"size\":4096,\"code_type\":\"LoaderCode\",\"path\":\"\","
					  "\"pdb\":\"\",\"entry\":\"0x1000\"}]}")
		       ? -1
		       : 0;
}

/* ---- the session API -------------------------------------------------------- */

struct counts {
	uint64_t insns, batches, events;
	uint64_t done_at;	/* done once this many (0: never) */
	bool done;
};

static void on_batch(void *ctx, const struct ptflow_batch *b)
{
	struct counts *c = ctx;
	c->batches++;
	for (size_t i = 0; i < b->n; i++)
		c->insns += b->b[i].ninsn;
	if (c->done_at && c->insns >= c->done_at)
		c->done = true;
}

static void on_event(void *ctx, const struct ptflow_event *ev)
{
	struct counts *c = ctx;
	(void)ev;
	c->events++;
}

static const struct session_cmd no_rows = { "test", "", "", true, NULL, NULL, 0, NULL };

static void test_api(void)
{
	struct session s;
	char *operand;
	session_init(&s, "test");
	char *argv[] = { "efipt test", "--cpu", "0", run, NULL };
	CHECK(session_parse_args(&s, &no_rows, 4, argv, &operand) == OPTS_OK &&
		      operand && !strcmp(operand, run),
	      "session_parse_args: the run directory is the operand");
	reset();
	CHECK(session_open(&s, operand, SESSION_TRACE) == 0, "session_open: the run directory");
	CHECK(parses[F_MANIFEST] == 1 && parses[F_IMAGES] == 1 && parses[F_MEMMAP] == 1 &&
		      parses[F_OTHER] == 0,
	      "session_open: manifest.json, images.json, memmap.json parsed once each");
	CHECK(s.ntrace == 1 && s.trace[0].cpu == 0, "session_open: one trace, CPU 0");
	CHECK(s.images.n == 1 && !strcmp(s.images.v[0].name, "loop.efi") &&
		      s.images.v[0].base == 0x1000,
	      "session_open: the image of images.json");
	struct counts a = { 0 }, b = { 0 };
	struct flow_consumer c[2] = { { &a, on_batch, on_event, NULL, NULL, PTFLOW_TIME_NONE, 0, false, NULL },
				      { &b, on_batch, NULL, NULL, NULL, PTFLOW_TIME_NONE, 0, false, NULL } };
	long e = session_decode(&s, 0, c, 2);
	CHECK(e == 0, "session_decode: no decode errors");
	CHECK(decodes == 1, "session_decode: two consumers, one decode");
	CHECK(a.insns == 100000 && b.insns == 100000,
	      "session_decode: every consumer gets the 100000 instructions");
	CHECK(a.events > 0 && b.events == 0, "session_decode: events to who asks");
	/* until: enough after 1000 instructions */
	struct counts u = { 0 };
	struct flow_consumer cu = { &u, on_batch, NULL, NULL, NULL, PTFLOW_TIME_NONE, 1000, false, NULL };
	e = session_decode(&s, 0, &cu, 1);
	CHECK(e == 0 && u.insns >= 1000 && u.insns < 50000,
	      "session_decode: until stops decoding after its instructions");
	/* done: the consumer says when it has what it wanted (a window a
	 * function closed); one beside it that wants everything stops too */
	struct counts d = { .done_at = 2000 }, all = { 0 };
	struct flow_consumer cd[2] = { { &d, on_batch, NULL, NULL, NULL, PTFLOW_TIME_NONE, 0, false, &d.done },
				       { &all, on_batch, NULL, NULL, NULL, PTFLOW_TIME_NONE, 0, false, NULL } };
	e = session_decode(&s, 0, cd, 2);
	CHECK(e == 0 && d.done && d.insns >= 2000 && d.insns < 50000 && all.insns == d.insns,
	      "session_decode: done stops decoding, for every consumer");
	d = (struct counts){ .done_at = 0 };
	e = session_decode(&s, 0, cd, 1);
	CHECK(e == 0 && !d.done && d.insns == 100000,
	      "session_decode: a consumer never done gets the whole trace");
	session_free(&s);

	/* what cannot work is said, not guessed */
	session_init(&s, "test");
	char *bad[] = { "efipt test", "--pt", "x.pt", run, NULL };
	CHECK(session_parse_args(&s, &no_rows, 4, bad, &operand) == OPTS_OK,
	      "session_parse_args: --pt and a run directory parse");
	fflush(stderr);
	int fd = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	close(null);
	int r = session_open(&s, operand, SESSION_TRACE);
	dup2(fd, 2);
	close(fd);
	CHECK(r == -2, "session_open: --pt with a run directory is a usage error");
	session_free(&s);
	session_init(&s, "test");
	char *two[] = { "efipt test", run, run, NULL };
	fd = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	close(null);
	r = session_parse_args(&s, &no_rows, 3, two, &operand);
	dup2(fd, 2);
	close(fd);
	CHECK(r == OPTS_USAGE, "session_parse_args: two operands are a usage error");
	session_free(&s);
}

/* ---- every command: its inputs read once, the trace decoded once ------------ */

static void test_commands(void)
{
	char json[256], pft[256], drcov[256];
	snprintf(json, sizeof(json), "%s/t.json", dir);
	snprintf(pft, sizeof(pft), "%s/t.pftrace", dir);
	snprintf(drcov, sizeof(drcov), "%s/c.drcov", dir);
	static const char so[] = "build/efipt.so"; /* any ELF: no symbol matches */
	const struct {
		const char *name;
		int (*cmd)(int, char **);
		const char *args[8];
		unsigned decodes;
		bool window;	/* --to 1000: decoding stops there */
	} t[] = {
		{ "decode", cmd_decode, { "efipt decode", run }, 1, false },
		{ "decode --symbols", cmd_decode, { "efipt decode", run, "--symbols", so }, 1, false },
		{ "insn --stat", cmd_insn, { "efipt insn", "--run", run, "--stat" }, 1, false },
		{ "insn", cmd_insn, { "efipt insn", "--run", run, "--no-inst" }, 1, false },
		{ "top", cmd_top, { "efipt top", run }, 1, false },
		{ "flame", cmd_flame, { "efipt flame", run }, 1, false },
		{ "calls", cmd_calls, { "efipt calls", run }, 1, false },
		{ "timeline (JSON)", cmd_timeline, { "efipt timeline", run, "-o", json }, 1, false },
		{ "timeline (Perfetto)", cmd_timeline, { "efipt timeline", run, "-o", pft }, 1, false },
		{ "coverage", cmd_coverage, { "efipt coverage", run, "-o", drcov }, 1, false },
		{ "symbols", cmd_symbols, { "efipt symbols", run }, 0, false },
		{ "calls --to 1000", cmd_calls, { "efipt calls", run, "--to", "1000" }, 1, true },
		{ "timeline --to 1000", cmd_timeline, { "efipt timeline", run, "--to", "1000", "-o",
							json }, 1, true },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char name[128];
		reset();
		int fd = dup(2), null = open("/dev/null", O_WRONLY);
		dup2(null, 2);
		close(null);
		int rc = quiet(t[i].cmd, t[i].args);
		dup2(fd, 2);
		close(fd);
		snprintf(name, sizeof(name), "efipt %s: exit 0", t[i].name);
		CHECK(rc == 0, name);
		snprintf(name, sizeof(name), "efipt %s: the run directory parsed once", t[i].name);
		CHECK(parses[F_MANIFEST] == 1 && parses[F_IMAGES] == 1 && parses[F_MEMMAP] <= 1,
		      name);
		if (parses[F_MANIFEST] != 1 || parses[F_IMAGES] != 1 || parses[F_MEMMAP] > 1)
			printf("# manifest.json %u, images.json %u, memmap.json %u parses\n",
			       parses[F_MANIFEST], parses[F_IMAGES], parses[F_MEMMAP]);
		snprintf(name, sizeof(name), "efipt %s: %s", t[i].name,
			 t[i].decodes ? "one decode" : "no decode");
		CHECK(decodes == t[i].decodes, name);
		if (decodes != t[i].decodes)
			printf("# %u decodes\n", decodes);
		if (!t[i].decodes)
			continue;
		snprintf(name, sizeof(name), "efipt %s: %s", t[i].name,
			 t[i].window ? "decoding stops after the window" : "the whole trace decoded");
		CHECKF(t[i].window ? decoded >= 1000 && decoded < 50000 : decoded == 100000, name,
		       "%llu instructions decoded", (unsigned long long)decoded);
	}
}

int main(void)
{
	if (make_run()) {
		CHECK(0, "a run directory to test on");
		return check_exit();
	}
	test_api();
	test_commands();
	if (remove_tree(dir))
		printf("# %s left behind\n", dir);
	return check_exit();
}

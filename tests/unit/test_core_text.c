/* Text helpers of core/: sb_printf, the command-line splitter, cpuid -r text. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/cmdline.h"
#include "core/cpuid_set.h"
#include "core/strbuf.h"

static void check_printf(void)
{
	/* compare with the C library's printf on the same formats */
	static const struct {
		const char *fmt;
		long long v;
	} cases[] = {
		{ "%d", -42 }, { "%5d", -42 }, { "%-5d|", 7 }, { "%05d", -42 }, { "%u", 0 },
		{ "%x", 0xbeef }, { "%08x", 0x1f }, { "%X", 0xabc }, { "%llx", -1 },
		{ "%lld", -9223372036854775807LL - 1 }, { "%016llx", 0x123 }, { "%llu", -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[64], got[64];
		struct strbuf sb;
		sb_init(&sb, got, sizeof(got));
		if (strstr(cases[i].fmt, "ll")) {
			snprintf(want, sizeof(want), cases[i].fmt, cases[i].v);
			sb_printf(&sb, cases[i].fmt, cases[i].v);
		} else {
			snprintf(want, sizeof(want), cases[i].fmt, (int)cases[i].v);
			sb_printf(&sb, cases[i].fmt, (int)cases[i].v);
		}
		char name[64];
		snprintf(name, sizeof(name), "sb_printf \"%s\"", cases[i].fmt);
		CHECKF(!strcmp(want, got), name, "want '%s' got '%s'", want, got);
	}
	char small[8];
	struct strbuf sb;
	sb_init(&sb, small, sizeof(small));
	sb_printf(&sb, "%s=%zu", "abcdef", (size_t)12345);
	CHECK(sb.truncated && !strcmp(small, "abcdef=") && sb.len == 7,
	      "sb_printf truncates, terminates, remembers");
	char js[64];
	sb_init(&sb, js, sizeof(js));
	sb_json_escape(&sb, "a\"b\\c\n\x01");
	CHECKF(!strcmp(js, "a\\\"b\\\\c\\n\\u0001"), "sb_json_escape", "'%s'", js);
}

static void check_cmdline(void)
{
	char buf[200];
	char *argv[8];
	strcpy(buf, "  efipt.efi caps  --shutdown\t\"a b\" x\"y z\"w \"q\\\"t\"  ");
	int n = cmdline_split(buf, argv, 8);
	CHECKF(n == 6 && !strcmp(argv[0], "efipt.efi") && !strcmp(argv[1], "caps") &&
		       !strcmp(argv[2], "--shutdown") && !strcmp(argv[3], "a b") &&
		       !strcmp(argv[4], "xy zw") && !strcmp(argv[5], "q\"t") && argv[6] == NULL,
	       "cmdline: blanks, quotes, escapes", "n=%d", n);
	strcpy(buf, "# a comment line\ncaps # trailing\n--reboot\n");
	n = cmdline_split(buf, argv, 8);
	CHECKF(n == 2 && !strcmp(argv[0], "caps") && !strcmp(argv[1], "--reboot"),
	       "cmdline: comments in efipt.args", "n=%d", n);
	strcpy(buf, "a \"unterminated");
	CHECK(cmdline_split(buf, argv, 8) == CMDLINE_UNTERMINATED, "cmdline: unclosed quote");
	strcpy(buf, "1 2 3 4 5 6 7 8 9");
	CHECK(cmdline_split(buf, argv, 8) == CMDLINE_TOO_MANY, "cmdline: too many words");
	strcpy(buf, "");
	CHECK(cmdline_split(buf, argv, 8) == 0 && argv[0] == NULL, "cmdline: empty");
	/* efipt.args: the command line without its comments, on one line */
	static const char file[] = "# rig 7: nightly\r\n  trace --decode \"a  #b\\\"\"  # why\n"
				   "\t--shutdown\n# \xc3\xa9t\xc3\xa9 (UTF-8 in a comment)\n";
	char line[64];
	size_t bad = 99;
	n = cmdline_uncomment(file, sizeof(file) - 1, line, sizeof(line), &bad);
	CHECKF(n == (int)strlen(line) && !strcmp(line, "trace --decode \"a  #b\\\"\" --shutdown"),
	       "cmdline_uncomment: comments dropped, lines joined, quotes kept", "n=%d '%s'", n,
	       line);
	n = cmdline_uncomment(file, sizeof(file) - 1, line, 36, &bad);
	CHECKF(n == 35, "cmdline_uncomment: comments do not count against the size", "n=%d", n);
	CHECK(cmdline_uncomment(file, sizeof(file) - 1, line, 35, &bad) == CMDLINE_TOO_LONG,
	      "cmdline_uncomment: a line that does not fit is refused");
	CHECK(cmdline_uncomment("caps \xc3\xa9", 7, line, sizeof(line), &bad) == CMDLINE_NOT_ASCII &&
		      bad == 5,
	      "cmdline_uncomment: non-ASCII outside a comment, with its offset");
	CHECK(cmdline_uncomment("caps\x01", 5, line, sizeof(line), &bad) == CMDLINE_NOT_ASCII &&
		      bad == 4,
	      "cmdline_uncomment: control byte refused");
	CHECK(cmdline_uncomment("  # only\n\n", 10, line, sizeof(line), &bad) == 0 && !line[0],
	      "cmdline_uncomment: only comments: empty line");
	/* the options a rig relies on, from bytes that are no command line */
	static const char *const words[] = { "--shutdown", "--reboot", "--debugcon" };
	static const char bin[] = "caps\0\x01--debugcon\xff --shutdown #--reboot";
	CHECKF(cmdline_salvage(bin, sizeof(bin) - 1, 0, 1, words, 3) == 1,
	       "cmdline_salvage: words between NULs, comment at the end without a newline",
	       "0x%x", cmdline_salvage(bin, sizeof(bin) - 1, 0, 1, words, 3));
	static const char u16[] = "\xff\xfe-\0-\0r\0e\0b\0o\0o\0t\0 \0#\0x\0";
	CHECK(cmdline_salvage(u16, sizeof(u16) - 1, 2, 2, words, 3) == 2,
	      "cmdline_salvage: UTF-16LE, every second byte");
	static const char after[] = "trace -- app.efi --shutdown\n--debugcon";
	CHECK(cmdline_salvage(after, sizeof(after) - 1, 0, 1, words, 3) == 0,
	      "cmdline_salvage: nothing after a \"--\" (the traced image's)");
	CHECK(cmdline_salvage("--shutdownx --reboot", 20, 0, 1, words, 3) == 2 &&
		      cmdline_salvage("# only a comment", 16, 0, 1, words, 3) == 0 &&
		      cmdline_salvage("--reboot", 8, 9, 1, words, 3) == 0,
	      "cmdline_salvage: whole words only; empty input");
	CHECK(cmdline_is_image_name("FS0:\\EFI\\BOOT\\BOOTX64.EFI") &&
		      cmdline_is_image_name("efipt.efi") && !cmdline_is_image_name("caps") &&
		      !cmdline_is_image_name("efi"),
	      "cmdline: image name detection");
}

static void check_cpuidtxt(void)
{
	static const char text[] =
		"# comment\n"
		"CPU 0:\n"
		"   0x00000000 0x00: eax=0x00000016 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
		"   0x00000014 0x01: eax=0x02490002 ebx=0x003f3fff ecx=0x00000000 edx=0x00000000\r\n"
		"   0x00000014 0x00: eax=0x00000001 ebx=0x0000000f ecx=0x00000007 edx=0x00000000\n"
		"CPU 1:\n"
		"   0x00000000 0x00: eax=0x0000001f ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n";
	static struct cpuid_set s, s2;
	unsigned line;
	int err = cpuidtxt_parse(&s, text, sizeof(text) - 1, 0, &line);
	uint32_t r[4];
	CHECK(err == 0 && s.n == 3 && cpuid_set_get(&s, 0x14, 1, r) && r[0] == 0x02490002 &&
		      r[1] == 0x003f3fff,
	      "cpuidtxt: parse CPU 0 block (CRLF too)");
	CHECK(s.e[1].leaf == 0x14 && s.e[1].subleaf == 0, "cpuidtxt: leaves kept sorted");
	err = cpuidtxt_parse(&s2, text, sizeof(text) - 1, 1, &line);
	CHECK(err == 0 && s2.n == 1 && s2.e[0].r[0] == 0x1f, "cpuidtxt: select CPU 1 block");
	CHECK(cpuidtxt_parse(&s2, text, sizeof(text) - 1, 2, &line) == CPUIDTXT_NO_CPU,
	      "cpuidtxt: missing CPU block");
	/* round trip through the writer */
	char out[4096];
	struct strbuf sb;
	sb_init(&sb, out, sizeof(out));
	cpuidtxt_write(&s, &sb);
	err = cpuidtxt_parse(&s2, out, sb.len, 0, &line);
	CHECK(err == 0 && s2.n == s.n && !memcmp(s2.e, s.e, s.n * sizeof(s.e[0])),
	      "cpuidtxt: write then parse gives the same set");
	static const char *const bad[] = {
		"CPU:\n   0x00000000 0x00: eax=0x1 ebx=0x2 ecx=0x3\n",             /* no edx */
		"CPU:\n   0x00000000 0x00: eax=0x1 ebx=0x2 ecx=0x3 edx=0x123456789\n", /* 9 digits */
		"CPU:\n   0x00000000 0x00 eax=0x1 ebx=0x2 ecx=0x3 edx=0x4\n",     /* no colon */
		"CPU:\n   0x00000000 0x00: eax=0x1 ebx=0x2 ecx=0x3 edx=0x4 junk\n",
		"CPU:\nhello\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char name[48];
		snprintf(name, sizeof(name), "cpuidtxt: reject malformed line %zu", i);
		err = cpuidtxt_parse(&s2, bad[i], strlen(bad[i]), 0, &line);
		CHECKF(err == CPUIDTXT_SYNTAX && line == 2, name, "err=%d line=%u", err, line);
	}
	/* the same leaf twice in one block: refused at the second line, not
	 * silently replaced; in another block it is a different CPU */
	static const char dup[] =
		"CPU 0:\n"
		"   0x00000007 0x00: eax=0x0 ebx=0x02000000 ecx=0x0 edx=0x0\n"
		"   0x00000000 0x00: eax=0x14 ebx=0x0 ecx=0x0 edx=0x0\n"
		"   0x00000007 0x00: eax=0x0 ebx=0x0 ecx=0x0 edx=0x0\n"
		"CPU 1:\n"
		"   0x00000007 0x00: eax=0x0 ebx=0x0 ecx=0x0 edx=0x0\n";
	err = cpuidtxt_parse(&s2, dup, sizeof(dup) - 1, 0, &line);
	CHECKF(err == CPUIDTXT_DUPLICATE && line == 4, "cpuidtxt: duplicate leaf refused",
	       "err=%d line=%u", err, line);
	err = cpuidtxt_parse(&s2, dup, sizeof(dup) - 1, 1, &line);
	CHECKF(err == 0 && s2.n == 1, "cpuidtxt: the same leaf in another block is fine",
	       "err=%d", err);
	/* a set that is full reports it instead of overflowing */
	static char big[CPUID_SET_MAX * 90 + 200];
	struct strbuf bb;
	sb_init(&bb, big, sizeof(big));
	sb_puts(&bb, "CPU:\n");
	for (unsigned i = 0; i <= CPUID_SET_MAX; i++)
		sb_printf(&bb, "0x%08x 0x00: eax=0x0 ebx=0x0 ecx=0x0 edx=0x0\n", i);
	err = cpuidtxt_parse(&s2, big, bb.len, 0, &line);
	CHECKF(err == CPUIDTXT_FULL && line == CPUID_SET_MAX + 2, "cpuidtxt: too many leaves",
	       "err=%d line=%u", err, line);
}

int main(void)
{
	check_printf();
	check_cmdline();
	check_cpuidtxt();
	return check_exit();
}

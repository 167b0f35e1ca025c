/*
 * Linux kernel symbols (host/symbols/kernsyms.c): System.map and
 * /proc/kallsyms lines (text symbols only, module symbols and data left
 * out, aliases as one function, garbage lines skipped, all-zero addresses
 * refused with the reason); the image the analyses get (ranges up to the
 * next symbol, _etext); the KASLR slide found from a trace whose TIPs go to
 * function entries moved by a slide, and no slide claimed where the trace
 * does not point at the kernel or no candidate stands out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/pt_pkt.h"
#include "host/symbols/kernsyms.h"

static const char map_text[] =
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000070 T secondary_startup_64\n"
	"ffffffff81000100 t verify_cpu\n"
	"ffffffff81001000 W weak_fn\n"
	"ffffffff81001100 D some_data\n"
	"this is not a symbol line\n"
	"ffffffff81001200 T do_one_initcall\n"
	"ffffffffc0000000 t mod_fn\t[some_module]\n"
	"ffffffff81002000 T _etext\n";

static char *write_tmp(const char *text)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/efipt-kernsyms-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return NULL;
	close(fd);
	return path;
}

/* A trace: PSB+, then a TIP to each address (IPBytes 6: full 8 bytes). */
static size_t trace_to(uint8_t *out, size_t cap, const uint64_t *ip, size_t n)
{
	size_t o = 0;
	struct ptpkt p;
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_psb;
	o += (size_t)ptpkt_encode(out + o, cap - o, &p);
	p.type = ptpkt_psbend;
	o += (size_t)ptpkt_encode(out + o, cap - o, &p);
	for (size_t i = 0; i < n; i++) {
		memset(&p, 0, sizeof(p));
		p.type = ptpkt_tip;
		p.u.ip.ipc = 6;
		p.u.ip.ip = ip[i];
		o += (size_t)ptpkt_encode(out + o, cap - o, &p);
	}
	return o;
}

int main(void)
{
	char err[4400];
	struct kernsyms k;
	char *path = write_tmp(map_text);
	if (!CHECK(path && kernsyms_read(&k, path, err, sizeof(err)) == 0, "map: read"))
		return check_exit();
	/* text symbols: _text/startup_64 (alias), secondary_startup_64, verify_cpu,
	 * weak_fn, do_one_initcall, _etext; not the data, the A symbol, the module's */
	CHECKF(k.n == 7, "map: text symbols only (no data, absolute or module symbols)", "%zu", k.n);
	CHECK(k.text_lo == 0xffffffff81000000ull && k.text_hi == 0xffffffff81002000ull,
	      "map: the text from _text to _etext");
	struct image im;
	CHECK(kernsyms_image(&k, 0x2400000, &im) == 0, "image: made");
	CHECK(!strcmp(im.name, "vmlinux") && im.base == 0xffffffff83400000ull && im.size == 0x2000,
	      "image: vmlinux at the text moved by the slide");
	const struct symfunc *f = symfile_func(im.sf, 0x80);
	CHECKF(f && !strcmp(f->name, "secondary_startup_64") && f->lo == 0x70 && f->hi == 0x100,
	       "image: a function runs to the next symbol", "%s", f ? f->name : "none");
	f = symfile_func(im.sf, 0x10);
	CHECKF(f && (!strcmp(f->name, "startup_64") || !strcmp(f->name, "_text")) && f->lo == 0,
	       "image: an alias is one function", "%s", f ? f->name : "none");
	f = symfile_func(im.sf, 0x1150);
	CHECKF(f && !strcmp(f->name, "weak_fn"), "image: data symbols do not cut functions",
	       "%s", f ? f->name : "none");
	CHECK(im.sf->from_map && im.how == SYMHOW_MAP, "image: names only, like a map");

	/* the slide from a trace */
	static uint8_t tr[4096];
	uint64_t slide;
	unsigned hits;
	uint64_t ips[] = { 0xffffffff81000070, 0xffffffff81000100, 0xffffffff81001200,
			   0xffffffff81001000, 0xffffffff81000070, 0xffffffff81001234 };
	for (size_t i = 0; i < 6; i++)
		ips[i] += 0x16a00000;
	size_t n = trace_to(tr, sizeof(tr), ips, 6);
	int rc = kernsyms_find_slide(&k, tr, n, &slide, &hits, err, sizeof(err));
	CHECKF(rc == 0 && slide == 0x16a00000 && hits == 5, "slide: found from the branch targets",
	       "rc %d slide 0x%llx hits %u: %s", rc, (unsigned long long)slide, hits, err);
	uint64_t low[] = { 0x1000, 0x2000, 0x3000 };
	n = trace_to(tr, sizeof(tr), low, 3);
	rc = kernsyms_find_slide(&k, tr, n, &slide, &hits, err, sizeof(err));
	CHECKF(rc && strstr(err, "no address in the kernel"), "slide: none without kernel targets",
	       "%s", err);
	uint64_t few[] = { 0xffffffff81000070, 0xffffffff88888888 };
	n = trace_to(tr, sizeof(tr), few, 2);
	rc = kernsyms_find_slide(&k, tr, n, &slide, &hits, err, sizeof(err));
	CHECKF(rc && strstr(err, "stands out"), "slide: none claimed from too little evidence",
	       "%s", err);
	symfile_close(im.sf);
	free(im.sf);
	kernsyms_free(&k);
	unlink(path);

	path = write_tmp("0000000000000000 T startup_64\n0000000000000000 t verify_cpu\n");
	rc = kernsyms_read(&k, path, err, sizeof(err));
	CHECKF(rc && strstr(err, "without root"), "kallsyms read without root: refused, says why",
	       "%s", err);
	unlink(path);
	path = write_tmp("hello\nworld\n");
	rc = kernsyms_read(&k, path, err, sizeof(err));
	CHECKF(rc && strstr(err, "not a System.map"), "not a map: refused", "%s", err);
	unlink(path);
	/* what Debian's linux-image package has as /boot/System.map-VERSION */
	path = write_tmp("ffffffffffffffff B The real System.map is in the "
			 "linux-image-<version>-dbg package\n");
	rc = kernsyms_read(&k, path, err, sizeof(err));
	CHECKF(rc && strstr(err, "no text symbols"), "Debian's stub System.map: refused, says why",
	       "%s", err);
	unlink(path);
	return check_exit();
}

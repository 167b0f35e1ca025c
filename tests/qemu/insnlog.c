/*
 * Test-only QEMU plugin: the independent record of an execution that the
 * efipt-qemu.so trace is compared with. Writes the linear address of every
 * instruction CPU 0 executes to FILE (not "file=": QEMU takes that as the plugin path), 8 bytes little-endian each, and with
 * limit=N ends QEMU (exit status 0) after N of them; skip=N leaves the
 * first N out of the file (one per execution callback: a REP loop makes one
 * per iteration); from=marker starts at the first start marker instead;
 * to=marker ends the record before the first stop marker (QEMU runs on).
 * head=N writes only the first N addresses (after skip) and counts on:
 * count=FILE gets, when QEMU ends, "callbacks N executed I last A next X":
 * I counts the instructions that ran, a run of callbacks at one address
 * once (as the comparison does; with limit=N not the N-th, exit() comes
 * before it), A is the last that ran, X the address of the limit=N-th
 * callback's instruction (0 without limit=); a whole boot is checked without a file of
 * 10^9 addresses. cpus=all records every other vCPU N too, all it runs,
 * in FILE.cpuN (created when it first runs). from=traceen records CPU 0
 * while the guest's own WRMSRs have IA32_RTIT_CTL.TraceEn (ECX 570H, EAX
 * bit 0) set: from the instruction after the WRMSR that sets it to the one
 * before the WRMSR that clears it (QEMU 9 on: registers), every such span.
 * An INT n or a UD (#UD) is
 * recorded, as its callback runs, though the trace does not count it as
 * executed (insnlog_cmp.py says how the two differ).
 *
 *   -plugin build/tests/insnlog.so,out=FILE[,skip=N|from=marker|from=traceen][,to=marker][,limit=N]
 *           [,head=N][,count=FILE][,cpus=all]
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin/plugin_api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static FILE *out;
static const char *count_file;
static uint64_t count, limit, skip, head = UINT64_MAX, distinct, last_addr = UINT64_MAX;
static uint64_t limit_addr;	/* limit=N: the N-th callback's, which did not run */
static bool from_marker, to_marker, logging = true, ended, all_cpus;
static bool from_traceen, traceen_next;	/* from=traceen; TraceEn set by the WRMSR now running */
static struct papi_regs regs0;	/* CPU 0's */
static const char *out_path;

/* vCPUs other than 0 (cpus=all): each runs on its own thread (MTTCG) */
#define MAX_CPUS 64
static struct other_cpu {
	pthread_mutex_t lock;	/* its writes against the close at exit */
	FILE *f;
	bool failed, closed;
} others[MAX_CPUS];

static void log_other(unsigned int vcpu, uint64_t a)
{
	if (vcpu >= MAX_CPUS)
		return;
	struct other_cpu *o = &others[vcpu];
	pthread_mutex_lock(&o->lock);
	if (!o->f && !o->failed && !o->closed) {
		char path[4200];
		snprintf(path, sizeof(path), "%s.cpu%u", out_path, vcpu);
		o->f = fopen(path, "wb");
		o->failed = !o->f;
		if (o->failed)
			fprintf(stderr, "insnlog: cannot create %s\n", path);
	}
	if (o->f)
		fwrite(&a, sizeof(a), 1, o->f);
	pthread_mutex_unlock(&o->lock);
}

static void close_others(void)
{
	for (unsigned i = 1; i < MAX_CPUS; i++) {
		pthread_mutex_lock(&others[i].lock);
		if (others[i].f)
			fclose(others[i].f);
		others[i].f = NULL;
		others[i].closed = true;
		pthread_mutex_unlock(&others[i].lock);
	}
}
/* the start marker (docs/format.md), recognised here on its own */
static const uint8_t start_marker[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x45, 0x50, 0x54, 0x31 };
static const uint8_t stop_marker[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x45, 0x50, 0x54, 0x30 };

static void write_count(void)
{
	FILE *f = count_file ? fopen(count_file, "w") : NULL;
	if (!f)
		return;
	fprintf(f, "callbacks %llu executed %llu last 0x%llx next 0x%llx\n",
		(unsigned long long)(count > skip ? count - skip : 0), (unsigned long long)distinct,
		(unsigned long long)last_addr, (unsigned long long)limit_addr);
	fclose(f);
	count_file = NULL;
}

static void on_insn(unsigned int vcpu, void *ud)
{
	uint64_t a = (uint64_t)(uintptr_t)ud;
	if (vcpu != 0 && all_cpus)
		log_other(vcpu, a);
	if (vcpu == 0 && traceen_next) {
		traceen_next = false;
		logging = true;
		return; /* the WRMSR itself: not recorded */
	}
	if (vcpu != 0 || !out || !logging)
		return;
	bool fresh = a != last_addr;
	uint64_t before = last_addr;
	if (count++ >= skip) {
		if (count - skip <= head)
			fwrite(&a, sizeof(a), 1, out);
		distinct += fresh;
		last_addr = a;
	}
	if (count == limit) {
		/* exit() runs QEMU's atexit work, other plugins' included; the
		 * instruction of this callback does not run */
		fclose(out);
		out = NULL;
		limit_addr = a;
		if (count > skip) {
			distinct -= fresh;
			last_addr = before;
		}
		write_count();
		close_others();
		exit(0);
	}
}

static void on_start_marker(unsigned int vcpu, void *ud)
{
	if (vcpu == 0 && !ended)
		logging = true;
	on_insn(vcpu, ud);
}

static void on_stop_marker(unsigned int vcpu, void *ud)
{
	if (vcpu == 0 && logging) {
		logging = false;
		ended = true;
		fflush(out);
	}
	(void)ud;
}

/* from=traceen: before a WRMSR runs (registered before on_insn) */
static void on_wrmsr(unsigned int vcpu, void *ud)
{
	uint64_t rcx, rax;
	(void)ud;
	if (vcpu != 0 || !papi_reg(&regs0, PAPI_RCX, &rcx) || !papi_reg(&regs0, PAPI_RAX, &rax) ||
	    (uint32_t)rcx != 0x570)
		return;
	if (rax & 1) {
		traceen_next = !logging; /* from the next instruction on */
	} else if (logging) {
		logging = false;
		fflush(out);
	}
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	(void)id;
	if (vcpu == 0 && !papi_regs_find(&regs0))
		fprintf(stderr, "insnlog: from=traceen: QEMU names no rcx/rax\n");
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	for (size_t i = 0; i < qemu_plugin_tb_n_insns(tb); i++) {
		struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
		uint8_t bytes[16];
		size_t len = papi_insn_bytes(in, bytes);
		if (from_traceen && len >= 2 && bytes[len - 2] == 0x0f && bytes[len - 1] == 0x30)
			qemu_plugin_register_vcpu_insn_exec_cb(in, on_wrmsr, papi_cb_flags(true), NULL);
		bool eight = len == sizeof(start_marker);
		bool marker = eight && !memcmp(bytes, start_marker, 8);
		bool stop = eight && !memcmp(bytes, stop_marker, 8);
		qemu_plugin_register_vcpu_insn_exec_cb(
			in, marker && from_marker ? on_start_marker
			    : stop && to_marker   ? on_stop_marker
						  : on_insn,
			QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)qemu_plugin_insn_vaddr(in));
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *ud)
{
	(void)id;
	(void)ud;
	if (out)
		fclose(out);
	out = NULL;
	write_count();
	close_others();
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	(void)info;
	const char *file = NULL;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			file = argv[i] + 4;
		else if (!strcmp(argv[i], "from=marker"))
			from_marker = true, logging = false;
		else if (!strcmp(argv[i], "from=traceen") && PAPI_REGS)
			from_traceen = true, logging = false;
		else if (!strcmp(argv[i], "to=marker"))
			to_marker = true;
		else if (!strncmp(argv[i], "skip=", 5))
			skip = strtoull(argv[i] + 5, NULL, 0);
		else if (!strncmp(argv[i], "limit=", 6))
			limit = strtoull(argv[i] + 6, NULL, 0);
		else if (!strncmp(argv[i], "head=", 5))
			head = strtoull(argv[i] + 5, NULL, 0);
		else if (!strncmp(argv[i], "count=", 6))
			count_file = argv[i] + 6;
		else if (!strcmp(argv[i], "cpus=all"))
			all_cpus = true;
		else {
			fprintf(stderr, "insnlog: unknown argument '%s'\n", argv[i]);
			return -1;
		}
	}
	for (unsigned c = 0; c < MAX_CPUS; c++)
		pthread_mutex_init(&others[c].lock, NULL);
	out_path = file;
	if (!file || !(out = fopen(file, "wb"))) {
		fprintf(stderr, "insnlog: out=PATH missing or not writable\n");
		return -1;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	if (from_traceen)
		qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}

/*
 * Packet layer tests: SDM byte vectors (Intel SDM Vol. 3C 33.4.2), IP
 * reconstruction (Table 33-18), encode/decode round trips, sync, blocks,
 * and robustness against random, cut and misaligned input.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/pt_pkt.h"
#include "lib/ptpkt_gen.h"

struct vec {
	const char *name;
	unsigned block;
	int ret;              /* size, or negative error */
	struct ptpkt want;
	uint8_t len;
	uint8_t b[16];
};

#define PSB16 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, \
	      0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82

/* Hand-assembled from the packet format tables of 33.4.2. */
static const struct vec vecs[] = {
	{ "pad", 0, 1, { .type = ptpkt_pad, .size = 1 }, 1, { 0x00 } },
	{ "psb", 0, 16, { .type = ptpkt_psb, .size = 16 }, 16, { PSB16 } },
	{ "psbend", 0, 2, { .type = ptpkt_psbend, .size = 2 }, 2, { 0x02, 0x23 } },
	{ "tnt8 1 bit taken", 0, 1, { .type = ptpkt_tnt8, .size = 1, .u.tnt = { 1, 1 } }, 1, { 0x06 } },
	{ "tnt8 1 bit not taken", 0, 1, { .type = ptpkt_tnt8, .size = 1, .u.tnt = { 1, 0 } }, 1, { 0x04 } },
	/* 1 B1..B6 0 with B1 = 1, B6 = 0: 1 1 0 1 0 1 0 0 */
	{ "tnt8 6 bits", 0, 1, { .type = ptpkt_tnt8, .size = 1, .u.tnt = { 6, 0x2a } }, 1, { 0xd4 } },
	{ "tnt64 47 bits", 0, 8, { .type = ptpkt_tnt64, .size = 8, .u.tnt = { 47, 0x7fffffff0001ull } },
	  8, { 0x02, 0xa3, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff } },
	{ "tnt64 partial 24 bits", 0, 8, { .type = ptpkt_tnt64, .size = 8, .u.tnt = { 24, 0x800001 } },
	  8, { 0x02, 0xa3, 0x01, 0x00, 0x80, 0x01, 0x00, 0x00 } },
	{ "tnt64 no stop bit", 0, -ptpkt_err_bad_packet, { 0 }, 8, { 0x02, 0xa3 } },
	{ "tip ipc0", 0, 1, { .type = ptpkt_tip, .size = 1, .u.ip = { 0, 0 } }, 1, { 0x0d } },
	{ "tip ipc1", 0, 3, { .type = ptpkt_tip, .size = 3, .u.ip = { 1, 0x1234 } }, 3, { 0x2d, 0x34, 0x12 } },
	{ "tip ipc2", 0, 5, { .type = ptpkt_tip, .size = 5, .u.ip = { 2, 0xdeadbeef } },
	  5, { 0x4d, 0xef, 0xbe, 0xad, 0xde } },
	{ "tip ipc3", 0, 7, { .type = ptpkt_tip, .size = 7, .u.ip = { 3, 0x800000001000ull } },
	  7, { 0x6d, 0x00, 0x10, 0x00, 0x00, 0x00, 0x80 } },
	{ "tip ipc4", 0, 7, { .type = ptpkt_tip, .size = 7, .u.ip = { 4, 0x123456789abcull } },
	  7, { 0x8d, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12 } },
	{ "tip ipc5 reserved", 0, -ptpkt_err_bad_packet, { 0 }, 7, { 0xad, 1, 2, 3, 4, 5, 6 } },
	{ "tip ipc6", 0, 9, { .type = ptpkt_tip, .size = 9, .u.ip = { 6, 0xffffffff81000000ull } },
	  9, { 0xcd, 0x00, 0x00, 0x00, 0x81, 0xff, 0xff, 0xff, 0xff } },
	{ "tip ipc7 reserved", 0, -ptpkt_err_bad_packet, { 0 }, 9, { 0xed } },
	{ "tip.pge ipc3", 0, 7, { .type = ptpkt_tip_pge, .size = 7, .u.ip = { 3, 0x7fff00001000ull } },
	  7, { 0x71, 0x00, 0x10, 0x00, 0x00, 0xff, 0x7f } },
	{ "tip.pgd ipc0", 0, 1, { .type = ptpkt_tip_pgd, .size = 1, .u.ip = { 0, 0 } }, 1, { 0x01 } },
	{ "tip.pgd ipc1", 0, 3, { .type = ptpkt_tip_pgd, .size = 3, .u.ip = { 1, 0xabcd } }, 3, { 0x21, 0xcd, 0xab } },
	{ "fup ipc6", 0, 9, { .type = ptpkt_fup, .size = 9, .u.ip = { 6, 0x0807060504030201ull } },
	  9, { 0xdd, 1, 2, 3, 4, 5, 6, 7, 8 } },
	{ "fup ipc2", 0, 5, { .type = ptpkt_fup, .size = 5, .u.ip = { 2, 0x04030201 } }, 5, { 0x5d, 1, 2, 3, 4 } },
	/* CR3[11:5] in byte 2 bits 7:1, NR in bit 0. */
	{ "pip nr", 0, 8, { .type = ptpkt_pip, .size = 8, .u.pip = { 0x000fedcba9876fe0ull, 1 } },
	  8, { 0x02, 0x43, 0xff, 0x76, 0x98, 0xba, 0xdc, 0xfe } },
	{ "pip", 0, 8, { .type = ptpkt_pip, .size = 8, .u.pip = { 0x1000, 0 } },
	  8, { 0x02, 0x43, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00 } },
	{ "mode.exec 64-bit", 0, 2, { .type = ptpkt_mode_exec, .size = 2, .u.mode_exec = { 1, 0, 0 } }, 2, { 0x99, 0x01 } },
	{ "mode.exec 32-bit if", 0, 2, { .type = ptpkt_mode_exec, .size = 2, .u.mode_exec = { 0, 1, 1 } }, 2, { 0x99, 0x06 } },
	{ "mode.exec reserved bits", 0, 2, { .type = ptpkt_mode_exec, .size = 2, .u.mode_exec = { 0, 0, 0 } }, 2, { 0x99, 0x18 } },
	{ "mode.tsx intx", 0, 2, { .type = ptpkt_mode_tsx, .size = 2, .u.mode_tsx = { 1, 0 } }, 2, { 0x99, 0x21 } },
	{ "mode.tsx abort", 0, 2, { .type = ptpkt_mode_tsx, .size = 2, .u.mode_tsx = { 0, 1 } }, 2, { 0x99, 0x22 } },
	{ "mode leaf 2", 0, -ptpkt_err_bad_packet, { 0 }, 2, { 0x99, 0x40 } },
	{ "mode leaf 7", 0, -ptpkt_err_bad_packet, { 0 }, 2, { 0x99, 0xe0 } },
	{ "tracestop", 0, 2, { .type = ptpkt_stop, .size = 2 }, 2, { 0x02, 0x83 } },
	{ "cbr, reserved byte set", 0, 4, { .type = ptpkt_cbr, .size = 4, .u.cbr = { 0x2a } }, 4, { 0x02, 0x03, 0x2a, 0xff } },
	{ "tsc", 0, 8, { .type = ptpkt_tsc, .size = 8, .u.tsc = { 0x07060504030201ull } }, 8, { 0x19, 1, 2, 3, 4, 5, 6, 7 } },
	{ "mtc", 0, 2, { .type = ptpkt_mtc, .size = 2, .u.mtc = { 0xa5 } }, 2, { 0x59, 0xa5 } },
	{ "tma", 0, 7, { .type = ptpkt_tma, .size = 7, .u.tma = { 0x1234, 0x1ff } },
	  7, { 0x02, 0x73, 0x34, 0x12, 0x00, 0xff, 0x01 } },
	{ "tma reserved bits", 0, 7, { .type = ptpkt_tma, .size = 7, .u.tma = { 0x0001, 0x080 } },
	  7, { 0x02, 0x73, 0x01, 0x00, 0xff, 0x80, 0xfe } },
	{ "vmcs", 0, 7, { .type = ptpkt_vmcs, .size = 7, .u.vmcs = { 0xfedcba9876000ull } },
	  7, { 0x02, 0xc8, 0x76, 0x98, 0xba, 0xdc, 0xfe } },
	{ "ovf", 0, 2, { .type = ptpkt_ovf, .size = 2 }, 2, { 0x02, 0xf3 } },
	{ "mnt", 0, 11, { .type = ptpkt_mnt, .size = 11, .u.mnt = { 0x8877665544332211ull } },
	  11, { 0x02, 0xc3, 0x88, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 } },
	{ "mnt bad ext2", 0, -ptpkt_err_bad_opc, { 0 }, 11, { 0x02, 0xc3, 0x89 } },
	{ "ptw 4", 0, 6, { .type = ptpkt_ptw, .size = 6, .u.ptw = { 4, 0, 0xdeadbeef } },
	  6, { 0x02, 0x12, 0xef, 0xbe, 0xad, 0xde } },
	{ "ptw 4 ip", 0, 6, { .type = ptpkt_ptw, .size = 6, .u.ptw = { 4, 1, 0x01020304 } },
	  6, { 0x02, 0x92, 0x04, 0x03, 0x02, 0x01 } },
	{ "ptw 8", 0, 10, { .type = ptpkt_ptw, .size = 10, .u.ptw = { 8, 0, 0x0807060504030201ull } },
	  10, { 0x02, 0x32, 1, 2, 3, 4, 5, 6, 7, 8 } },
	{ "ptw 8 ip", 0, 10, { .type = ptpkt_ptw, .size = 10, .u.ptw = { 8, 1, 0x0807060504030201ull } },
	  10, { 0x02, 0xb2, 1, 2, 3, 4, 5, 6, 7, 8 } },
	{ "ptw size 10b reserved", 0, -ptpkt_err_bad_packet, { 0 }, 10, { 0x02, 0x52 } },
	{ "ptw size 11b reserved", 0, -ptpkt_err_bad_packet, { 0 }, 10, { 0x02, 0xf2 } },
	{ "exstop", 0, 2, { .type = ptpkt_exstop, .size = 2, .u.exstop = { 0 } }, 2, { 0x02, 0x62 } },
	{ "exstop ip", 0, 2, { .type = ptpkt_exstop, .size = 2, .u.exstop = { 1 } }, 2, { 0x02, 0xe2 } },
	{ "mwait, reserved bits set", 0, 10, { .type = ptpkt_mwait, .size = 10, .u.mwait = { 0x20, 1 } },
	  10, { 0x02, 0xc2, 0x20, 0xff, 0xff, 0xff, 0xfd, 0xff, 0xff, 0xff } },
	{ "pwre", 0, 4, { .type = ptpkt_pwre, .size = 4, .u.pwre = { 6, 2, 1 } }, 4, { 0x02, 0x22, 0x80, 0x62 } },
	{ "pwre sw, reserved bits set", 0, 4, { .type = ptpkt_pwre, .size = 4, .u.pwre = { 1, 0xf, 0 } }, 4, { 0x02, 0x22, 0x7f, 0x1f } },
	{ "pwrx, reserved bits set", 0, 7, { .type = ptpkt_pwrx, .size = 7, .u.pwrx = { 2, 6, 1 } },
	  7, { 0x02, 0xa2, 0x26, 0xf1, 0xff, 0xff, 0xff } },
	{ "bbp sz 8", 0, 3, { .type = ptpkt_bbp, .size = 3, .u.bbp = { 0, 0x01 } }, 3, { 0x02, 0x63, 0x01 } },
	{ "bbp sz 4", 0, 3, { .type = ptpkt_bbp, .size = 3, .u.bbp = { 1, 0x10 } }, 3, { 0x02, 0x63, 0x90 } },
	{ "bip 8", 8, 9, { .type = ptpkt_bip, .size = 9, .u.bip = { 0x11, 8, 0x0807060504030201ull } },
	  9, { 0x8c, 1, 2, 3, 4, 5, 6, 7, 8 } },
	{ "bip 4", 4, 5, { .type = ptpkt_bip, .size = 5, .u.bip = { 0x1f, 4, 0x04030201 } },
	  5, { 0xfc, 1, 2, 3, 4 } },
	{ "bip header outside block is tnt", 0, 1, { .type = ptpkt_tnt8, .size = 1, .u.tnt = { 6, 0x06 } }, 1, { 0x8c } },
	{ "tnt inside block", 8, 1, { .type = ptpkt_tnt8, .size = 1, .u.tnt = { 2, 1 } }, 1, { 0x0a } },
	{ "bep", 0, 2, { .type = ptpkt_bep, .size = 2, .u.bep = { 0 } }, 2, { 0x02, 0x33 } },
	{ "bep ip", 0, 2, { .type = ptpkt_bep, .size = 2, .u.bep = { 1 } }, 2, { 0x02, 0xb3 } },
	{ "cfe", 0, 4, { .type = ptpkt_cfe, .size = 4, .u.cfe = { 1, 0x1, 14 } }, 4, { 0x02, 0x13, 0x81, 0x0e } },
	{ "cfe sipi", 0, 4, { .type = ptpkt_cfe, .size = 4, .u.cfe = { 0, 0x5, 0x9a } }, 4, { 0x02, 0x13, 0x05, 0x9a } },
	{ "evd", 0, 11, { .type = ptpkt_evd, .size = 11, .u.evd = { 2, 0x30 } },
	  11, { 0x02, 0x53, 0x02, 0x30, 0, 0, 0, 0, 0, 0, 0 } },
	{ "cyc 1 byte", 0, 1, { .type = ptpkt_cyc, .size = 1, .u.cyc = { 0x1f } }, 1, { 0xfb } },
	{ "cyc 1 byte zero", 0, 1, { .type = ptpkt_cyc, .size = 1, .u.cyc = { 0 } }, 1, { 0x03 } },
	{ "cyc 2 bytes", 0, 2, { .type = ptpkt_cyc, .size = 2, .u.cyc = { 0x20 } }, 2, { 0x07, 0x02 } },
	{ "cyc non-minimal", 0, 3, { .type = ptpkt_cyc, .size = 3, .u.cyc = { 1 } }, 3, { 0x0f, 0x01, 0x00 } },
	{ "cyc 11 bytes", 0, -ptpkt_err_bad_packet, { 0 }, 11,
	  { 0x07, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00 } },
	{ "cyc 10 bytes beyond 64 bits", 0, -ptpkt_err_bad_packet, { 0 }, 10,
	  { 0x07, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x10 } },
	{ "opcode 0x05", 0, -ptpkt_err_bad_opc, { 0 }, 1, { 0x05 } },
	{ "opcode 0x39", 0, -ptpkt_err_bad_opc, { 0 }, 1, { 0x39 } },
	{ "ext opcode 0x00", 0, -ptpkt_err_bad_opc, { 0 }, 2, { 0x02, 0x00 } },
	{ "ext opcode 0xff", 0, -ptpkt_err_bad_opc, { 0 }, 2, { 0x02, 0xff } },
	{ "psb broken", 0, -ptpkt_err_bad_packet, { 0 }, 16,
	  { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x83 } },
	{ "empty", 0, -ptpkt_err_eos, { 0 }, 0, { 0 } },
	{ "ext cut", 0, -ptpkt_err_truncated, { 0 }, 1, { 0x02 } },
	{ "tip cut", 0, -ptpkt_err_truncated, { 0 }, 8, { 0xcd, 1, 2, 3, 4, 5, 6, 7 } },
	{ "psb cut", 0, -ptpkt_err_truncated, { 0 }, 15, { PSB16 } },
	{ "mnt cut after ext", 0, -ptpkt_err_truncated, { 0 }, 2, { 0x02, 0xc3 } },
	{ "cyc cut", 0, -ptpkt_err_truncated, { 0 }, 2, { 0x07, 0x01 } },
	{ "bip cut", 4, -ptpkt_err_truncated, { 0 }, 4, { 0x04, 1, 2, 3 } },
};

static bool filled_ff(const struct ptpkt *p)
{
	const uint8_t *b = (const uint8_t *)p;
	for (size_t i = 0; i < sizeof(*p); i++)
		if (b[i] != 0xff)
			return false;
	return true;
}

static bool seen_type[ptpkt_ntypes];

/* Decode v; the output is all 0xff first so a field the decoder forgets
 * cannot match by accident. */
static void check_vec(const char *name, unsigned block, const uint8_t *b, size_t len,
		      int ret, const struct ptpkt *want)
{
	struct ptpkt got;
	memset(&got, 0xff, sizeof(got));
	int r = ptpkt_decode(b, len, block, &got);
	if (ret < 0) {
		CHECKF(r == ret && filled_ff(&got), name, "got %d (%s), want %d (%s)", r,
		       ptpkt_errstr(r), ret, ptpkt_errstr(ret));
		return;
	}
	seen_type[want->type] = true;
	CHECKF(r == ret && ptpkt_same(&got, want), name, "ret %d want %d, type %s/%s size %u",
	       r, ret, ptpkt_name(got.type), ptpkt_name(want->type), got.size);
	/* The encoder gives back the same bytes (the vectors without reserved
	 * bits set and with minimal CYC). */
	uint8_t enc[32];
	int e = ptpkt_encode(enc, sizeof(enc), want);
	if (e == ret && !memcmp(enc, b, (size_t)e))
		return;
	if (strstr(name, "reserved") || strstr(name, "non-minimal") ||
	    strstr(name, "outside block") || strstr(name, "inside block"))
		return;
	CHECKF(0, name, "encoder gives %d bytes, different from the vector", e);
}

static void test_vectors(void)
{
	for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) {
		const struct vec *v = &vecs[i];
		char name[96];
		snprintf(name, sizeof(name), "vector %s", v->name);
		check_vec(name, v->block, v->b, v->len, v->ret, &v->want);
	}
}

/* Short TNT of every length and long TNT of every length, both from the
 * bit pictures in Table 33-16: stop bit, then B1 (oldest) .. BN. */
static void test_tnt_lengths(void)
{
	for (unsigned n = 1; n <= 6; n++) {
		for (unsigned pat = 0; pat < 2; pat++) {
			uint64_t bits = pat ? ((1u << n) - 1) & 0x2a : (1u << (n - 1));
			uint8_t b = (uint8_t)(1u << (n + 1));
			for (unsigned k = 0; k < n; k++) /* B(k+1) */
				if (bits >> (n - 1 - k) & 1)
					b |= (uint8_t)(1u << (n - k));
			struct ptpkt want = { .type = ptpkt_tnt8, .size = 1, .u.tnt = { (uint8_t)n, bits } };
			char name[64];
			snprintf(name, sizeof(name), "tnt8 %u bits pattern %u", n, pat);
			check_vec(name, 0, &b, 1, 1, &want);
		}
	}
	for (unsigned n = 0; n <= 47; n++) {
		uint64_t bits = n ? (0x5555aaaa5555ull & ((1ull << n) - 1)) | (1ull << (n - 1)) : 0;
		uint64_t payload = (1ull << n) | bits;
		uint8_t b[8] = { 0x02, 0xa3 };
		for (unsigned i = 0; i < 6; i++)
			b[2 + i] = (uint8_t)(payload >> (8 * i));
		struct ptpkt want = { .type = ptpkt_tnt64, .size = 8, .u.tnt = { (uint8_t)n, bits } };
		char name[64];
		snprintf(name, sizeof(name), "tnt64 %u bits", n);
		check_vec(name, 0, b, 8, 8, &want);
	}
}

/* Every CYC length 1..10 at both ends of its range (33.4.2.14). */
static void test_cyc_lengths(void)
{
	for (unsigned len = 1; len <= 10; len++) {
		unsigned lo_bits = len == 1 ? 0 : 5 + 7 * (len - 2);
		unsigned hi_bits = 5 + 7 * (len - 1);
		uint64_t vals[2] = { len == 1 ? 0 : 1ull << lo_bits,
				     hi_bits >= 64 ? ~0ull : (1ull << hi_bits) - 1 };
		for (int k = 0; k < 2; k++) {
			uint64_t v = vals[k];
			uint8_t b[10];
			b[0] = (uint8_t)(((v & 0x1f) << 3) | (len > 1 ? 4 : 0) | 3);
			for (unsigned i = 1; i < len; i++)
				b[i] = (uint8_t)((((v >> (5 + 7 * (i - 1))) & 0x7f) << 1) |
						 (i + 1 < len ? 1 : 0));
			struct ptpkt want = { .type = ptpkt_cyc, .size = (uint8_t)len, .u.cyc = { v } };
			char name[64];
			snprintf(name, sizeof(name), "cyc %u bytes %s", len, k ? "max" : "min");
			check_vec(name, 0, b, len, (int)len, &want);
		}
	}
}

/* Every IPBytes value for every IP packet. */
static void test_ipbytes(void)
{
	static const uint8_t opc[4] = { 0x0d, 0x11, 0x01, 0x1d };
	static const uint8_t typ[4] = { ptpkt_tip, ptpkt_tip_pge, ptpkt_tip_pgd, ptpkt_fup };
	static const int len[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };
	for (int t = 0; t < 4; t++) {
		for (unsigned ipc = 0; ipc < 8; ipc++) {
			uint8_t b[9] = { (uint8_t)(ipc << 5 | opc[t]), 0xf1, 0xe2, 0xd3, 0xc4, 0xb5, 0xa6, 0x97, 0x88 };
			char name[64];
			snprintf(name, sizeof(name), "%s ipbytes %u", ptpkt_name(typ[t]), ipc);
			if (len[ipc] < 0) {
				check_vec(name, 0, b, 9, -ptpkt_err_bad_packet, NULL);
				continue;
			}
			uint64_t ip = 0;
			for (int i = 0; i < len[ipc]; i++)
				ip |= (uint64_t)b[1 + i] << (8 * i);
			struct ptpkt want = { .type = typ[t], .size = (uint8_t)(1 + len[ipc]),
					      .u.ip = { (uint8_t)ipc, ip } };
			check_vec(name, 0, b, 9, 1 + len[ipc], &want);
		}
	}
}

static struct ptpkt ippkt(uint8_t type, uint8_t ipc, uint64_t ip)
{
	struct ptpkt p = { .type = type, .u.ip = { ipc, ip } };
	return p;
}

/* Table 33-18 step by step. */
static void test_lastip(void)
{
	struct ptpkt_lastip l;
	uint64_t ip = 0;
	struct ptpkt p;
	ptpkt_lastip_init(&l);

	p = ippkt(ptpkt_tip, 1, 0x1234);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == 1 && ip == 0x1234, "lastip ipc1 against zero");
	p = ippkt(ptpkt_fup, 6, 0xffffffff81234567ull);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == 1 && ip == 0xffffffff81234567ull, "lastip ipc6 full");
	p = ippkt(ptpkt_tip, 1, 0xbeef);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == 1 && ip == 0xffffffff8123beefull, "lastip ipc1 keeps 63:16");
	p = ippkt(ptpkt_tip_pge, 2, 0x00c0ffee);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == 1 && ip == 0xffffffff00c0ffeeull, "lastip ipc2 keeps 63:32");
	p = ippkt(ptpkt_tip_pgd, 0, 0);
	ip = 7;
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == -ptpkt_err_noip && ip == 7 &&
	      l.ip == 0xffffffff00c0ffeeull, "lastip ipc0 suppressed leaves last ip");
	p = ippkt(ptpkt_tip, 4, 0x123456789abcull);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == 1 && ip == 0xffff123456789abcull, "lastip ipc4 keeps 63:48");
	p = ippkt(ptpkt_tip, 3, 0x800000001000ull);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == 1 && ip == 0xffff800000001000ull, "lastip ipc3 sign-extends 1");
	p = ippkt(ptpkt_tip, 3, 0x7fffffff1000ull);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == 1 && ip == 0x00007fffffff1000ull, "lastip ipc3 sign-extends 0");
	p = ippkt(ptpkt_tip, 4, 0x1ull);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == 1 && ip == 0x1ull, "lastip ipc4 after ipc3");
	p = ippkt(ptpkt_tip, 5, 0);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == -ptpkt_err_bad_packet, "lastip ipc5 reserved");
	p = ippkt(ptpkt_tip, 6, 0xaaaabbbbccccddddull);
	ptpkt_lastip_apply(&l, &p, &ip);
	struct ptpkt psb = { .type = ptpkt_psb };
	CHECK(ptpkt_lastip_apply(&l, &psb, NULL) == 0 && l.ip == 0, "lastip psb resets");
	p = ippkt(ptpkt_tip, 2, 0x1000);
	CHECK(ptpkt_lastip_apply(&l, &p, &ip) == 1 && ip == 0x1000, "lastip compressed against zero after psb");
	struct ptpkt ovf = { .type = ptpkt_ovf };
	CHECK(ptpkt_lastip_apply(&l, &ovf, NULL) == 0 && l.ip == 0x1000, "lastip ovf keeps last ip");
}

/* The encoders' IP compression (ptpkt_ip_choices(), ptpkt_ip_payload()):
 * an IPBytes value is offered exactly when the decoder's reconstruction
 * (ptpkt_lastip_apply(), Table 33-18) gives the IP back, over edge and
 * random pairs of IP and Last IP. */
static void test_ip_choices(void)
{
	static const uint64_t edge[] = { 0, 0xffff, 0x10000, 0xffffffff, 0x100000000ull,
					 0x7fffffffffffull, 0x800000000000ull,
					 0xffff800000000000ull, 0xffffffffffffffffull,
					 0x0001000000000000ull, 0x1dd59000 };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned bad = 0, pairs = 0, offered[8] = { 0 };
	char first[160] = "";
	for (unsigned i = 0; i < 20000; i++) {
		uint64_t ip, last;
		if (i < 121) {
			ip = edge[i % 11];
			last = edge[i / 11];
		} else {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			ip = x;
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* mostly near each other, as the IPs of a trace are */
			last = i % 3 ? ip ^ (x & ((1ull << (x % 64)) - 1)) : x;
			if (i % 5 == 0)
				ip = (uint64_t)((int64_t)(ip << 16) >> 16); /* canonical */
		}
		unsigned c = ptpkt_ip_choices(ip, last);
		pairs++;
		for (unsigned ipc = 1; ipc < 8; ipc++) {
			struct ptpkt_lastip l = { last };
			struct ptpkt p = ippkt(ptpkt_tip, ipc, ipc == 5 || ipc == 7 ? 0
							 : ptpkt_ip_payload(ip, ipc));
			uint64_t got = 0;
			bool back = ptpkt_lastip_apply(&l, &p, &got) == 1 && got == ip;
			offered[ipc] += (c >> ipc) & 1;
			if (back != (bool)((c >> ipc) & 1) && !bad++)
				snprintf(first, sizeof(first), "ip %llx last %llx ipbytes %u: %s",
					 (unsigned long long)ip, (unsigned long long)last, ipc,
					 back ? "reconstructs, not offered" : "offered, wrong IP");
		}
	}
	CHECKF(!bad, "ip compression: offered exactly when it reconstructs", "%u of %u: %s", bad,
	       pairs, first);
	CHECKF(offered[1] && offered[2] && offered[3] && offered[4] && offered[6] == pairs &&
	       !offered[5] && !offered[7], "ip compression: every IPBytes comes up",
	       "1:%u 2:%u 3:%u 4:%u 6:%u of %u", offered[1], offered[2], offered[3], offered[4],
	       offered[6], pairs);
}

/* Encode -> decode for every type with random payloads. */
static void test_roundtrip(void)
{
	uint64_t rng = 42;
	for (unsigned t = ptpkt_pad; t < ptpkt_ntypes; t++) {
		int bad = 0, iters = 2000;
		for (int i = 0; i < iters && !bad; i++) {
			struct ptpkt p, q;
			unsigned bsz = (i & 1) ? 4 : 8;
			ptgen_packet(&rng, (enum ptpkt_type)t, bsz, &p);
			uint8_t buf[32];
			int n = ptpkt_encode(buf, sizeof(buf), &p);
			if (n <= 0) {
				bad = 1;
				CHECKF(0, "roundtrip", "%s: encode %d", ptpkt_name(t), n);
				break;
			}
			p.size = (uint8_t)n;
			memset(&q, 0xff, sizeof(q));
			int r = ptpkt_decode(buf, (size_t)n, t == ptpkt_bip ? bsz : 0, &q);
			if (r != n || !ptpkt_same(&p, &q)) {
				bad = 1;
				CHECKF(0, "roundtrip", "%s: decode %d of %d", ptpkt_name(t), r, n);
			}
			/* One byte less is always "need more bytes". */
			r = ptpkt_decode(buf, (size_t)n - 1, t == ptpkt_bip ? bsz : 0, &q);
			if (r != (n == 1 ? -ptpkt_err_eos : -ptpkt_err_truncated)) {
				bad = 1;
				CHECKF(0, "roundtrip", "%s: cut decode %d", ptpkt_name(t), r);
			}
			/* And the encoder refuses a buffer one byte short. */
			if (ptpkt_encode(buf, (size_t)n - 1, &p) != -ptpkt_err_nospace) {
				bad = 1;
				CHECKF(0, "roundtrip", "%s: encode into short buffer", ptpkt_name(t));
			}
		}
		char name[64];
		snprintf(name, sizeof(name), "roundtrip %s x%d", ptpkt_name(t), iters);
		if (!bad)
			CHECK(1, name);
	}
}

static void test_encoder_rejects(void)
{
	struct ptpkt p;
	uint8_t buf[32];
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_tip; p.u.ip.ipc = 5;
	CHECK(ptpkt_encode(buf, sizeof(buf), &p) == -ptpkt_err_bad_packet, "encode rejects ipc 5");
	p.u.ip.ipc = 1; p.u.ip.ip = 0x10000;
	CHECK(ptpkt_encode(buf, sizeof(buf), &p) == -ptpkt_err_bad_packet, "encode rejects ip wider than ipc");
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_tnt8; p.u.tnt.nbits = 7;
	CHECK(ptpkt_encode(buf, sizeof(buf), &p) == -ptpkt_err_bad_packet, "encode rejects tnt8 of 7 bits");
	p.type = ptpkt_tnt64; p.u.tnt.nbits = 48;
	CHECK(ptpkt_encode(buf, sizeof(buf), &p) == -ptpkt_err_bad_packet, "encode rejects tnt64 of 48 bits");
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_tsc; p.u.tsc.tsc = 1ull << 56;
	CHECK(ptpkt_encode(buf, sizeof(buf), &p) == -ptpkt_err_bad_packet, "encode rejects 57-bit tsc");
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_pip; p.u.pip.cr3 = 0x1010;
	CHECK(ptpkt_encode(buf, sizeof(buf), &p) == -ptpkt_err_bad_packet, "encode rejects cr3 bits 4:0");
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_bip; p.u.bip.bytes = 6;
	CHECK(ptpkt_encode(buf, sizeof(buf), &p) == -ptpkt_err_bad_packet, "encode rejects bip of 6 bytes");
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_ntypes;
	CHECK(ptpkt_encode(buf, sizeof(buf), &p) == -ptpkt_err_bad_opc, "encode rejects unknown type");
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_cyc; p.u.cyc.cyc = ~0ull;
	CHECK(ptpkt_encode(buf, sizeof(buf), &p) == 10, "encode cyc 2^64-1 in 10 bytes");
}

/* Packet blocks (33.4.1.1): BIP only inside BBP..BEP; size from the BBP;
 * OVF and BEP end the block; a new BBP replaces it. */
static void test_blocks(void)
{
	static const uint8_t s[] = {
		PSB16, 0x02, 0x23,
		0x02, 0x63, 0x81,             /* BBP sz=4 type 1 */
		0x0c, 1, 2, 3, 4,             /* BIP id 1, 4 bytes */
		0x59, 0x10,                   /* MTC inside the block */
		0x14, 5, 6, 7, 8,             /* BIP id 2 */
		0x02, 0x63, 0x04,             /* BBP sz=8 type 4 replaces it */
		0x04, 1, 2, 3, 4, 5, 6, 7, 8, /* BIP id 0, 8 bytes */
		0x02, 0xf3,                   /* OVF ends the block */
		0x04,                         /* TNT (1 bit, not taken) */
		0x02, 0x63, 0x01,             /* BBP */
		0x02, 0xb3,                   /* BEP ip */
		0x0c,                         /* TNT */
	};
	static const uint8_t want_t[] = { ptpkt_psb, ptpkt_psbend, ptpkt_bbp, ptpkt_bip, ptpkt_mtc,
					  ptpkt_bip, ptpkt_bbp, ptpkt_bip, ptpkt_ovf, ptpkt_tnt8,
					  ptpkt_bbp, ptpkt_bep, ptpkt_tnt8 };
	static const uint8_t want_sz[] = { 16, 2, 3, 5, 2, 5, 3, 9, 2, 1, 3, 2, 1 };
	struct ptpkt_decoder d;
	struct ptpkt p;
	ptpkt_init(&d, s, sizeof(s), 0);
	CHECK(ptpkt_next(&d, &p) == -ptpkt_err_nosync, "next before sync is nosync");
	CHECK(ptpkt_sync_forward(&d) == 0, "blocks: sync");
	bool ok = true;
	size_t i = 0;
	int r;
	while ((r = ptpkt_next(&d, &p)) > 0) {
		if (i >= sizeof(want_t) || p.type != want_t[i] || p.size != want_sz[i])
			ok = false;
		if (p.type == ptpkt_bip && i == 5 && (p.u.bip.id != 2 || p.u.bip.payload != 0x08070605))
			ok = false;
		i++;
	}
	CHECKF(ok && i == sizeof(want_t) && r == -ptpkt_err_eos, "blocks: bip, bbp, ovf, bep",
	       "%zu packets, r=%d", i, r);
	/* The scan loop agrees. */
	struct ptpkt_stat st;
	memset(&st, 0, sizeof(st));
	ptpkt_init(&d, s, sizeof(s), 0);
	ptpkt_sync_forward(&d);
	r = ptpkt_scan(&d, &st);
	CHECK(r == -ptpkt_err_eos && st.count[ptpkt_bip] == 3 && st.bytes[ptpkt_bip] == 19 &&
	      st.count[ptpkt_tnt8] == 2, "blocks: scan agrees");
}

static void test_sync(void)
{
	uint8_t buf[4096];
	uint64_t rng = 7;
	size_t np = 0;
	static struct ptpkt pk[2048];
	size_t len = ptgen_stream(&rng, buf, sizeof(buf), 700, pk, 2048, &np);
	/* PSB offsets from the packets written. */
	uint64_t psbs[64];
	size_t npsb = 0, off = 0;
	for (size_t i = 0; i < np; i++) {
		if (pk[i].type == ptpkt_psb && npsb < 64)
			psbs[npsb++] = off;
		off += pk[i].size;
	}
	CHECK(off == len && npsb >= 4, "sync: generated stream");

	struct ptpkt_decoder d;
	ptpkt_init(&d, buf, len, 1000);
	bool ok = true;
	for (size_t k = 0; k < npsb; k++) {
		int r = ptpkt_sync_forward(&d);
		if (r != 0 || ptpkt_offset(&d) != 1000 + psbs[k])
			ok = false;
	}
	CHECK(ok, "sync forward visits every PSB in order");
	CHECK(ptpkt_sync_forward(&d) == -ptpkt_err_eos, "sync forward after the last PSB is eos");
	d.pos = d.end;
	ok = true;
	for (size_t k = npsb; k-- > 0;) {
		int r = ptpkt_sync_backward(&d);
		if (r != 0 || ptpkt_offset(&d) != 1000 + psbs[k])
			ok = false;
	}
	CHECK(ok, "sync backward visits every PSB in reverse");
	CHECK(ptpkt_sync_backward(&d) == -ptpkt_err_eos, "sync backward before the first PSB is eos");

	/* Start mid-stream at every offset: forward sync lands on the next PSB. */
	ok = true;
	for (size_t s = 0; s < len; s++) {
		ptpkt_init(&d, buf, len, 0);
		d.pos = buf + s;
		int r = ptpkt_sync_forward(&d);
		size_t k = 0;
		while (k < npsb && psbs[k] < s)
			k++;
		if (k < npsb ? (r != 0 || ptpkt_offset(&d) != psbs[k]) : r != -ptpkt_err_eos)
			ok = false;
	}
	CHECK(ok, "sync forward from every offset finds the next PSB");

	/* sync_set at a packet boundary decodes the same packets from there. */
	ptpkt_init(&d, buf, len, 0);
	CHECK(ptpkt_sync_set(&d, psbs[1] + 16) == 0 && ptpkt_offset(&d) == psbs[1] + 16,
	      "sync set");
	struct ptpkt p;
	CHECK(ptpkt_next(&d, &p) > 0, "sync set then next");
	CHECK(ptpkt_sync_set(&d, len + 1) < 0, "sync set beyond the buffer fails");
}

/*
 * Decode with resync after errors; every byte must be a packet byte, an
 * error byte or skipped on resync, and the loop must finish.
 */
static bool account(const uint8_t *buf, size_t len, size_t start, bool set)
{
	struct ptpkt_decoder d;
	struct ptpkt p;
	ptpkt_init(&d, buf, len, 0);
	d.pos = buf + start;
	uint64_t pkt_bytes = 0, gap = 0, last = start;
	if (set)
		ptpkt_sync_set(&d, start);
	else if (ptpkt_sync_forward(&d) < 0)
		return ptpkt_offset(&d) <= len;
	gap += ptpkt_offset(&d) - last;
	for (size_t guard = 0; guard <= len + 1; guard++) {
		int r = ptpkt_next(&d, &p);
		if (r > 0) {
			pkt_bytes += (unsigned)r;
			continue;
		}
		if (r == -ptpkt_err_eos || r == -ptpkt_err_truncated) {
			gap += len - ptpkt_offset(&d); /* the cut tail */
			return start + pkt_bytes + gap == len;
		}
		last = ptpkt_offset(&d);
		if (ptpkt_sync_forward(&d) < 0) {
			gap += len - last;
			return start + pkt_bytes + gap == len;
		}
		gap += ptpkt_offset(&d) - last;
	}
	return false; /* no progress */
}

static void test_robustness(void)
{
	static uint8_t buf[1 << 16];
	uint64_t rng = 99;
	bool ok = true;
	/* Random bytes, with and without PSBs sprinkled in. */
	for (int round = 0; round < 200 && ok; round++) {
		size_t len = 1 + ptgen_rand(&rng) % 4096;
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)ptgen_rand(&rng);
		if (round & 1)
			for (size_t i = 0; i + 16 <= len; i += 1 + ptgen_rand(&rng) % 600)
				memcpy(buf + i, (const uint8_t[]){ PSB16 }, 16);
		ok = account(buf, len, 0, false) && account(buf, len, 0, true) &&
		     account(buf, len, ptgen_rand(&rng) % len, true);
		/* Stateless decode at every offset: no crash, sizes in range. */
		for (size_t i = 0; i < len && ok; i++) {
			struct ptpkt p;
			int r = ptpkt_decode(buf + i, len - i, (i & 1) ? 4 : 0, &p);
			if (r > PTPKT_MAX_SIZE || r == 0 || (r > 0 && (size_t)r > len - i))
				ok = false;
		}
	}
	CHECK(ok, "random bytes: every byte accounted for, no hang");

	/* A valid stream cut after every byte: the packets before the cut
	 * decode as before and the cut is "need more bytes", never an error. */
	size_t np = 0;
	static struct ptpkt pk[4096];
	size_t len = ptgen_stream(&rng, buf, 6000, 1500, pk, 4096, &np);
	ok = np < 4096;
	for (size_t cut = 0; cut <= len && ok; cut++) {
		struct ptpkt_decoder d;
		struct ptpkt p;
		ptpkt_init(&d, buf, cut, 0);
		ptpkt_sync_set(&d, 0);
		size_t i = 0, off = 0;
		int r;
		while ((r = ptpkt_next(&d, &p)) > 0) {
			if (i >= np || !ptpkt_same(&p, &pk[i]))
				ok = false;
			off += (unsigned)r;
			i++;
		}
		if (off == cut ? r != -ptpkt_err_eos : r != -ptpkt_err_truncated || cut - off >= pk[i].size)
			ok = false;
		if (!ok)
			CHECKF(0, "cut stream", "cut %zu: packet %zu r=%d", cut, i, r);
	}
	CHECK(ok, "stream cut inside every packet: truncated, never bad");

	/* Start at every offset (mid-packet): no crash, all bytes accounted. */
	ok = true;
	for (size_t s = 0; s < len && ok; s++)
		ok = account(buf, len, s, true) && account(buf, len, s, false);
	CHECK(ok, "start mid-packet at every offset: every byte accounted for");

	/* The full stream decodes to exactly the packets generated. */
	struct ptpkt_decoder d;
	struct ptpkt p;
	ptpkt_init(&d, buf, len, 0);
	ptpkt_sync_forward(&d);
	size_t i = 0;
	ok = true;
	while (ptpkt_next(&d, &p) > 0)
		ok = ok && i < np && ptpkt_same(&p, &pk[i++]);
	CHECK(ok && i == np, "generated stream decodes to its packets");
}


/* ptpkt_scan (the --stat fast path) gives the same counts, errors and error
 * offsets as decoding packet by packet. */
static bool scan_matches_next(const uint8_t *buf, size_t len, bool set)
{
	struct ptpkt_stat a, b;
	uint64_t erra[64], errb[64];
	size_t na = 0, nb = 0;
	struct ptpkt_decoder d;
	struct ptpkt p;
	int r;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ptpkt_init(&d, buf, len, 0);
	if (set ? ptpkt_sync_set(&d, 0) : ptpkt_sync_forward(&d))
		return true;
	for (;;) {
		r = ptpkt_next(&d, &p);
		if (r > 0) {
			a.count[p.type]++;
			a.bytes[p.type] += (unsigned)r;
			continue;
		}
		if (na < 64)
			erra[na] = ptpkt_offset(&d) << 8 | (uint64_t)-r;
		na++;
		if (r == -ptpkt_err_eos || r == -ptpkt_err_truncated || ptpkt_sync_forward(&d))
			break;
	}
	ptpkt_init(&d, buf, len, 0);
	set ? ptpkt_sync_set(&d, 0) : ptpkt_sync_forward(&d);
	for (;;) {
		r = ptpkt_scan(&d, &b);
		if (nb < 64)
			errb[nb] = ptpkt_offset(&d) << 8 | (uint64_t)-r;
		nb++;
		if (r == -ptpkt_err_eos || r == -ptpkt_err_truncated || ptpkt_sync_forward(&d))
			break;
	}
	if (na != nb || memcmp(&a, &b, sizeof(a)) || memcmp(erra, errb, sizeof(erra[0]) * (na < 64 ? na : 64))) {
		printf("# scan: %zu vs %zu stops, first %llx vs %llx\n", na, nb,
		       (unsigned long long)erra[0], (unsigned long long)errb[0]);
		return false;
	}
	return true;
}

static void test_scan(void)
{
	static uint8_t buf[3 << 20];
	uint64_t rng = 5;
	size_t np;
	/* Generated streams with blocks, PSB every 1..8 KiB, several sizes
	 * around the split threshold. */
	bool ok = true;
	for (int i = 0; i < 12 && ok; i++) {
		size_t size = i < 4 ? 70000 + 5000 * (size_t)i : sizeof(buf) >> (i & 3);
		size_t len = ptgen_stream(&rng, buf, size, 1024u << (i % 4), NULL, 0, &np);
		ok = scan_matches_next(buf, len, false) && scan_matches_next(buf, len, true);
		/* Cut at an arbitrary byte. */
		ok = ok && scan_matches_next(buf, len - 1 - ptgen_rand(&rng) % 100, false);
	}
	CHECK(ok, "scan: same counts as packet by packet on generated streams");

	/* Errors planted in every stretch, PSB patterns inside payloads (a
	 * chain start that is not a packet boundary), blocks over the split
	 * points. */
	ok = true;
	for (int i = 0; i < 40 && ok; i++) {
		size_t len = ptgen_stream(&rng, buf, 600000, 4096, NULL, 0, &np);
		for (int k = 0; k < i % 5; k++)
			buf[ptgen_rand(&rng) % len] = (uint8_t)ptgen_rand(&rng);
		if (i & 1) {
			/* At the first PSB after each split point, a TIP whose
			 * payload starts a PSB pattern that runs on into a real
			 * PSB: the split search takes the one inside the TIP. */
			for (int q = 1; q < 4; q++) {
				struct ptpkt_decoder d;
				ptpkt_init(&d, buf, len, 0);
				d.pos = buf + len / 4 * (size_t)q;
				if (ptpkt_sync_forward(&d) || d.pos + 25 > buf + len)
					continue;
				uint8_t *x = (uint8_t *)d.pos;
				x[0] = 0xcd;
				for (int j = 0; j < 24; j += 2) {
					x[1 + j] = 0x02;
					x[2 + j] = 0x82;
				}
			}
		}
		if (i & 2) {
			/* A block straddling a quarter point. */
			static const uint8_t blk[] = { 0x02, 0x63, 0x80, 0x04, 1, 2, 3, 4, 0x0c, 5, 6, 7, 8,
						       0x02, 0x33 };
			struct ptpkt_decoder d;
			ptpkt_init(&d, buf, len, 0);
			d.pos = buf + len / 2 - 10;
			if (ptpkt_sync_forward(&d) == 0 && d.pos + 16 + sizeof(blk) < buf + len)
				memcpy((uint8_t *)d.pos + 16, blk, sizeof(blk));
		}
		ok = scan_matches_next(buf, len, false) && scan_matches_next(buf, len, true);
	}
	CHECK(ok, "scan: same errors and counts with corruption, fake PSBs and blocks");

	/* Random bytes with PSBs. */
	ok = true;
	for (int i = 0; i < 20 && ok; i++) {
		size_t len = 70000 + ptgen_rand(&rng) % 300000;
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)ptgen_rand(&rng);
		for (size_t j = 0; j + 16 <= len; j += 1 + ptgen_rand(&rng) % 20000)
			memcpy(buf + j, (const uint8_t[]){ PSB16 }, 16);
		ok = scan_matches_next(buf, len, false) && scan_matches_next(buf, len, true);
	}
	CHECK(ok, "scan: same errors and counts on random bytes");

	/* Every vector, valid or not, inside a stream long enough for the
	 * fast paths (and once more after the split threshold). */
	ok = true;
	for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]) && ok; i++) {
		const struct vec *v = &vecs[i];
		if (v->block || v->len == 0)
			continue;
		for (size_t at = 0; at < 2 && ok; at++) {
			size_t len = 0, pre = at ? 100000 : 0;
			memset(buf, 0, pre + 200);
			memcpy(buf, (const uint8_t[]){ PSB16 }, 16);
			len = pre + 16;
			memcpy(buf + pre, (const uint8_t[]){ PSB16 }, 16);
			memcpy(buf + len, v->b, v->len);
			len += v->len + 40;
			memcpy(buf + len, (const uint8_t[]){ PSB16 }, 16);
			len += 16 + 20;
			ok = scan_matches_next(buf, len, false);
			if (!ok)
				printf("# vector %s\n", v->name);
		}
	}
	CHECK(ok, "scan: every vector in a stream, same as packet by packet");
}

static void test_names(void)
{
	bool ok = true;
	for (int e = 0; e <= ptpkt_err_noip; e++)
		ok = ok && strcmp(ptpkt_errstr(-e), "unknown error") != 0;
	CHECK(ok, "every error code has a message");
	CHECK(!strcmp(ptpkt_errstr(-999), "unknown error"), "unknown error code");
	ok = true;
	for (unsigned t = ptpkt_pad; t < ptpkt_ntypes; t++)
		ok = ok && strcmp(ptpkt_name(t), "invalid") != 0;
	CHECK(ok, "every packet type has a name");
	CHECK(!strcmp(ptpkt_name(ptpkt_tip_pge), "tip.pge") && !strcmp(ptpkt_name(ptpkt_tnt64), "tnt.64"),
	      "names follow docs/packets.md");
}

int main(void)
{
	test_vectors();
	test_tnt_lengths();
	test_cyc_lengths();
	test_ipbytes();
	bool all = true;
	for (unsigned t = ptpkt_pad; t < ptpkt_ntypes; t++)
		if (!seen_type[t]) {
			all = false;
			printf("# no vector for %s\n", ptpkt_name(t));
		}
	CHECK(all, "a vector for every packet type");
	test_lastip();
	test_ip_choices();
	test_roundtrip();
	test_encoder_rejects();
	test_blocks();
	test_sync();
	test_robustness();
	test_names();
	test_scan();
	CHECK(ptpkt_selfcheck() == 0, "selfcheck");
	return check_exit();
}

/*
 * Host generator for core/x86_valid.c: which opcodes are defined.
 *
 * The instruction structure (which opcodes take a ModRM byte, immediate
 * sizes, branch classes) is written by hand in core/x86_insn.c from the SDM
 * opcode maps (Vol. 2, Appendix A). Whether a given opcode/prefix/ModRM
 * combination is defined at all is a long list of facts that changes with
 * every ISA extension, so it is computed here by asking Zydis about one probe
 * instruction per combination:
 *
 *   mode x space x prefix class x opcode x (67h, W, L) x ModRM byte
 *
 * Probes use neutral values for every field that does not select an opcode
 * (no REX, EVEX.V' = 1, z = b = 0, displacement and immediate bytes zero); a
 * combination is defined if one of a few register choices decodes (see
 * probe()), with and without a 67h prefix (MPX and VSIB need 32-bit
 * addressing, 3DNow! finds its opcode after the displacement).
 * Identical 256-bit ModRM sets and identical rows are shared, so the output
 * stays small.
 *
 * Build and run: make x86-tables  (writes core/x86_valid.c)
 */
#include <Zydis/Zydis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/x86_valid.h"

#define MAXBITS 4096
#define MAXROWS 256 /* keys are one byte */

static uint8_t bits[MAXBITS][32];
static int nbits;
static uint16_t rows[MAXROWS][X86V_NVARIANT];
static int nrows;
static uint8_t keys[X86V_NSPACE * 4 * 256];
static uint8_t fast[3][X86V_NLEGACY * 4 * 256 / 8];
static ZydisDecoder dec[3];

static int bits_index(const uint8_t b[32])
{
	for (int i = 0; i < nbits; i++)
		if (!memcmp(bits[i], b, 32))
			return i;
	if (nbits == MAXBITS) {
		fprintf(stderr, "too many bitmaps\n");
		exit(1);
	}
	memcpy(bits[nbits], b, 32);
	return nbits++;
}

static int row_index(const uint16_t r[X86V_NVARIANT])
{
	for (int i = 0; i < nrows; i++)
		if (!memcmp(rows[i], r, sizeof rows[i]))
			return i;
	if (nrows == MAXROWS) {
		fprintf(stderr, "too many rows\n");
		exit(1);
	}
	memcpy(rows[nrows], r, sizeof rows[nrows]);
	return nrows++;
}

/*
 * Knights Corner (Xeon Phi, MVEX and its VEX-encoded mask branches) is not an
 * x86-64 processor with Intel PT: its opcodes count as undefined here.
 */
static int is_knc(const ZydisDecodedInstruction *in)
{
	return in->encoding == ZYDIS_INSTRUCTION_ENCODING_MVEX ||
	       in->meta.isa_ext == ZYDIS_ISA_EXT_KNC || in->meta.isa_ext == ZYDIS_ISA_EXT_KNCE ||
	       in->meta.isa_ext == ZYDIS_ISA_EXT_KNCV;
}

static int zvalid(int mode, const uint8_t *p, size_t n)
{
	ZydisDecodedInstruction in;
	ZydisDecoderContext ctx;
	return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec[mode], &ctx, p, n, &in)) &&
	       !is_knc(&in);
}

/* Bytes of SIB and displacement after a ModRM byte (for the 3DNow! probes). */
static int modrm_ext(int a16, int modrm)
{
	int mod = modrm >> 6, rm = modrm & 7;
	if (mod == 3)
		return 0;
	if (a16)
		return mod == 1 ? 1 : mod == 2 ? 2 : rm == 6 ? 2 : 0;
	int n = rm == 4; /* SIB 00: base 0, no extra disp */
	return n + (mod == 1 ? 1 : mod == 2 ? 4 : rm == 5 ? 4 : 0);
}

static const uint8_t legacy_pfx[4] = { 0, 0x66, 0xf3, 0xf2 };

/*
 * Instructions newer than Zydis 4.0, added from the SDM (Vol. 2, 2023/2024
 * editions) and the ISA extensions reference. pfx: 0 none, 1 66, 2 F3, 3 F2;
 * m: 0/1/2 for 16/32/64-bit mode. Keep tests/unit/test_x86_zydis.c's
 * newer_than_zydis() in step.
 */
static void newer(int s, int pfx, int op, int m, int a, int w, int l, uint8_t b[32])
{
	(void)a;
	for (int mr = 0; mr < 256; mr++) {
		int mod = mr >> 6, reg = mr >> 3 & 7, on = 0;
		if (s == X86V_0F && op == 0x01) {
			/* WRMSRNS: NP 0F 01 C6, all modes. */
			on |= pfx == 0 && mr == 0xc6;
			/* RDMSRLIST F2 0F 01 C6, WRMSRLIST F3 0F 01 C6, ERETS F2 0F 01 CA,
			 * ERETU F3 0F 01 CA (FRED): 64-bit mode only. */
			on |= m == 2 && (pfx == 2 || pfx == 3) && (mr == 0xc6 || mr == 0xca);
		}
		/* LKGS r/m16: F2 0F 00 /6, 64-bit mode only. */
		on |= s == X86V_0F && op == 0x00 && pfx == 3 && reg == 6 && m == 2;
		/* CMPccXADD m32/m64, r, r: VEX.128.66.0F38.W0/W1 E0..EF, memory only,
		 * 64-bit mode only. */
		on |= s == X86V_VEX2 && pfx == 1 && op >= 0xe0 && op <= 0xef && l == 0 &&
		      mod != 3 && m == 2 && w <= 1;
		if (on)
			b[mr >> 3] |= (uint8_t)(1u << (mr & 7));
	}
}

/* Build the probe for one combination; returns its length (buffer is 24). */
static size_t probe(uint8_t *p, int space, int pfx, int op, int mode, int a, int w, int l,
		    int modrm, int alt)
{
	/*
	 * Some instructions require distinct registers (gathers: destination,
	 * index and mask; AMX and complex FP16: destination and sources), so a
	 * combination is tried with a few register choices: alt selects
	 * vvvv = 0, 1 or 15, SIB index 1 or 2, ModRM.reg + 0 or 8 (64-bit mode)
	 * and for EVEX aaa = 0 or 1.
	 */
	static const int vvvv[3] = { 0x78, 0x70, 0x00 };
	int v = vvvv[alt % 3], sib = (alt / 3 % 2 + 1) << 3, rbar = alt / 6 % 2 ? 0 : 0x80;
	int aaa = alt / 12;
	if (mode != 2)
		rbar = 0x80;
	size_t n = 0;
	memset(p, 0, 24);
	if (a)
		p[n++] = 0x67;
	if (space <= X86V_3DNOW) {
		if (pfx)
			p[n++] = legacy_pfx[pfx];
		if (space == X86V_1B) {
			p[n++] = (uint8_t)op;
		} else if (space == X86V_3DNOW) {
			p[n++] = 0x0f;
			p[n++] = 0x0f;
			p[n++] = (uint8_t)modrm;
			n += (size_t)modrm_ext(mode == 0 ? !a : mode == 1 ? a : 0, modrm);
			p[n++] = (uint8_t)op;
			return 20;
		} else {
			p[n++] = 0x0f;
			if (space == X86V_0F38)
				p[n++] = 0x38;
			if (space == X86V_0F3A)
				p[n++] = 0x3a;
			p[n++] = (uint8_t)op;
		}
	} else if (space <= X86V_XOPA) {
		int map = space <= X86V_VEX3 ? space - X86V_VEX1 + 1 : space - X86V_XOP8 + 8;
		p[n++] = space <= X86V_VEX3 ? 0xc4 : 0x8f;
		p[n++] = (uint8_t)(rbar | 0x60 | map);
		p[n++] = (uint8_t)(w << 7 | v | l << 2 | pfx);
		p[n++] = (uint8_t)op;
	} else {
		static const int emap[] = { 1, 2, 3, 5, 6 };
		int map = emap[space - X86V_EVEX1];
		p[n++] = 0x62;
		p[n++] = (uint8_t)(rbar | 0x70 | map);
		p[n++] = (uint8_t)(w << 7 | v | 0x04 | pfx);
		p[n++] = (uint8_t)(l << 5 | 0x08 | aaa);
		p[n++] = (uint8_t)op;
	}
	p[n++] = (uint8_t)modrm;
	p[n] = (uint8_t)sib;
	return 20;
}

int main(int argc, char **argv)
{
	static const ZydisMachineMode mm[3] = { ZYDIS_MACHINE_MODE_LEGACY_16,
		ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_MACHINE_MODE_LONG_64 };
	static const ZydisStackWidth sw[3] = { ZYDIS_STACK_WIDTH_16, ZYDIS_STACK_WIDTH_32,
		ZYDIS_STACK_WIDTH_64 };
	const char *outname = argc > 1 ? argv[1] : "core/x86_valid.c";

	for (int m = 0; m < 3; m++)
		if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec[m], mm[m], sw[m])))
			return 1;

	uint8_t zero[32] = { 0 }, b[32];
	bits_index(zero); /* 0: nothing valid */
	memset(b, 0xff, 32);
	bits_index(b);    /* 1: everything valid */
	uint16_t r0[X86V_NVARIANT] = { 0 };
	row_index(r0);    /* 0: opcode undefined everywhere */

	for (int s = 0; s < X86V_NSPACE; s++) {
		int legacy = s <= X86V_3DNOW, evex = s >= X86V_EVEX1;
		int nl = legacy ? 1 : evex ? 4 : 2, nw = legacy ? 1 : 2;
		int nalt = legacy ? 1 : evex ? 24 : 12;
		for (int pfx = 0; pfx < 4; pfx++) {
			for (int op = 0; op < 256; op++) {
				uint16_t r[X86V_NVARIANT] = { 0 };
				for (int m = 0; m < 3; m++)
				    for (int a = 0; a < 2; a++)
					for (int w = 0; w < nw; w++)
						for (int l = 0; l < nl; l++) {
							uint8_t p[24];
							memset(b, 0, 32);
							for (int mr = 0; mr < 256; mr++) {
								int ok = 0;
								for (int alt = 0; alt < nalt && !ok; alt++) {
									size_t n = probe(p, s, pfx, op, m, a, w, l, mr, alt);
									ok = zvalid(m, p, n);
								}
								if (ok)
									b[mr >> 3] |= (uint8_t)(1u << (mr & 7));
							}
							newer(s, pfx, op, m, a, w, l, b);
							int bi = bits_index(b);
							r[m * 16 + a * 8 + w * 4 + l] = (uint16_t)bi;
						}
				int key = (s * 4 + pfx) * 256 + op;
				keys[key] = (uint8_t)row_index(r);
				/* Fast path: defined for every ModRM, with or without 67h. */
				for (int m = 0; m < 3 && s < X86V_NLEGACY; m++)
					if (r[m * 16] == 1 && r[m * 16 + 8] == 1)
						fast[m][key >> 3] |= (uint8_t)(1u << (key & 7));
			}
		}
	}

	FILE *f = fopen(outname, "w");
	if (!f) {
		perror(outname);
		return 1;
	}
	fprintf(f, "/* Generated by core/gen/x86_valid_gen.c with Zydis %d.%d: do not edit.\n"
		" * %d rows, %d ModRM sets. See core/x86_valid.h. */\n"
		"#include \"core/x86_valid.h\"\n\n",
		(int)(ZYDIS_VERSION >> 48), (int)(ZYDIS_VERSION >> 32 & 0xffff), nrows, nbits);
	fprintf(f, "const uint16_t x86_vzydis = 0x%02x%02x;\n\n", (int)(ZYDIS_VERSION >> 48),
		(int)(ZYDIS_VERSION >> 32 & 0xffff));
	fprintf(f, "const uint8_t x86_vkey[X86V_NSPACE * 4 * 256] = {\n");
	for (int i = 0; i < X86V_NSPACE * 4 * 256; i++)
		fprintf(f, "%s%d,%s", i % 16 ? " " : "\t", keys[i], i % 16 == 15 ? "\n" : "");
	fprintf(f, "};\n\nconst uint8_t x86_vfast[3][X86V_NLEGACY * 4 * 256 / 8] = {\n");
	for (int m = 0; m < 3; m++) {
		fprintf(f, "\t{\n");
		for (int i = 0; i < X86V_NLEGACY * 4 * 256 / 8; i++)
			fprintf(f, "%s0x%02x,%s", i % 16 ? " " : "\t\t", fast[m][i], i % 16 == 15 ? "\n" : "");
		fprintf(f, "\t},\n");
	}
	fprintf(f, "};\n\nconst uint16_t x86_vrow[][X86V_NVARIANT] = {\n");
	for (int i = 0; i < nrows; i++) {
		fprintf(f, "\t{");
		for (int v = 0; v < X86V_NVARIANT; v++)
			fprintf(f, "%s%d", v ? "," : "", rows[i][v]);
		fprintf(f, "},\n");
	}
	fprintf(f, "};\n\nconst uint8_t x86_vbits[][32] = {\n");
	for (int i = 0; i < nbits; i++) {
		fprintf(f, "\t{");
		for (int v = 0; v < 32; v++)
			fprintf(f, "%s0x%02x", v ? "," : "", bits[i][v]);
		fprintf(f, "},\n");
	}
	fprintf(f, "};\n");
	fclose(f);
	fprintf(stderr, "%s: %d rows, %d ModRM sets\n", outname, nrows, nbits);
	return 0;
}

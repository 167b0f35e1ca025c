/*
 * Differential test of x86_decode() against Zydis (Debian libzydis-dev).
 *
 * 1. Every instruction of the code sections of real binaries: ELF programs
 *    and libraries on this machine, the UEFI applications of Debian's
 *    systemd-boot-efi and grub-efi-amd64-bin (PE32+) and GRUB's modules,
 *    and 32-bit and 16-bit code that clang compiles from core/ (mk/x86.mk:
 *    -m32 and -m16, plain and with AVX2/AVX-512). Linear sweep,
 *    resynchronising one byte further when Zydis finds no instruction.
 * 2. Millions of random byte strings in 16-, 32- and 64-bit mode, half of
 *    them uniformly random, half built from prefixes and escape bytes so
 *    that VEX/EVEX/XOP/0F38/0F3A forms are hit often.
 *
 * Whenever Zydis decodes an instruction, x86_decode() must decode it too,
 * with the same length, a consistent branch class and the same direct target.
 * When Zydis rejects bytes that x86_decode() accepts, the Zydis status must be
 * one of the "faults, but the length is well defined" reasons listed in
 * lenient_ok() below; those are counted and printed, never silently ignored.
 *
 * Options: test_x86_zydis [-n RANDOM_PER_MODE] [-v] [FILE...]
 */
#include <Zydis/Zydis.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/x86_insn.h"
#include "core/x86_valid.h"

static ZydisDecoder zdec[3];
static int verbose;

/* Expected class from Zydis' view of the instruction. */
/* Knights Corner only (MVEX, mask branches): not a PT processor, undefined for us. */
static int is_knc(const ZydisDecodedInstruction *z)
{
	return z->encoding == ZYDIS_INSTRUCTION_ENCODING_MVEX ||
	       z->meta.isa_ext == ZYDIS_ISA_EXT_KNC || z->meta.isa_ext == ZYDIS_ISA_EXT_KNCE ||
	       z->meta.isa_ext == ZYDIS_ISA_EXT_KNCV;
}

static int zclass(const ZydisDecodedInstruction *z)
{
	bool rel = z->raw.imm[0].is_relative; /* not RIP-relative memory */
	bool far = z->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
	switch (z->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		return far ? X86_IC_FAR_JMP : rel ? X86_IC_JMP_DIRECT : X86_IC_JMP_INDIRECT;
	case ZYDIS_MNEMONIC_CALL:
		return far ? X86_IC_FAR_CALL : rel ? X86_IC_CALL_DIRECT : X86_IC_CALL_INDIRECT;
	case ZYDIS_MNEMONIC_RET:
		return far ? X86_IC_FAR_RET : X86_IC_RET_NEAR;
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO:
		return X86_IC_INT;
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
		return X86_IC_IRET;
	case ZYDIS_MNEMONIC_SYSCALL: return X86_IC_SYSCALL;
	case ZYDIS_MNEMONIC_SYSRET: return X86_IC_SYSRET;
	case ZYDIS_MNEMONIC_SYSENTER: return X86_IC_SYSENTER;
	case ZYDIS_MNEMONIC_SYSEXIT: return X86_IC_SYSEXIT;
	case ZYDIS_MNEMONIC_VMLAUNCH: return X86_IC_VMLAUNCH;
	case ZYDIS_MNEMONIC_VMRESUME: return X86_IC_VMRESUME;
	case ZYDIS_MNEMONIC_VMCALL: return X86_IC_VMCALL;
	case ZYDIS_MNEMONIC_PTWRITE: return X86_IC_PTWRITE;
	case ZYDIS_MNEMONIC_HLT: return X86_IC_HLT;
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
		return X86_IC_UD;
	case ZYDIS_MNEMONIC_XBEGIN:
	case ZYDIS_MNEMONIC_XEND:
		/* Relative, but falls through unless a transaction aborts. */
		return X86_IC_OTHER;
	case ZYDIS_MNEMONIC_MOV:
		if (z->opcode_map == ZYDIS_OPCODE_MAP_0F && z->opcode == 0x22 &&
		    z->raw.modrm.reg == 3 && !z->raw.rex.R)
			return X86_IC_MOV_CR3;
		return X86_IC_OTHER;
	default:
		break;
	}
	if (z->meta.category == ZYDIS_CATEGORY_COND_BR)
		return X86_IC_JCC;
	return X86_IC_OTHER;
}

/*
 * Zydis statuses for which x86_decode() may accept the bytes: the opcode is
 * defined and the length is fixed by the encoding, but this particular form
 * #UDs (LOCK where not allowed, a register number that does not exist such as
 * CR9 or a non-1111 vvvv, EVEX mask/field constraints of one instruction).
 * A length decoder need not judge these: the CPU faults on them, so a trace
 * never runs past one.
 */
/*
 * Instructions newer than Zydis 4.0 that x86_decode() knows (from the SDM):
 * WRMSRNS, RDMSRLIST/WRMSRLIST, ERETS/ERETU, LKGS, CMPccXADD. Zydis calls
 * them undefined; the length follows the ordinary ModRM rules.
 */
static int newer_than_zydis(const struct x86_insn *in, int mode)
{
	bool m64 = mode == X86_MODE_64;
	if (in->enc == X86_ENC_LEGACY && in->map == X86_MAP_0F && in->opcode == 0x01)
		return (in->modrm == 0xc6 && in->prefix == 0) ||
		       (m64 && (in->modrm == 0xc6 || in->modrm == 0xca) &&
			(in->prefix == 0xf2 || in->prefix == 0xf3));
	if (in->enc == X86_ENC_LEGACY && in->map == X86_MAP_0F && in->opcode == 0x00)
		return m64 && in->prefix == 0xf2 && (in->modrm >> 3 & 7) == 6;
	if (in->enc == X86_ENC_VEX && in->map == 2 && in->opcode >= 0xe0 && in->opcode <= 0xef)
		return m64 && in->prefix == 0x66 && (in->modrm >> 6) != 3;
	return 0;
}

/*
 * core/x86_valid.c comes from the Zydis that generated it (x86_vzydis): a
 * Zydis linked here that is older knows fewer instructions (4.0 against
 * 4.1: AVX-IFMA and AVX-VNNI-INT8/INT16 in VEX, RAO-INT, ...), whose bytes
 * it calls undefined where the tables accept them. Counted as newer.
 */
static int linked_zydis_older(void)
{
	ZyanU64 v = ZydisGetVersion();
	return (unsigned)((v >> 48) << 8 | (v >> 32 & 0xffff)) < x86_vzydis;
}

static int lenient_ok(ZyanStatus s, const struct x86_insn *in)
{
	if (s == ZYDIS_STATUS_ILLEGAL_LOCK || s == ZYDIS_STATUS_BAD_REGISTER)
		return 1;
	/* Per-instruction EVEX constraints: masking, EVEX.b and vector length. */
	if (s == ZYDIS_STATUS_INVALID_MASK || s == ZYDIS_STATUS_DECODING_ERROR)
		return in->enc == X86_ENC_EVEX;
	return 0;
}

struct stats {
	unsigned long long compared, both_invalid, mismatches, lenient[16], newer;
	unsigned long long by_class[X86_IC_COUNT];
};

static const char *zstatus_name(ZyanStatus s)
{
	switch (s) {
	case ZYDIS_STATUS_NO_MORE_DATA: return "no_more_data";
	case ZYDIS_STATUS_DECODING_ERROR: return "decoding_error";
	case ZYDIS_STATUS_INSTRUCTION_TOO_LONG: return "too_long";
	case ZYDIS_STATUS_BAD_REGISTER: return "bad_register";
	case ZYDIS_STATUS_ILLEGAL_LOCK: return "illegal_lock";
	case ZYDIS_STATUS_ILLEGAL_LEGACY_PFX: return "illegal_legacy_pfx";
	case ZYDIS_STATUS_ILLEGAL_REX: return "illegal_rex";
	case ZYDIS_STATUS_INVALID_MAP: return "invalid_map";
	case ZYDIS_STATUS_MALFORMED_EVEX: return "malformed_evex";
	case ZYDIS_STATUS_INVALID_MASK: return "invalid_mask";
	default: return "other";
	}
}

static unsigned status_slot(ZyanStatus s)
{
	return (unsigned)(ZYAN_STATUS_CODE(s) & 15);
}

static void hexdump(char *buf, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(buf + 3 * i, "%02x ", p[i]);
}

/*
 * Compare one decode. Returns the length to advance by (Zydis' length, or 1
 * when Zydis found nothing).
 */
static unsigned compare_one(struct stats *st, const char *where, const uint8_t *p,
			    size_t avail, uint64_t ip, int mode, unsigned long long *reported)
{
	ZydisDecodedInstruction z;
	ZydisDecoderContext ctx;
	struct x86_insn in;
	char hex[64];
	int n = x86_decode(&in, p, avail, ip, (enum x86_mode)mode);
	ZyanStatus s = ZydisDecoderDecodeInstruction(&zdec[mode], &ctx, p, avail, &z);
	size_t show = avail < 15 ? avail : 15;
	if (ZYAN_SUCCESS(s) && is_knc(&z))
		s = ZYDIS_STATUS_DECODING_ERROR;

	if (!ZYAN_SUCCESS(s)) {
		if (n < 0) {
			st->both_invalid++;
			return 1;
		}
		if (s == ZYDIS_STATUS_DECODING_ERROR &&
		    (newer_than_zydis(&in, mode) || linked_zydis_older())) {
			st->newer++;
			return 1;
		}
		if (lenient_ok(s, &in)) {
			if (verbose && st->lenient[status_slot(s)] < 8) {
				hexdump(hex, p, show);
				printf("# lenient %s mode %d: %s: zydis %s, x86_decode %d\n", where,
				       16 << mode, hex, zstatus_name(s), n);
			}
			st->lenient[status_slot(s)]++;
			return 1;
		}
		st->mismatches++;
		if ((*reported)++ < 20) {
			hexdump(hex, p, show);
			printf("# %s mode %d: %s: zydis %s, x86_decode %d\n", where, 16 << mode, hex,
			       zstatus_name(s), n);
		}
		return 1;
	}
	st->compared++;
	int zc = zclass(&z);
	bool bad = n != z.length || (n > 0 && in.iclass != zc);
	uint64_t zt = 0;
	bool direct = zc == X86_IC_JCC || zc == X86_IC_JMP_DIRECT || zc == X86_IC_CALL_DIRECT;
	if (!bad && direct) {
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		ZydisDecoderDecodeOperands(&zdec[mode], &ctx, &z, ops, z.operand_count);
		ZydisCalcAbsoluteAddress(&z, &ops[0], ip, &zt);
		/* Zydis does not wrap; the CPU wraps (E)IP to the operand size. */
		if (mode != X86_MODE_64)
			zt &= z.operand_width == 16 ? 0xffff : 0xffffffff;
		bad = !in.has_target || in.target != zt;
	} else if (!bad && n > 0 && in.has_target != (zc == X86_IC_OTHER && z.raw.imm[0].is_relative)) {
		bad = true;
	}
	if (!bad) {
		st->by_class[in.iclass]++;
		return z.length;
	}
	st->mismatches++;
	if ((*reported)++ < 20) {
		hexdump(hex, p, show);
		printf("# %s mode %d @%llx: %s: zydis %s len %u class %s target %llx; "
		       "x86_decode %d class %s target %llx\n",
		       where, 16 << mode, (unsigned long long)ip, hex,
		       ZydisMnemonicGetString(z.mnemonic), z.length, x86_iclass_name(zc),
		       (unsigned long long)zt, n, n > 0 ? x86_iclass_name(in.iclass) : x86_errstr(n),
		       (unsigned long long)in.target);
	}
	return z.length;
}

static void print_stats(const char *what, const struct stats *st)
{
	unsigned long long len = 0;
	for (int i = 0; i < 16; i++)
		len += st->lenient[i];
	printf("# %s: %llu compared, %llu both invalid, %llu mismatches, %llu newer than zydis, "
	       "%llu accepted where zydis faults them", what, st->compared, st->both_invalid,
	       st->mismatches, st->newer, len);
	for (int i = 0; i < 16; i++)
		if (st->lenient[i])
			printf(" [%s %llu]", zstatus_name(ZYAN_MAKE_STATUS(1, ZYAN_MODULE_ZYDIS, i)),
			       st->lenient[i]);
	printf("\n");
	if (verbose) {
		printf("#  classes:");
		for (int c = 0; c < X86_IC_COUNT; c++)
			if (st->by_class[c])
				printf(" %s=%llu", x86_iclass_name(c), st->by_class[c]);
		printf("\n");
	}
}

static unsigned long long sweep(struct stats *st, const char *path, const uint8_t *p,
				uint64_t n, uint64_t addr, int mode, unsigned long long *reported)
{
	unsigned long long before = st->compared;
	for (uint64_t off = 0; off < n;)
		off += compare_one(st, path, p + off, n - off, addr + off, mode, reported);
	return st->compared - before;
}

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }

/* Code sections of a PE/COFF image (UEFI applications, PE32+ or PE32). */
static unsigned long long check_pe(const char *path, const uint8_t *m, size_t size,
				   struct stats *st, unsigned long long *reported)
{
	if (size < 0x40 || m[0] != 'M' || m[1] != 'Z')
		return 0;
	uint32_t pe = rd32(m + 0x3c);
	if ((uint64_t)pe + 24 > size || memcmp(m + pe, "PE\0\0", 4))
		return 0;
	uint32_t machine = rd16(m + pe + 4), nsec = rd16(m + pe + 6), optsz = rd16(m + pe + 20);
	int mode = machine == 0x8664 ? X86_MODE_64 : machine == 0x14c ? X86_MODE_32 : -1;
	const uint8_t *opt = m + pe + 24;
	if (mode < 0 || (uint64_t)pe + 24 + optsz + 40ull * nsec > size)
		return 0;
	uint64_t base = rd16(opt) == 0x20b ? rd32(opt + 24) | (uint64_t)rd32(opt + 28) << 32
					   : rd32(opt + 28);
	unsigned long long k = 0;
	for (uint32_t i = 0; i < nsec; i++) {
		const uint8_t *sh = opt + optsz + 40 * i;
		uint32_t vsize = rd32(sh + 8), va = rd32(sh + 12), raw = rd32(sh + 16),
			 ptr = rd32(sh + 20), ch = rd32(sh + 36);
		if (!(ch & 0x20000020u) || (uint64_t)ptr + raw > size)
			continue;
		uint32_t n = vsize && vsize < raw ? vsize : raw;
		k += sweep(st, path, m + ptr, n, base + va, mode, reported);
	}
	return k;
}

/* Executable sections of an x86 ELF file (64- or 32-bit, linked or not). */
static unsigned long long check_elf(const char *path, const uint8_t *m, size_t size,
				    int mode, struct stats *st, unsigned long long *reported)
{
	unsigned long long k = 0;
	if (size < sizeof(Elf32_Ehdr) || memcmp(m, ELFMAG, SELFMAG))
		return 0;
	if (m[EI_CLASS] == ELFCLASS64) {
		const Elf64_Ehdr *eh = (const void *)m;
		if (eh->e_machine != EM_X86_64 || !eh->e_shoff ||
		    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
			return 0;
		const Elf64_Shdr *sh = (const void *)(m + eh->e_shoff);
		for (unsigned i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_type == SHT_PROGBITS && (sh[i].sh_flags & SHF_EXECINSTR) &&
			    sh[i].sh_offset + sh[i].sh_size <= size)
				k += sweep(st, path, m + sh[i].sh_offset, sh[i].sh_size, sh[i].sh_addr,
					   mode < 0 ? X86_MODE_64 : mode, reported);
	} else if (m[EI_CLASS] == ELFCLASS32) {
		const Elf32_Ehdr *eh = (const void *)m;
		if (eh->e_machine != EM_386 || !eh->e_shoff ||
		    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf32_Shdr) > size)
			return 0;
		const Elf32_Shdr *sh = (const void *)(m + eh->e_shoff);
		for (unsigned i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_type == SHT_PROGBITS && (sh[i].sh_flags & SHF_EXECINSTR) &&
			    (uint64_t)sh[i].sh_offset + sh[i].sh_size <= size)
				k += sweep(st, path, m + sh[i].sh_offset, sh[i].sh_size, sh[i].sh_addr,
					   mode < 0 ? X86_MODE_32 : mode, reported);
	}
	return k;
}

/* One file: ELF or PE; mode < 0 takes it from the file. Returns instructions. */
static unsigned long long check_file(const char *path, int mode, struct stats *st)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	struct stat sb;
	if (fstat(fd, &sb) || sb.st_size < 64) {
		close(fd);
		return 0;
	}
	size_t size = (size_t)sb.st_size;
	const uint8_t *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	unsigned long long reported = 0;
	unsigned long long k = check_elf(path, m, size, mode, st, &reported);
	if (!k)
		k = check_pe(path, m, size, st, &reported);
	munmap((void *)m, size);
	return k;
}

/* Every file in DIR whose name ends in SUFFIX, as one check. */
static void check_dir(const char *dir, const char *suffix, int mode, const char *what,
		      struct stats *total)
{
	struct stats st = { 0 };
	DIR *d = opendir(dir);
	int files = 0;
	if (d) {
		struct dirent *e;
		char path[512];
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name), k = strlen(suffix);
			if (n < k || strcmp(e->d_name + n - k, suffix))
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			files += check_file(path, mode, &st) > 0;
		}
		closedir(d);
	}
	char name[256];
	snprintf(name, sizeof name, "zydis agrees on %s: %d files in %s (%llu instructions)", what,
		 files, dir, st.compared);
	CHECKF(files > 0 && st.mismatches == 0, name, "%llu mismatches", st.mismatches);
	print_stats(what, &st);
	total->compared += st.compared;
	total->mismatches += st.mismatches;
}

/* xorshift64*: deterministic, seeded per run. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dull;
}

static void fill_biased(uint8_t *b, size_t n, int mode)
{
	static const uint8_t pfx[] = { 0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x3e, 0x26, 0x64,
		0x65, 0x36, 0x48, 0x41, 0x4c };
	for (size_t i = 0; i < n; i += 8) {
		uint64_t r = rnd();
		memcpy(b + i, &r, n - i < 8 ? n - i : 8);
	}
	size_t k = 0;
	uint64_t r = rnd();
	unsigned np = r & 3;
	r >>= 2;
	for (unsigned i = 0; i < np; i++, r >>= 4)
		b[k++] = pfx[(r & 15) % (mode == X86_MODE_64 ? 14 : 11)];
	switch (r & 7) {
	case 0: b[k++] = 0x0f; break;
	case 1: b[k++] = 0x0f; b[k++] = 0x38; break;
	case 2: b[k++] = 0x0f; b[k++] = 0x3a; break;
	case 3: b[k++] = 0xc4; b[k] |= mode == X86_MODE_64 ? 0 : 0xc0;
		b[k] = (uint8_t)((b[k] & 0xe0) | (1 + (b[k] & 1) + (b[k] >> 1 & 1))); break;
	case 4: b[k++] = 0xc5; b[k] |= mode == X86_MODE_64 ? 0 : 0xc0; break;
	case 5: b[k++] = 0x62; b[k] = (uint8_t)((b[k] | (mode == X86_MODE_64 ? 0 : 0xc0)) & ~0x08);
		b[k + 1] |= 0x04; break;
	case 6: b[k++] = 0x8f; b[k] = (uint8_t)((b[k] & 0xe0) | (8 + (b[k] & 3) % 3)); break;
	default: break;
	}
}

int main(int argc, char **argv)
{
	static const ZydisMachineMode mm[3] = { ZYDIS_MACHINE_MODE_LEGACY_16,
		ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_MACHINE_MODE_LONG_64 };
	static const ZydisStackWidth sw[3] = { ZYDIS_STACK_WIDTH_16, ZYDIS_STACK_WIDTH_32,
		ZYDIS_STACK_WIDTH_64 };
	unsigned long long nrand = 4000000;
	int opt;
	while ((opt = getopt(argc, argv, "n:v")) != -1) {
		if (opt == 'n')
			nrand = strtoull(optarg, NULL, 0);
		else
			verbose = 1;
	}
	for (int m = 0; m < 3; m++)
		ZydisDecoderInit(&zdec[m], mm[m], sw[m]);

	/* Real code: programs and libraries with plenty of SSE/AVX/AVX-512. */
	static const char *const files[] = {
		"/usr/bin/bash", "/usr/bin/gdb", "/usr/bin/qemu-system-x86_64",
		"/usr/bin/python3.11", "/usr/bin/perl", "/usr/bin/ld.bfd",
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libm.so.6",
		"/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
		"/usr/lib/x86_64-linux-gnu/libx265.so.199",
		"/usr/lib/x86_64-linux-gnu/libavcodec.so.59.37.100",
		"/usr/lib/x86_64-linux-gnu/libdav1d.so.6",
		"/usr/lib/x86_64-linux-gnu/libgcrypt.so.20",
		"/usr/lib/x86_64-linux-gnu/libZydis.so.4.0",
		"/usr/lib/x86_64-linux-gnu/libipt.so.2",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		/* UEFI applications (PE32+): systemd-boot-efi, grub-efi-amd64-bin */
		"/usr/lib/systemd/boot/efi/systemd-bootx64.efi",
		"/usr/lib/systemd/boot/efi/linuxx64.efi.stub",
		"/usr/lib/grub/x86_64-efi/monolithic/grubx64.efi",
		"/usr/lib/grub/x86_64-efi/monolithic/grubnetx64.efi",
		"/usr/lib/grub/x86_64-efi/monolithic/gcdx64.efi",
	};
	const char *const *list = files;
	int nfiles = (int)(sizeof files / sizeof files[0]);
	if (optind < argc) {
		list = (const char *const *)argv + optind;
		nfiles = argc - optind;
	}
	struct stats real = { 0 };
	int used = 0;
	for (int i = 0; i < nfiles; i++) {
		unsigned long long mis = real.mismatches;
		unsigned long long k = check_file(list[i], -1, &real);
		if (!k)
			continue;
		used++;
		char name[256];
		snprintf(name, sizeof name, "zydis agrees on %s (%llu instructions)", list[i], k);
		CHECKF(real.mismatches == mis, name, "%llu mismatches", real.mismatches - mis);
	}
	print_stats("real code", &real);
	CHECKF(used >= 3 && real.compared > 1000000, "real code: at least 3 files, 1M instructions",
	       "%d files, %llu instructions", used, real.compared);
	if (optind >= argc) {
		struct stats all = { 0 };
		check_dir("/usr/lib/grub/x86_64-efi", ".mod", -1, "GRUB x86_64-efi modules", &all);
		check_dir("build/x86code/m32", ".o", X86_MODE_32, "clang -m32 objects", &all);
		check_dir("build/x86code/m16", ".o", X86_MODE_16, "clang -m16 objects", &all);
	}

	for (int mode = 0; mode < 3; mode++) {
		struct stats st = { 0 };
		unsigned long long reported = 0;
		uint8_t buf[32];
		for (unsigned long long i = 0; i < nrand; i++) {
			if (i & 1) {
				fill_biased(buf, sizeof buf, mode);
			} else {
				for (size_t j = 0; j < sizeof buf; j += 8) {
					uint64_t r = rnd();
					memcpy(buf + j, &r, 8);
				}
			}
			uint64_t ip = rnd();
			if (mode != X86_MODE_64)
				ip &= mode == X86_MODE_16 ? 0xffff : 0xffffffff;
			compare_one(&st, "random", buf, sizeof buf, ip, mode, &reported);
		}
		char name[128];
		snprintf(name, sizeof name, "random bytes, %d-bit mode", 16 << mode);
		print_stats(name, &st);
		CHECKF(st.mismatches == 0, name, "%llu mismatches of %llu", st.mismatches, nrand);
	}
	return check_exit();
}

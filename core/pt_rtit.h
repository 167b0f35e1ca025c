/*
 * Bit layout of the Intel PT configuration MSRs and ToPA entries (SDM
 * 33.2.7.2, 33.2.8) and their numbers. Pure constants, shared by core/
 * (configuration validation, the PT unit's rules) and arch/x86_64/
 * (programming). Masks and shifts, no bitfields.
 */
#ifndef EFIPT_CORE_PT_RTIT_H
#define EFIPT_CORE_PT_RTIT_H

/* The IA32_RTIT_* MSRs (33.2.8) */
#define MSR_IA32_RTIT_OUTPUT_BASE     0x560u
#define MSR_IA32_RTIT_OUTPUT_MASK_PTRS 0x561u
#define MSR_IA32_RTIT_CTL             0x570u
#define MSR_IA32_RTIT_STATUS          0x571u
#define MSR_IA32_RTIT_CR3_MATCH       0x572u
#define MSR_IA32_RTIT_ADDR0_A         0x580u /* ADDRn_A = 0x580 + 2n */
#define MSR_IA32_RTIT_ADDR0_B         0x581u /* ADDRn_B = 0x581 + 2n */
#define MSR_IA32_RTIT_ADDR_A(n)       (0x580u + 2u * (n))
#define MSR_IA32_RTIT_ADDR_B(n)       (0x581u + 2u * (n))

/* IA32_RTIT_CTL (33.2.8.2, Table 33-6) */
#define RTIT_CTL_TRACEEN        (1ull << 0)
#define RTIT_CTL_CYCEN          (1ull << 1)
#define RTIT_CTL_OS             (1ull << 2)
#define RTIT_CTL_USER           (1ull << 3)
#define RTIT_CTL_PWREVTEN       (1ull << 4)
#define RTIT_CTL_FUPONPTW       (1ull << 5)
#define RTIT_CTL_FABRICEN       (1ull << 6)
#define RTIT_CTL_CR3FILTER      (1ull << 7)
#define RTIT_CTL_TOPA           (1ull << 8)
#define RTIT_CTL_MTCEN          (1ull << 9)
#define RTIT_CTL_TSCEN          (1ull << 10)
#define RTIT_CTL_DISRETC        (1ull << 11)
#define RTIT_CTL_PTWEN          (1ull << 12)
#define RTIT_CTL_BRANCHEN       (1ull << 13)
#define RTIT_CTL_MTCFREQ_SHIFT  14
#define RTIT_CTL_MTCFREQ_MASK   (0xfull << 14)
#define RTIT_CTL_CYCTHRESH_SHIFT 19
#define RTIT_CTL_CYCTHRESH_MASK (0xfull << 19)
#define RTIT_CTL_PSBFREQ_SHIFT  24
#define RTIT_CTL_PSBFREQ_MASK   (0xfull << 24)
#define RTIT_CTL_EVENTEN        (1ull << 31)
#define RTIT_CTL_ADDR_CFG_SHIFT(n) (32 + 4 * (n))
#define RTIT_CTL_ADDR_CFG_MASK(n)  (0xfull << (32 + 4 * (n)))
#define RTIT_CTL_DISTNT         (1ull << 55)
#define RTIT_CTL_INJECTPSBPMI   (1ull << 56)
/* Bits no CPU defines: 18, 23, 30:28, 54:48, 63:57 ("Must be 0"). */
#define RTIT_CTL_RESERVED       ((1ull << 18) | (1ull << 23) | (0x7ull << 28) | \
				 (0x7full << 48) | (0x7full << 57))

/* ADDRn_CFG encodings (33.2.8.2); 3..15 are reserved (#GP) */
#define RTIT_ADDR_CFG_OFF       0u
#define RTIT_ADDR_CFG_FILTER    1u
#define RTIT_ADDR_CFG_STOP      2u

/* IA32_RTIT_STATUS (33.2.8.4, Table 33-7) */
#define RTIT_STATUS_FILTEREN    (1ull << 0)
#define RTIT_STATUS_CONTEXTEN   (1ull << 1)
#define RTIT_STATUS_TRIGGEREN   (1ull << 2)
#define RTIT_STATUS_ERROR       (1ull << 4)
#define RTIT_STATUS_STOPPED     (1ull << 5)
#define RTIT_STATUS_PENDPSB     (1ull << 6)
#define RTIT_STATUS_PENDTOPAPMI (1ull << 7)
#define RTIT_STATUS_BYTECNT_SHIFT 32
#define RTIT_STATUS_BYTECNT_MASK (0x1ffffull << 32)
/* Written by the processor only; WRMSR ignores them. */
#define RTIT_STATUS_RO          (RTIT_STATUS_FILTEREN | RTIT_STATUS_CONTEXTEN | \
				 RTIT_STATUS_TRIGGEREN)
/* Bit 3, 31:8 and 63:49: "Must be 0". */
#define RTIT_STATUS_RESERVED    ((1ull << 3) | (0xffffffull << 8) | (0x7fffull << 49))

/* IA32_RTIT_OUTPUT_BASE (33.2.8.7): bits 6:0 reserved, MAXPHYADDR-1:7 base */
#define RTIT_BASE_RESERVED_LOW  0x7full

/* IA32_RTIT_OUTPUT_MASK_PTRS (33.2.8.8) */
#define RTIT_MASK_LOWER         0x7full          /* bits 6:0 read as 1 */
#define RTIT_MASK_TABLE_OFFSET_SHIFT 7           /* ToPA: entry index in 31:7 */
#define RTIT_MASK_TABLE_OFFSET_MASK 0xffffff80ull
#define RTIT_MASK_OUTPUT_OFFSET_SHIFT 32

/* IA32_RTIT_CR3_MATCH (33.2.8.6): bits 4:0 reserved */
#define RTIT_CR3_RESERVED       0x1full

/* ToPA table entry (33.2.7.2, Figure 33-2, Table 33-3):
 *  63      MAXPHYADDR  MAXPHYADDR-1    12 11 10 9    6 5   4    3   2   1   0
 * | reserved         | base[..:12]      | rsv | Size  |rsv|STOP|rsv|INT|rsv|END|
 */
#define TOPA_END                (1ull << 0)
#define TOPA_INT                (1ull << 2)
#define TOPA_STOP               (1ull << 4)
#define TOPA_SIZE_SHIFT         6
#define TOPA_SIZE_MASK          (0xfull << 6)   /* region = 4 KiB << Size */
#define TOPA_BASE_SHIFT         12
#define TOPA_RESERVED_LOW       ((1ull << 1) | (1ull << 3) | (1ull << 5) | (3ull << 10))
#define TOPA_MIN_REGION         4096ull
#define TOPA_MAX_REGION         (128ull << 20)  /* Size encoding 15 */
#define TOPA_MAX_ENTRY_INDEX    0x1fffffu       /* table offset 0FFFFF8H / 8 */

/* Single-range output (33.2.7.1): 128 bytes .. 4 GiB, power of two */
#define SINGLE_MIN_SIZE         128ull
#define SINGLE_MAX_SIZE         (4ull << 30)

#endif

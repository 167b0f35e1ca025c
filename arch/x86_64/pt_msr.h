/*
 * Intel PT MSR numbers and IA32_RTIT_* field masks (SDM 33.2.8, Table 33-6
 * and the MSR descriptions that follow it). Masks and shifts, no bitfields.
 */
#ifndef EFIPT_ARCH_PT_MSR_H
#define EFIPT_ARCH_PT_MSR_H

#define MSR_PLATFORM_INFO             0x0ceu
#define MSR_IA32_RTIT_OUTPUT_BASE     0x560u
#define MSR_IA32_RTIT_OUTPUT_MASK_PTRS 0x561u
#define MSR_IA32_RTIT_CTL             0x570u
#define MSR_IA32_RTIT_STATUS          0x571u
#define MSR_IA32_RTIT_CR3_MATCH       0x572u
#define MSR_IA32_RTIT_ADDR0_A         0x580u /* ADDRn_A = 0x580 + 2n */
#define MSR_IA32_RTIT_ADDR0_B         0x581u /* ADDRn_B = 0x581 + 2n */
#define MSR_IA32_RTIT_ADDR_A(n)       (0x580u + 2u * (n))
#define MSR_IA32_RTIT_ADDR_B(n)       (0x581u + 2u * (n))

/* IA32_RTIT_CTL (33.2.8.2) */
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

/* ADDRn_CFG encodings (33.2.8.2) */
#define RTIT_ADDR_CFG_OFF       0u
#define RTIT_ADDR_CFG_FILTER    1u
#define RTIT_ADDR_CFG_STOP      2u

/* IA32_RTIT_STATUS (33.2.8.4) */
#define RTIT_STATUS_FILTEREN    (1ull << 0)
#define RTIT_STATUS_CONTEXTEN   (1ull << 1)
#define RTIT_STATUS_TRIGGEREN   (1ull << 2)
#define RTIT_STATUS_ERROR       (1ull << 4)
#define RTIT_STATUS_STOPPED     (1ull << 5)
#define RTIT_STATUS_PENDPSB     (1ull << 6)
#define RTIT_STATUS_PENDTOPAPMI (1ull << 7)
#define RTIT_STATUS_BYTECNT_SHIFT 32
#define RTIT_STATUS_BYTECNT_MASK (0x1ffffull << 32)

/* IA32_RTIT_OUTPUT_MASK_PTRS (33.2.8.8) */
#define RTIT_MASK_LOWER         0x7full          /* bits 6:0 read as 1 */
#define RTIT_MASK_TABLE_OFFSET_SHIFT 7           /* ToPA: entry index << 3 in 31:7 */
#define RTIT_MASK_TABLE_OFFSET_MASK 0xffffff80ull
#define RTIT_MASK_OUTPUT_OFFSET_SHIFT 32

/* ToPA table entry (33.2.7.2, Figure 33-3):
 *  63        MAXPHYADDR-1     12 11 10 9 6  5  4  3  2  1  0
 * | reserved | output base  [..] | rsv | Size | rsv|STOP|rsv|INT|rsv|END|
 */
#define TOPA_END                (1ull << 0)
#define TOPA_INT                (1ull << 2)
#define TOPA_STOP               (1ull << 4)
#define TOPA_SIZE_SHIFT         6
#define TOPA_SIZE_MASK          (0xfull << 6)   /* region = 4 KiB << Size */
#define TOPA_BASE_SHIFT         12

#endif

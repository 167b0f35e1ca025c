/*
 * Intel PT MSR numbers (SDM 33.2.8). The field masks of these MSRs and of
 * ToPA entries are in core/pt_rtit.h (config validation in core/ uses them).
 */
#ifndef EFIPT_ARCH_PT_MSR_H
#define EFIPT_ARCH_PT_MSR_H

#include "core/pt_rtit.h"

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

#endif

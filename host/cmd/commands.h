/* Host CLI subcommands: each lives in host/cmd/<name>.c. */
#ifndef EFIPT_HOST_COMMANDS_H
#define EFIPT_HOST_COMMANDS_H

/* argv[0] is "efipt NAME" (getopt prints it). Return the process exit status. */
int cmd_caps(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_packets(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_insn(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_coverage(int argc, char **argv);
int cmd_qemu(int argc, char **argv);
int cmd_symbols(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_calls(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif

/* softrnic.h - shared bits of the `softrnic` command-line tool. */
#ifndef SOFTRNIC_TOOL_H
#define SOFTRNIC_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef SOFTRNIC_VERSION          /* set by CMake from project(VERSION) */
#define SOFTRNIC_VERSION "0.0.0"
#endif

int cmd_run(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int srn_cmd_fabric(int argc, char **argv);   /* cmd_fabric.c */
int srn_cmd_sim(int argc, char **argv);      /* cmd_sim.c */
int srn_cmd_cc(int argc, char **argv);       /* cmd_cc.c */

/* help texts, generated from the files man/PAGE.1.txt (build/gen/softrnic_help.c) */
extern const char *const help_main;
extern const char *const help_run;
extern const char *const help_devices;
extern const char *const help_stats;
extern const char *const help_fabric;
extern const char *const help_sim;
extern const char *const help_cc;

/* paths.c: where the tool's companions are, found from /proc/self/exe.
 * A tool in a build tree (BUILD/bin/softrnic next to BUILD/CMakeCache.txt)
 * uses BUILD/lib and the source tree's include/; an installed one uses the
 * directories of its installation (SRN_REL_LIBDIR, SRN_REL_INCLUDEDIR
 * relative to its bin directory). Each returns 0 and a canonical path, or
 * -1 (out = "") if the directory does not exist. */
int tool_lib_dir(char *out, size_t cap);
int tool_include_dir(char *out, size_t cap);

/* "0000:0000:0000:0000:0000:ffff:7f00:0001" (as ibv_devinfo prints GIDs) */
void tool_fmt_gid(char out[40], const uint8_t gid[16]);
/* "0200:1234:5678:9abc" */
void tool_fmt_guid(char out[20], uint64_t guid);
/* If argv[*i] is "--opt" or "--opt=VAL" (or short form), store VAL (next
 * argument or after '=') in *val and advance *i; returns 1 if matched, 0 if
 * not, -1 (message printed) if the value is missing. */
int tool_opt_val(int argc, char **argv, int *i, const char *lopt, const char *sopt,
		 const char **val);
bool tool_is_help(const char *a);
/* print JSON string literal */
void tool_json_str(const char *s);

#endif

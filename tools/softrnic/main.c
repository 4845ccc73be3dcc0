/*
 * main.c - `softrnic`, the command-line tool of the softrnic software RNIC:
 * subcommand dispatch, --help, --version and small shared helpers. The help
 * texts are the files man/PAGE.1.txt, compiled in by cmake/SrnDocs.cmake.
 */
#include <stdio.h>
#include <string.h>

#include "softrnic.h"

void tool_fmt_gid(char out[40], const uint8_t gid[16])
{
	char *p = out;
	for (int i = 0; i < 16; i += 2)
		p += sprintf(p, "%s%02x%02x", i ? ":" : "", gid[i], gid[i + 1]);
}

void tool_fmt_guid(char out[20], uint64_t guid)
{
	snprintf(out, 20, "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		 (unsigned)guid & 0xffff);
}

bool tool_is_help(const char *a)
{
	return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

int tool_opt_val(int argc, char **argv, int *i, const char *lopt, const char *sopt,
		 const char **val)
{
	const char *a = argv[*i];
	size_t l = strlen(lopt);
	if (strncmp(a, lopt, l) == 0 && a[l] == '=') {
		*val = a + l + 1;
		return 1;
	}
	if (strcmp(a, lopt) != 0 && !(sopt && strcmp(a, sopt) == 0))
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "softrnic: option %s needs a value\n", a);
		return -1;
	}
	*val = argv[++*i];
	return 1;
}

void tool_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* `softrnic help CMD`: the text of CMD --help (man/softrnic-CMD.1.txt) */
static const struct {
	const char *cmd;
	const char *const *text;
} helps[] = {
	{ "run", &help_run }, { "devices", &help_devices }, { "stats", &help_stats },
	{ "fabric", &help_fabric }, { "sim", &help_sim }, { "cc", &help_cc },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(help_main, stderr);
		return 2;
	}
	const char *c = argv[1];
	if (tool_is_help(c) || strcmp(c, "help") == 0) {
		if (argc > 2 && strcmp(c, "help") == 0) {
			for (size_t k = 0; k < sizeof helps / sizeof helps[0]; k++)
				if (strcmp(argv[2], helps[k].cmd) == 0)
					return fputs(*helps[k].text, stdout), 0;
			fprintf(stderr, "softrnic help: unknown command \"%s\" (try: softrnic --help)\n",
				argv[2]);
			return 2;
		}
		fputs(help_main, stdout);
		return 0;
	}
	if (strcmp(c, "--version") == 0 || strcmp(c, "-V") == 0) {
		printf("softrnic %s\n", SOFTRNIC_VERSION);
		return 0;
	}
	if (strcmp(c, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(c, "devices") == 0)
		return cmd_devices(argc - 1, argv + 1);
	if (strcmp(c, "stats") == 0)
		return cmd_stats(argc - 1, argv + 1);
	if (strcmp(c, "fabric") == 0)
		return srn_cmd_fabric(argc - 1, argv + 1);
	if (strcmp(c, "sim") == 0)
		return srn_cmd_sim(argc - 1, argv + 1);
	if (strcmp(c, "cc") == 0)
		return srn_cmd_cc(argc - 1, argv + 1);
	fprintf(stderr, "softrnic: unknown command \"%s\" (try: softrnic --help)\n", c);
	return 2;
}

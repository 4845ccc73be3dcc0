/*
 * paths.c - where the softrnic tool finds its drop-in libraries and headers:
 * relative to its own executable (/proc/self/exe), so that a build tree, an
 * installation in any prefix (cmake --install --prefix P) and an unpacked
 * package (dpkg -x) all work without configuration.
 *
 *   BUILD/bin/softrnic with BUILD/CMakeCache.txt   -> BUILD/lib, SRN_INCLUDE_DIR
 *   PREFIX/bin/softrnic (installed)                -> PREFIX/bin/SRN_REL_LIBDIR,
 *                                                     PREFIX/bin/SRN_REL_INCLUDEDIR
 *
 * An installed tool never looks at PREFIX/lib itself: that may hold another
 * libibverbs.so.1 (rdma-core built from source), which softrnic must not
 * load in its place.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "softrnic.h"

#ifndef SRN_REL_LIBDIR          /* set by cmake/SrnInstall.cmake */
#define SRN_REL_LIBDIR "../lib/softrnic"
#endif
#ifndef SRN_REL_INCLUDEDIR
#define SRN_REL_INCLUDEDIR "../include"
#endif

/* directory of the running executable; 0 or -1 */
static int exe_dir(char *out, size_t cap)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	if ((size_t)snprintf(out, cap, "%s", exe) >= cap)
		return -1;
	return 0;
}

static bool in_build_tree(const char *dir)
{
	char marker[PATH_MAX + 32];
	snprintf(marker, sizeof marker, "%s/../CMakeCache.txt", dir);
	return access(marker, F_OK) == 0;
}

/* canonical dir/rel (rel absolute: rel) into out; 0 or -1 */
static int resolve(const char *dir, const char *rel, char *out, size_t cap)
{
	char tmp[2 * PATH_MAX + 2];
	out[0] = 0;
	if (rel[0] == '/')
		snprintf(tmp, sizeof tmp, "%s", rel);
	else
		snprintf(tmp, sizeof tmp, "%s/%s", dir, rel);
	char *rp = realpath(tmp, NULL);
	if (!rp)
		return -1;
	int r = (size_t)snprintf(out, cap, "%s", rp) < cap ? 0 : -1;
	if (r)
		out[0] = 0;
	free(rp);
	return r;
}

int tool_lib_dir(char *out, size_t cap)
{
	char dir[PATH_MAX];
	out[0] = 0;
	if (exe_dir(dir, sizeof dir))
		return -1;
	return resolve(dir, in_build_tree(dir) ? "../lib" : SRN_REL_LIBDIR, out, cap);
}

int tool_include_dir(char *out, size_t cap)
{
	char dir[PATH_MAX];
	out[0] = 0;
	if (exe_dir(dir, sizeof dir))
		return -1;
	if (in_build_tree(dir)) {
#ifdef SRN_INCLUDE_DIR
		return resolve(dir, SRN_INCLUDE_DIR, out, cap);
#else
		return -1;
#endif
	}
	return resolve(dir, SRN_REL_INCLUDEDIR, out, cap);
}

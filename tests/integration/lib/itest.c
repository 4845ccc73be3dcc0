/* itest.c - see itest.h. */
#include "itest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const char *itest_role;

void itest_die(const char *what)
{
	if (itest_role)
		fprintf(stderr, "%s: %s: %s\n", itest_role, what, strerror(errno));
	else
		perror(what);
	exit(2);
}

bool itest_xfer(int s, void *p, size_t n, bool send_it)
{
	uint8_t *b = p;
	while (n) {
		ssize_t r = send_it ? write(s, b, n) : read(s, b, n);
		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
	}
	return true;
}

void itest_xfer_or_die(int s, void *p, size_t n, bool send_it)
{
	if (!itest_xfer(s, p, n, send_it))
		itest_die("oob exchange");
}

int itest_connect(const char *server, int port)
{
	for (int tries = 0; tries < 100; tries++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
		inet_pton(AF_INET, server, &a.sin_addr);
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			return s;
		close(s);
		usleep(100000);
	}
	itest_die("Couldn't connect");
}

int itest_listen_socket(int port, int n)
{
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, n))
		itest_die("listen");
	return l;
}

int itest_listen(int port)
{
	int l = itest_listen_socket(port, 1);
	int s = accept(l, NULL, NULL);
	if (s < 0)
		itest_die("accept");
	close(l);
	return s;
}

struct ibv_context *itest_open_dev(const char *name)
{
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_device *dev = NULL;
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev) {
		errno = ENODEV;
		itest_die("device not found");
	}
	struct ibv_context *ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!ctx)
		itest_die("ibv_open_device");
	return ctx;
}

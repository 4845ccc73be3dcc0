/*
 * itest.h - helpers shared by the integration-test verbs programs
 * (rdma_ops, bulk_xfer, fault_mix, cc_flows): the out-of-band TCP exchange
 * between the two processes and opening a device by name. Each program is
 * an ordinary verbs program; these are the parts that are not under test.
 */
#ifndef ITEST_H
#define ITEST_H

#include <stdbool.h>
#include <stddef.h>
#include <infiniband/verbs.h>

/* print "what: strerror(errno)" (prefixed by itest_role if set), exit 2 */
void itest_die(const char *what) __attribute__((noreturn));
extern const char *itest_role;

/* write or read exactly n bytes; false on EOF or error */
bool itest_xfer(int s, void *p, size_t n, bool send_it);
/* the same, dying on failure */
void itest_xfer_or_die(int s, void *p, size_t n, bool send_it);

/* connect to server:port, retrying for up to 10 s (the server may not listen
 * yet); dies with "Couldn't connect" (the scripts' retry marker) */
int itest_connect(const char *server, int port);
/* listening socket on port (SO_REUSEADDR), backlog n */
int itest_listen_socket(int port, int n);
/* listen on port and accept one connection */
int itest_listen(int port);

/* open the device with this name; dies if absent */
struct ibv_context *itest_open_dev(const char *name);

#endif

/*
 * share.c - a context's cmd_fd, and sharing a context and its objects
 * between contexts and processes: ibv_import_device, ibv_import_pd,
 * ibv_import_mr (docs/verbs.md "Sharing a context").
 *
 * A softrnic device lives in the process that opened it (its sockets, its
 * progress thread, its memory). Every context's cmd_fd is one end of an
 * AF_UNIX SOCK_SEQPACKET socketpair; the process's share server (one
 * thread, started with the first context) answers the other end.
 *
 * ibv_import_device(fd) sends CONNECT over fd with a fresh socketpair end
 * (SCM_RIGHTS) and reads HELLO from it:
 *   - in the owner's process (HELLO's pid is ours and its token names one of
 *     our contexts): a new context of the same device that imports the
 *     owner's PDs and MRs by handle (ordinary objects: same core device);
 *   - in another process (after fork, or fd passed with SCM_RIGHTS): a
 *     remote context. It owns no device; each verb is a request on its
 *     private socket that the owner's server executes on a shadow context
 *     (a same-process import of the owner) and answers. Objects made through
 *     a connection are destroyed when it closes (the importer exits or
 *     closes the context), as the kernel cleans up a closed uverbs file.
 *
 * What a remote context offers (everything else: EOPNOTSUPP):
 *   query device/port/GID/P_Key (from HELLO), PDs (alloc, dealloc, import),
 *   MRs (import; registration of memory that is MAP_SHARED at the same
 *   address in both processes - EFAULT otherwise), CQs without channels
 *   (create, destroy, poll), RC/UC QPs (create, modify, query, destroy),
 *   ibv_post_send (SEND, SEND_WITH_IMM/INV, RDMA WRITE/READ, atomics,
 *   LOCAL_INV; inline data copied into the request) and ibv_post_recv.
 *   SGE addresses are the owner's: its own MRs, or shared memory.
 *
 * Requests are fixed-size records; the server checks size, magic, op,
 * every handle (per connection table, typed) and every count before it
 * calls a verb, and the verbs check the rest, so a hostile importer gets
 * errnos, never memory it was not granted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <inttypes.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "srn_verbs.h"

#define SH_MAGIC      0x534e5231u   /* "SNR1" */
#define SH_MAX_SGE    32
#define SH_MAX_INLINE 256
#define SH_MAX_WC     32
#define SH_MAX_OBJ    1024
#define SH_HELLO_MS   5000

enum sh_op {
	SH_CONNECT = 1, SH_HELLO, SH_ALLOC_PD, SH_DEALLOC_PD, SH_IMPORT_PD, SH_REG_MR,
	SH_DEREG_MR, SH_IMPORT_MR, SH_CREATE_CQ, SH_DESTROY_CQ, SH_POLL_CQ, SH_CREATE_QP,
	SH_MODIFY_QP, SH_QUERY_QP, SH_DESTROY_QP, SH_POST_SEND, SH_POST_RECV, SH_NOPS
};
enum sh_kind { SK_NONE, SK_PD, SK_MR, SK_CQ, SK_QP };

struct sh_sge { uint64_t addr; uint32_t length, lkey; };

struct sh_req {
	uint32_t magic, op;
	uint32_t h[3];                  /* handles of the objects named */
	int32_t  i[4];                  /* small arguments */
	uint64_t u[6];                  /* addresses, lengths, wr_id ... */
	struct ibv_qp_attr attr;        /* MODIFY_QP */
	struct ibv_qp_cap cap;          /* CREATE_QP */
	uint32_t nsge, ninl;
	struct sh_sge sge[SH_MAX_SGE];
	uint8_t inl[SH_MAX_INLINE];
};

struct sh_resp {
	uint32_t magic;
	int32_t  rc;                    /* 0 or an errno */
	uint32_t h, n;
	uint64_t u[6];
	struct ibv_qp_cap cap;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;   /* pointers zeroed */
	struct ibv_wc wc[SH_MAX_WC];
	/* HELLO */
	int32_t  pid;
	uint64_t token, guid;
	uint32_t ip;
	char     name[SRN_RT_NAME_MAX];
};

struct sh_connect { uint32_t magic, op; };

/* ------------------------------------------------------------------------ */
/* the server: one thread per process, every context's listening end       */

struct sh_obj { uint8_t kind; void *p; };

struct sh_conn {
	int fd;
	pid_t pid;                      /* the importer (SO_PEERCRED) */
	uint64_t token;                 /* the context it imports */
	struct ibv_context *shadow;     /* made at its first request */
	struct sh_obj obj[SH_MAX_OBJ];
	struct sh_conn *next;
};

struct sh_listener {
	int fd;
	uint64_t token;
	bool dead;                      /* its context closed: the thread closes fd */
	struct sh_listener *next;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sh_listener *g_listeners;
static struct sh_conn *g_conns;         /* the server thread's only */
static int g_wake[2] = { -1, -1 };
static bool g_running;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

static void wake_server(void)
{
	char c = 1;
	ssize_t r = write(g_wake[1], &c, 1);
	(void)r;
}

/* after fork the child has no server thread; the parent's listeners and
 * connections are the parent's to serve */
static void atfork_child(void)
{
	g_running = false;
	g_listeners = NULL;
	g_conns = NULL;
	g_wake[0] = g_wake[1] = -1;
	pthread_mutex_init(&g_lock, NULL);
}

static void atfork_register(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

static int obj_put(struct sh_conn *c, uint8_t kind, void *p)
{
	for (int i = 0; i < SH_MAX_OBJ; i++)
		if (c->obj[i].kind == SK_NONE) {
			c->obj[i].kind = kind;
			c->obj[i].p = p;
			return i + 1;
		}
	return 0;
}

static void *obj_get(struct sh_conn *c, uint32_t h, uint8_t kind)
{
	if (h == 0 || h > SH_MAX_OBJ || c->obj[h - 1].kind != kind)
		return NULL;
	return c->obj[h - 1].p;
}

static void obj_drop(struct sh_conn *c, uint32_t h)
{
	c->obj[h - 1].kind = SK_NONE;
	c->obj[h - 1].p = NULL;
}

/* one line of /proc/PID/maps that contains x */
struct map_ent { uint64_t start, end, off, inode; unsigned dmaj, dmin; char perm[5]; };

static bool map_find(pid_t pid, uint64_t x, struct map_ent *out)
{
	char path[64], line[512];
	FILE *f;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		struct map_ent e;
		memset(&e, 0, sizeof(e));
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64,
			   &e.start, &e.end, e.perm, &e.off, &e.dmaj, &e.dmin, &e.inode) != 7)
			continue;
		if (x >= e.start && x < e.end) {
			*out = e;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* Is [addr, addr+len) the same shared memory in this process and in pid:
 * every byte mapped MAP_SHARED, from the same file (or shmem object) at
 * the same offset in both? */
static bool same_shared_memory(pid_t pid, uint64_t addr, uint64_t len)
{
	uint64_t x = addr, end = addr + len;

	if (!len || end < addr)
		return false;
	while (x < end) {
		struct map_ent a, b;
		if (!map_find(getpid(), x, &a) || !map_find(pid, x, &b))
			return false;
		if (a.perm[3] != 's' || b.perm[3] != 's' || a.inode != b.inode ||
		    a.dmaj != b.dmaj || a.dmin != b.dmin ||
		    a.off + (x - a.start) != b.off + (x - b.start))
			return false;
		x = a.end < b.end ? a.end : b.end;
	}
	return true;
}

static struct ibv_context *import_local(uint64_t token);

static void serve(struct sh_conn *c, const struct sh_req *r, struct sh_resp *o)
{
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int h;

	if (!c->shadow) {
		c->shadow = import_local(c->token);
		if (!c->shadow) {
			o->rc = ENODEV;         /* the context was closed */
			return;
		}
	}
	switch (r->op) {
	case SH_ALLOC_PD:
	case SH_IMPORT_PD:
		pd = r->op == SH_ALLOC_PD ? ibv_alloc_pd(c->shadow)
					  : ibv_import_pd(c->shadow, (uint32_t)r->u[0]);
		if (!pd) {
			o->rc = errno ? errno : EINVAL;
			return;
		}
		h = obj_put(c, SK_PD, pd);
		if (!h) {
			ibv_dealloc_pd(pd);
			o->rc = ENOMEM;
			return;
		}
		o->h = (uint32_t)h;
		o->u[0] = pd->handle;
		return;
	case SH_DEALLOC_PD:
		if (!(pd = obj_get(c, r->h[0], SK_PD))) {
			o->rc = EINVAL;
			return;
		}
		o->rc = ibv_dealloc_pd(pd);
		if (!o->rc)
			obj_drop(c, r->h[0]);
		return;
	case SH_REG_MR:
	case SH_IMPORT_MR:
		if (!(pd = obj_get(c, r->h[0], SK_PD))) {
			o->rc = EINVAL;
			return;
		}
		if (r->op == SH_REG_MR) {
			/* only memory both processes see at this address */
			if (!same_shared_memory(c->pid, r->u[0], r->u[1])) {
				o->rc = EFAULT;
				return;
			}
			mr = ibv_reg_mr_iova2(pd, (void *)(uintptr_t)r->u[0], (size_t)r->u[1],
					      r->u[2], (unsigned int)r->i[0]);
		} else {
			mr = ibv_import_mr(pd, (uint32_t)r->u[0]);
		}
		if (!mr) {
			o->rc = errno ? errno : EINVAL;
			return;
		}
		h = obj_put(c, SK_MR, mr);
		if (!h) {
			ibv_dereg_mr(mr);
			o->rc = ENOMEM;
			return;
		}
		o->h = (uint32_t)h;
		o->u[0] = mr->lkey;
		o->u[1] = mr->rkey;
		o->u[2] = mr->handle;
		o->u[3] = mr->length;
		return;
	case SH_DEREG_MR:
		if (!(mr = obj_get(c, r->h[0], SK_MR))) {
			o->rc = EINVAL;
			return;
		}
		o->rc = ibv_dereg_mr(mr);
		if (!o->rc)
			obj_drop(c, r->h[0]);
		return;
	case SH_CREATE_CQ:
		cq = ibv_create_cq(c->shadow, r->i[0], NULL, NULL, 0);
		if (!cq) {
			o->rc = errno ? errno : EINVAL;
			return;
		}
		h = obj_put(c, SK_CQ, cq);
		if (!h) {
			ibv_destroy_cq(cq);
			o->rc = ENOMEM;
			return;
		}
		o->h = (uint32_t)h;
		o->n = (uint32_t)cq->cqe;
		return;
	case SH_DESTROY_CQ:
		if (!(cq = obj_get(c, r->h[0], SK_CQ))) {
			o->rc = EINVAL;
			return;
		}
		o->rc = ibv_destroy_cq(cq);
		if (!o->rc)
			obj_drop(c, r->h[0]);
		return;
	case SH_POLL_CQ: {
		int n;
		if (!(cq = obj_get(c, r->h[0], SK_CQ)) || r->i[0] < 1 || r->i[0] > SH_MAX_WC) {
			o->rc = EINVAL;
			return;
		}
		n = ibv_poll_cq(cq, r->i[0], o->wc);
		if (n < 0) {
			o->rc = -n;
			return;
		}
		o->n = (uint32_t)n;
		return;
	}
	case SH_CREATE_QP: {
		struct ibv_qp_init_attr ia;
		struct ibv_cq *scq = obj_get(c, r->h[1], SK_CQ), *rcq = obj_get(c, r->h[2], SK_CQ);
		if (!(pd = obj_get(c, r->h[0], SK_PD)) || !scq || !rcq) {
			o->rc = EINVAL;
			return;
		}
		if (r->i[0] != IBV_QPT_RC && r->i[0] != IBV_QPT_UC) {
			o->rc = EOPNOTSUPP;     /* UD needs address handles */
			return;
		}
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = scq;
		ia.recv_cq = rcq;
		ia.qp_type = (enum ibv_qp_type)r->i[0];
		ia.sq_sig_all = r->i[1] != 0;
		ia.cap = r->cap;
		qp = ibv_create_qp(pd, &ia);
		if (!qp) {
			o->rc = errno ? errno : EINVAL;
			return;
		}
		h = obj_put(c, SK_QP, qp);
		if (!h) {
			ibv_destroy_qp(qp);
			o->rc = ENOMEM;
			return;
		}
		o->h = (uint32_t)h;
		o->u[0] = qp->qp_num;
		o->cap = ia.cap;
		return;
	}
	case SH_MODIFY_QP: {
		struct ibv_qp_attr a = r->attr;
		if (!(qp = obj_get(c, r->h[0], SK_QP))) {
			o->rc = EINVAL;
			return;
		}
		o->rc = ibv_modify_qp(qp, &a, r->i[0]);
		return;
	}
	case SH_QUERY_QP:
		if (!(qp = obj_get(c, r->h[0], SK_QP))) {
			o->rc = EINVAL;
			return;
		}
		o->rc = ibv_query_qp(qp, &o->attr, r->i[0], &o->init);
		o->init.qp_context = NULL;
		o->init.send_cq = o->init.recv_cq = NULL;
		o->init.srq = NULL;
		return;
	case SH_DESTROY_QP:
		if (!(qp = obj_get(c, r->h[0], SK_QP))) {
			o->rc = EINVAL;
			return;
		}
		o->rc = ibv_destroy_qp(qp);
		if (!o->rc)
			obj_drop(c, r->h[0]);
		return;
	case SH_POST_SEND: {
		struct ibv_sge sg[SH_MAX_SGE];
		struct ibv_send_wr wr, *bad;
		if (!(qp = obj_get(c, r->h[0], SK_QP)) || r->nsge > SH_MAX_SGE ||
		    r->ninl > SH_MAX_INLINE) {
			o->rc = EINVAL;
			return;
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = r->u[0];
		wr.opcode = (enum ibv_wr_opcode)r->i[0];
		wr.send_flags = (unsigned int)r->i[1];
		switch (wr.opcode) {
		case IBV_WR_SEND: case IBV_WR_SEND_WITH_IMM: case IBV_WR_SEND_WITH_INV:
		case IBV_WR_RDMA_WRITE: case IBV_WR_RDMA_WRITE_WITH_IMM: case IBV_WR_RDMA_READ:
		case IBV_WR_ATOMIC_CMP_AND_SWP: case IBV_WR_ATOMIC_FETCH_AND_ADD:
		case IBV_WR_LOCAL_INV:
			break;
		default:
			o->rc = EOPNOTSUPP;     /* BIND_MW (windows), TSO ... */
			return;
		}
		wr.imm_data = (uint32_t)r->i[3];   /* union with invalidate_rkey */
		if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = r->u[1];
			wr.wr.atomic.compare_add = r->u[2];
			wr.wr.atomic.swap = r->u[3];
			wr.wr.atomic.rkey = (uint32_t)r->i[2];
		} else {
			wr.wr.rdma.remote_addr = r->u[1];
			wr.wr.rdma.rkey = (uint32_t)r->i[2];
		}
		if (wr.send_flags & IBV_SEND_INLINE) {
			/* the importer's bytes, copied by the post */
			sg[0].addr = (uintptr_t)r->inl;
			sg[0].length = r->ninl;
			sg[0].lkey = 0;
			wr.num_sge = r->ninl ? 1 : 0;
		} else {
			for (uint32_t k = 0; k < r->nsge; k++) {
				sg[k].addr = r->sge[k].addr;
				sg[k].length = r->sge[k].length;
				sg[k].lkey = r->sge[k].lkey;
			}
			wr.num_sge = (int)r->nsge;
		}
		wr.sg_list = sg;
		o->rc = ibv_post_send(qp, &wr, &bad);
		return;
	}
	case SH_POST_RECV: {
		struct ibv_sge sg[SH_MAX_SGE];
		struct ibv_recv_wr wr, *bad;
		if (!(qp = obj_get(c, r->h[0], SK_QP)) || r->nsge > SH_MAX_SGE) {
			o->rc = EINVAL;
			return;
		}
		for (uint32_t k = 0; k < r->nsge; k++) {
			sg[k].addr = r->sge[k].addr;
			sg[k].length = r->sge[k].length;
			sg[k].lkey = r->sge[k].lkey;
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = r->u[0];
		wr.sg_list = sg;
		wr.num_sge = (int)r->nsge;
		o->rc = ibv_post_recv(qp, &wr, &bad);
		return;
	}
	default:
		o->rc = EINVAL;
		return;
	}
}

/* the importer went away: destroy what it made, as the kernel does when a
 * uverbs file closes (QPs first, then MRs, CQs, PDs) */
static void conn_free(struct sh_conn *c)
{
	static const uint8_t order[] = { SK_QP, SK_MR, SK_CQ, SK_PD };

	for (unsigned k = 0; k < sizeof(order); k++)
		for (int i = 0; i < SH_MAX_OBJ; i++) {
			struct sh_obj *o = &c->obj[i];
			if (o->kind != order[k])
				continue;
			switch (o->kind) {
			case SK_QP: ibv_destroy_qp(o->p); break;
			case SK_MR: ibv_dereg_mr(o->p); break;
			case SK_CQ: ibv_destroy_cq(o->p); break;
			case SK_PD: ibv_dealloc_pd(o->p); break;
			}
			o->kind = SK_NONE;
		}
	if (c->shadow)
		ibv_close_device(c->shadow);
	close(c->fd);
	free(c);
}

static void send_hello(struct sh_conn *c)
{
	struct srn_context *owner = srn_share_owner(c->token);
	struct sh_resp *o = calloc(1, sizeof(*o));
	ssize_t w;

	if (!o)
		return;
	o->magic = SH_MAGIC;
	o->pid = (int32_t)getpid();
	o->token = c->token;
	if (owner) {
		snprintf(o->name, sizeof(o->name), "%s", owner->vdev->cfg.name);
		o->ip = owner->vdev->cfg.ip.s_addr;
		o->guid = owner->vdev->cfg.guid;
	} else {
		o->rc = ENODEV;
	}
	w = send(c->fd, o, sizeof(*o), MSG_NOSIGNAL);
	(void)w;
	free(o);
}

static void accept_connect(struct sh_listener *l)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct sh_connect m;
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct sh_conn *c;
	int fd = -1;
	ssize_t n = recvmsg(l->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	if (n <= 0)
		return;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (fd < 0)
		return;
	if (n != (ssize_t)sizeof(m) || m.magic != SH_MAGIC || m.op != SH_CONNECT ||
	    (mh.msg_flags & MSG_CTRUNC) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->pid = cred.pid;
	c->token = l->token;
	c->next = g_conns;
	g_conns = c;
	send_hello(c);
}

/* one request of c; false when the connection is over */
static bool conn_step(struct sh_conn *c)
{
	struct sh_req *r = malloc(sizeof(*r));
	struct sh_resp *o = calloc(1, sizeof(*o));
	bool ok = false;
	ssize_t n;

	if (!r || !o)
		goto out;
	n = recv(c->fd, r, sizeof(*r), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		ok = true;
		goto out;
	}
	if (n != (ssize_t)sizeof(*r) || r->magic != SH_MAGIC)
		goto out;               /* EOF, or not our protocol: hang up */
	o->magic = SH_MAGIC;
	serve(c, r, o);
	ok = send(c->fd, o, sizeof(*o), MSG_NOSIGNAL) == (ssize_t)sizeof(*o);
out:
	free(r);
	free(o);
	return ok;
}

static void *server_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd pf[1 + 64 + 256];
		struct sh_listener *ls[64];
		struct sh_conn *cs[256];
		int nl = 0, nc = 0, n = 0;

		pthread_mutex_lock(&g_lock);
		for (struct sh_listener **pp = &g_listeners; *pp;) {
			struct sh_listener *l = *pp;
			if (l->dead) {
				*pp = l->next;
				close(l->fd);
				free(l);
				continue;
			}
			if (nl < 64)
				ls[nl++] = l;
			pp = &l->next;
		}
		pf[n++] = (struct pollfd){ .fd = g_wake[0], .events = POLLIN };
		for (int i = 0; i < nl; i++)
			pf[n++] = (struct pollfd){ .fd = ls[i]->fd, .events = POLLIN };
		pthread_mutex_unlock(&g_lock);
		for (struct sh_conn *c = g_conns; c && nc < 256; c = c->next) {
			cs[nc++] = c;
			pf[n++] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		}
		if (poll(pf, (nfds_t)n, -1) < 0)
			continue;
		if (pf[0].revents) {
			char b[64];
			ssize_t r = read(g_wake[0], b, sizeof(b));
			(void)r;
		}
		/* listeners are only freed by this thread: ls[] stays valid */
		for (int i = 0; i < nl; i++)
			if (pf[1 + i].revents & POLLIN)
				accept_connect(ls[i]);
			else if (pf[1 + i].revents & (POLLHUP | POLLERR))
				ls[i]->dead = true;     /* nobody can connect any more */
		for (int i = 0; i < nc; i++) {
			if (!pf[1 + nl + i].revents)
				continue;
			if (!conn_step(cs[i])) {
				for (struct sh_conn **pp = &g_conns; *pp; pp = &(*pp)->next)
					if (*pp == cs[i]) {
						*pp = cs[i]->next;
						break;
					}
				conn_free(cs[i]);
			}
		}
	}
	return NULL;
}

int srn_share_ctx_open(struct srn_context *sctx)
{
	struct sh_listener *l;
	int sv[2];

	pthread_once(&g_atfork_once, atfork_register);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return errno;
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(sv[0]);
		close(sv[1]);
		return ENOMEM;
	}
	l->fd = sv[1];
	l->token = sctx->token;
	pthread_mutex_lock(&g_lock);
	if (!g_running) {
		pthread_t t;
		pthread_attr_t at;
		if (g_wake[0] < 0 && pipe2(g_wake, O_CLOEXEC | O_NONBLOCK)) {
			pthread_mutex_unlock(&g_lock);
			free(l);
			close(sv[0]);
			close(sv[1]);
			return errno;
		}
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, server_main, NULL)) {
			pthread_attr_destroy(&at);
			pthread_mutex_unlock(&g_lock);
			free(l);
			close(sv[0]);
			close(sv[1]);
			return EAGAIN;
		}
		pthread_attr_destroy(&at);
		g_running = true;
	}
	l->next = g_listeners;
	g_listeners = l;
	pthread_mutex_unlock(&g_lock);
	wake_server();
	sctx->vctx.context.cmd_fd = sv[0];
	sctx->cmd_srv = sv[1];
	return 0;
}

void srn_share_ctx_close(struct srn_context *sctx)
{
	pthread_mutex_lock(&g_lock);
	for (struct sh_listener **pp = &g_listeners; *pp; pp = &(*pp)->next)
		if ((*pp)->token == sctx->token) {
			struct sh_listener *l = *pp;
			if (g_running) {
				l->dead = true;     /* the server closes it */
			} else {
				*pp = l->next;
				close(l->fd);
				free(l);
			}
			break;
		}
	pthread_mutex_unlock(&g_lock);
	if (g_running)
		wake_server();
	close(sctx->vctx.context.cmd_fd);
}

/* ------------------------------------------------------------------------ */
/* import                                                                     */

/* a new context of the owner's device that imports the owner's objects */
static struct ibv_context *import_local(uint64_t token)
{
	struct srn_context *owner = srn_share_owner(token);
	struct ibv_context *ctx;

	if (!owner) {
		errno = ENODEV;
		return NULL;
	}
	ctx = ibv_open_device(owner->vctx.context.device);
	if (ctx)
		to_sctx(ctx)->owner_token = token;
	return ctx;
}

struct srn_remote {
	int fd;
	pthread_mutex_t lock;           /* one request at a time */
	struct srn_vdev vdev;           /* the owner's device, as HELLO told */
};

static struct ibv_context *remote_context(int cmd_fd, int fd, const struct sh_resp *hello);

SRN_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct sh_connect m = { SH_MAGIC, SH_CONNECT };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	struct sh_resp *hello = NULL;
	struct ibv_context *ctx = NULL;
	struct pollfd pf;
	int p[2], e;

	if (cmd_fd < 0) {
		errno = EBADF;
		return NULL;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p))
		return NULL;
	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
	if (sendmsg(cmd_fd, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(m)) {
		e = errno == ENOTSOCK || errno == EBADF ? errno : EINVAL;
		goto fail;                  /* not a softrnic cmd_fd */
	}
	close(p[1]);
	p[1] = -1;
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	hello = calloc(1, sizeof(*hello));
	if (!hello) {
		e = ENOMEM;
		goto fail;
	}
	if (poll(&pf, 1, SH_HELLO_MS) != 1 ||
	    recv(p[0], hello, sizeof(*hello), 0) != (ssize_t)sizeof(*hello) ||
	    hello->magic != SH_MAGIC) {
		e = ENODEV;                 /* nobody serves this fd */
		goto fail;
	}
	if (hello->rc) {
		e = hello->rc;
		goto fail;
	}
	if (hello->pid == (int32_t)getpid() && srn_share_owner(hello->token)) {
		/* the owner's own process: an ordinary context that imports */
		close(p[0]);
		ctx = import_local(hello->token);
		free(hello);
		if (ctx)
			close(cmd_fd);      /* the context owns the fd it was given */
		return ctx;
	}
	ctx = remote_context(cmd_fd, p[0], hello);
	if (!ctx) {
		e = errno;
		goto fail;
	}
	free(hello);
	return ctx;
fail:
	free(hello);
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	errno = e;
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* a remote context: every verb a request to the owner                      */

static int rpc(struct srn_context *sctx, struct sh_req *r, struct sh_resp *o)
{
	struct srn_remote *rm = sctx->remote;
	int rc = 0;

	r->magic = SH_MAGIC;
	pthread_mutex_lock(&rm->lock);
	if (send(rm->fd, r, sizeof(*r), MSG_NOSIGNAL) != (ssize_t)sizeof(*r) ||
	    recv(rm->fd, o, sizeof(*o), 0) != (ssize_t)sizeof(*o) || o->magic != SH_MAGIC)
		rc = EIO;                   /* the owner is gone */
	pthread_mutex_unlock(&rm->lock);
	return rc ? rc : o->rc;
}

/* request/response records live on the heap (2-3 KiB each) */
#define RPC_BEGIN(op_)                                                         \
	struct sh_req *r = calloc(1, sizeof(*r));                              \
	struct sh_resp *o = calloc(1, sizeof(*o));                             \
	int rc;                                                                \
	if (!r || !o) { free(r); free(o); rc = ENOMEM; goto done; }            \
	r->op = (op_);
#define RPC_END free(r); free(o)

static int remote_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct srn_vcq *v = to_scq(cq);
	struct sh_req *r = calloc(1, sizeof(*r));
	struct sh_resp *o = calloc(1, sizeof(*o));
	int total = 0, rc = 0;

	if (n < 0) {
		rc = EINVAL;
		goto out;
	}
	if (!r || !o) {
		rc = ENOMEM;
		goto out;
	}
	while (total < n) {
		int want = n - total < SH_MAX_WC ? n - total : SH_MAX_WC;

		memset(r, 0, sizeof(*r));
		r->op = SH_POLL_CQ;
		r->h[0] = v->rh;
		r->i[0] = want;
		rc = rpc(v->ctx, r, o);
		if (!rc && o->n > (uint32_t)want)
			rc = EIO;
		if (rc)
			break;
		memcpy(wc + total, o->wc, o->n * sizeof(*wc));
		total += (int)o->n;
		if ((int)o->n < want)
			break;
	}
out:
	free(r);
	free(o);
	return rc && !total ? -rc : total;
}

static int remote_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct srn_vqp *q = to_sqp(qp);

	for (; wr; wr = wr->next) {
		uint32_t ninl = 0;
		RPC_BEGIN(SH_POST_SEND);
		if (wr->num_sge < 0 || wr->num_sge > SH_MAX_SGE) {
			rc = EINVAL;
			RPC_END;
			goto done;
		}
		r->h[0] = q->rh;
		r->i[0] = (int32_t)wr->opcode;
		r->i[1] = (int32_t)wr->send_flags;
		r->i[3] = (int32_t)wr->imm_data;        /* or invalidate_rkey */
		r->u[0] = wr->wr_id;
		if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			r->u[1] = wr->wr.atomic.remote_addr;
			r->u[2] = wr->wr.atomic.compare_add;
			r->u[3] = wr->wr.atomic.swap;
			r->i[2] = (int32_t)wr->wr.atomic.rkey;
		} else {
			r->u[1] = wr->wr.rdma.remote_addr;
			r->i[2] = (int32_t)wr->wr.rdma.rkey;
		}
		r->nsge = (uint32_t)wr->num_sge;
		for (int k = 0; k < wr->num_sge; k++) {
			r->sge[k].addr = wr->sg_list[k].addr;
			r->sge[k].length = wr->sg_list[k].length;
			r->sge[k].lkey = wr->sg_list[k].lkey;
			if (!(wr->send_flags & IBV_SEND_INLINE))
				continue;
			/* inline data is this process's memory: it travels */
			if (wr->sg_list[k].length > SH_MAX_INLINE - ninl) {
				rc = EINVAL;       /* more than any QP's max_inline_data */
				RPC_END;
				goto done;
			}
			memcpy(r->inl + ninl, (const void *)(uintptr_t)wr->sg_list[k].addr,
			       wr->sg_list[k].length);
			ninl += wr->sg_list[k].length;
		}
		r->ninl = ninl;
		rc = rpc(q->ctx, r, o);
		RPC_END;
		if (rc)
			goto done;
		continue;
done:
		*bad = wr;
		return rc;
	}
	return 0;
}

static int remote_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct srn_vqp *q = to_sqp(qp);

	for (; wr; wr = wr->next) {
		RPC_BEGIN(SH_POST_RECV);
		if (wr->num_sge < 0 || wr->num_sge > SH_MAX_SGE) {
			rc = EINVAL;
			RPC_END;
			goto done;
		}
		r->h[0] = q->rh;
		r->u[0] = wr->wr_id;
		r->nsge = (uint32_t)wr->num_sge;
		for (int k = 0; k < wr->num_sge; k++) {
			r->sge[k].addr = wr->sg_list[k].addr;
			r->sge[k].length = wr->sg_list[k].length;
			r->sge[k].lkey = wr->sg_list[k].lkey;
		}
		rc = rpc(q->ctx, r, o);
		RPC_END;
		if (rc)
			goto done;
		continue;
done:
		*bad = wr;
		return rc;
	}
	return 0;
}

static int remote_notify(struct ibv_cq *cq, int solicited)
{
	(void)cq; (void)solicited;
	return EOPNOTSUPP;                  /* no completion channels across processes */
}

static int remote_post_srq(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)srq;
	*bad = wr;
	return EOPNOTSUPP;
}

static struct ibv_qp *remote_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	return srn_remote_create_qp(to_sctx(ctx), a);
}

static int remote_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
				  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if (in && in->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(a.orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	srn_verbs_fill_device_attr(to_sctx(ctx), &a.orig_attr);
	srn_remote_device_attr(to_sctx(ctx), &a.orig_attr);
	a.device_cap_flags_ex = (uint64_t)a.orig_attr.device_cap_flags;
	a.phys_port_cnt_ex = 1;
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

void srn_remote_device_attr(struct srn_context *sctx, struct ibv_device_attr *a)
{
	(void)sctx;
	/* what the remote context can do: no windows, no SRQs */
	a->device_cap_flags &= ~(unsigned int)(IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	a->max_mw = 0;
	a->max_srq = a->max_srq_wr = a->max_srq_sge = 0;
}

static struct ibv_context *remote_context(int cmd_fd, int fd, const struct sh_resp *hello)
{
	static const struct ibv_context_ops ops = {
		._compat_query_device = srn_verbs_query_device_compat,
		._compat_query_port = srn_verbs_query_port_compat,
		.poll_cq = remote_poll_cq,
		.req_notify_cq = remote_notify,
		.post_srq_recv = remote_post_srq,
		.post_send = remote_post_send,
		.post_recv = remote_post_recv,
	};
	struct srn_context *sctx = calloc(1, sizeof(*sctx));
	struct srn_remote *rm = calloc(1, sizeof(*rm));
	struct ibv_device *d;
	struct ibv_context *ctx;
	int p[2];

	if (!sctx || !rm || pipe2(p, O_CLOEXEC)) {
		free(sctx);
		free(rm);
		errno = ENOMEM;
		return NULL;
	}
	rm->fd = fd;
	pthread_mutex_init(&rm->lock, NULL);
	/* the owner's device as seen from here: its name, address and GUID */
	snprintf(rm->vdev.cfg.name, sizeof(rm->vdev.cfg.name), "%.*s",
		 (int)sizeof(hello->name) - 1, hello->name);
	rm->vdev.cfg.ip.s_addr = hello->ip;
	rm->vdev.cfg.guid = hello->guid;
	rm->vdev.index = -1;
	pthread_mutex_init(&rm->vdev.ctx_lock, NULL);
	d = &rm->vdev.ibdev;
	d->node_type = IBV_NODE_CA;
	d->transport_type = IBV_TRANSPORT_IB;
	snprintf(d->name, sizeof(d->name), "%s", rm->vdev.cfg.name);
	snprintf(d->dev_name, sizeof(d->dev_name), "uverbs-import");
	sctx->remote = rm;
	sctx->vdev = &rm->vdev;
	srn_dev_cfg_default(&sctx->limits);
	sctx->async_wfd = p[1];
	pthread_mutex_init(&sctx->reg_lock, NULL);
	sctx->vctx.sz = sizeof(struct verbs_context);
	sctx->vctx.query_port = srn_verbs_query_port;
	sctx->vctx.query_device_ex = remote_query_device_ex;
	sctx->vctx.create_qp_ex = remote_create_qp_ex;
	ctx = &sctx->vctx.context;
	ctx->device = d;
	ctx->ops = ops;
	ctx->cmd_fd = cmd_fd;
	ctx->async_fd = p[0];             /* no asynchronous events arrive here */
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	return ctx;
}

int srn_remote_close(struct srn_context *sctx)
{
	struct srn_remote *rm = sctx->remote;
	struct ibv_context *ctx = &sctx->vctx.context;

	close(rm->fd);                    /* the owner destroys what was made */
	close(ctx->cmd_fd);
	close(ctx->async_fd);
	close(sctx->async_wfd);
	pthread_mutex_destroy(&rm->lock);
	pthread_mutex_destroy(&ctx->mutex);
	pthread_mutex_destroy(&sctx->reg_lock);
	free(rm);
	free(sctx);
	return 0;
}

static struct ibv_pd *remote_pd(struct srn_context *sctx, uint32_t op, uint32_t handle)
{
	struct srn_vpd *v = NULL;
	RPC_BEGIN(op);
	r->u[0] = handle;
	rc = rpc(sctx, r, o);
	if (!rc) {
		v = calloc(1, sizeof(*v));
		if (v) {
			v->pd.context = &sctx->vctx.context;
			v->pd.handle = (uint32_t)o->u[0];
			v->rh = o->h;
		} else {
			rc = ENOMEM;        /* the owner's PD goes with the connection */
		}
	}
	RPC_END;
done:
	if (rc) {
		errno = rc;
		return NULL;
	}
	return &v->pd;
}

struct ibv_pd *srn_remote_alloc_pd(struct srn_context *sctx)
{
	return remote_pd(sctx, SH_ALLOC_PD, 0);
}

struct ibv_pd *srn_remote_import_pd(struct srn_context *sctx, uint32_t handle)
{
	return remote_pd(sctx, SH_IMPORT_PD, handle);
}

static int remote_destroy(struct srn_context *sctx, uint32_t op, uint32_t h)
{
	RPC_BEGIN(op);
	r->h[0] = h;
	rc = rpc(sctx, r, o);
	RPC_END;
done:
	return rc;
}

int srn_remote_dealloc_pd(struct srn_vpd *pd)
{
	int rc;

	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE) > 0)
		return EBUSY;
	rc = remote_destroy(to_sctx(pd->pd.context), SH_DEALLOC_PD, pd->rh);
	if (!rc)
		free(pd);
	return rc;
}

static struct ibv_mr *remote_mr(struct srn_vpd *pd, uint32_t op, uint64_t a0, uint64_t a1,
				uint64_t a2, int access)
{
	struct srn_context *sctx = to_sctx(pd->pd.context);
	struct srn_vmr *m = NULL;
	RPC_BEGIN(op);
	r->h[0] = pd->rh;
	r->u[0] = a0;
	r->u[1] = a1;
	r->u[2] = a2;
	r->i[0] = access;
	rc = rpc(sctx, r, o);
	if (!rc) {
		m = calloc(1, sizeof(*m));
		if (!m) {
			rc = ENOMEM;
		} else {
			m->rh = o->h;
			m->access = access;
			m->mr.context = pd->pd.context;
			m->mr.pd = &pd->pd;
			m->mr.addr = op == SH_REG_MR ? (void *)(uintptr_t)a0 : NULL;
			m->mr.length = (size_t)o->u[3];
			m->mr.lkey = (uint32_t)o->u[0];
			m->mr.rkey = (uint32_t)o->u[1];
			m->mr.handle = (uint32_t)o->u[2];
			__atomic_add_fetch(&pd->users, 1, __ATOMIC_ACQ_REL);
		}
	}
	RPC_END;
done:
	if (rc) {
		errno = rc;
		return NULL;
	}
	return &m->mr;
}

struct ibv_mr *srn_remote_reg_mr(struct srn_vpd *pd, void *addr, size_t len, uint64_t iova,
				 unsigned int access)
{
	return remote_mr(pd, SH_REG_MR, (uintptr_t)addr, len, iova, (int)access);
}

struct ibv_mr *srn_remote_import_mr(struct srn_vpd *pd, uint32_t handle)
{
	return remote_mr(pd, SH_IMPORT_MR, handle, 0, 0, 0);
}

int srn_remote_dereg_mr(struct srn_vmr *m)
{
	int rc = remote_destroy(to_sctx(m->mr.context), SH_DEREG_MR, m->rh);

	if (!rc) {
		__atomic_sub_fetch(&to_spd(m->mr.pd)->users, 1, __ATOMIC_ACQ_REL);
		free(m);
	}
	return rc;
}

struct ibv_cq *srn_remote_create_cq(struct srn_context *sctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *ch, int vector)
{
	struct srn_vcq *v = NULL;

	if (ch) {
		errno = EOPNOTSUPP;       /* no completion events across processes */
		return NULL;
	}
	if (vector != 0 || cqe < 1) {
		errno = EINVAL;
		return NULL;
	}
	RPC_BEGIN(SH_CREATE_CQ);
	r->i[0] = cqe;
	rc = rpc(sctx, r, o);
	if (!rc) {
		v = calloc(1, sizeof(*v));
		if (!v) {
			rc = ENOMEM;
		} else {
			v->ctx = sctx;
			v->rh = o->h;
			pthread_mutex_init(&v->cq.mutex, NULL);
			pthread_cond_init(&v->cq.cond, NULL);
			v->cq.context = &sctx->vctx.context;
			v->cq.cq_context = cq_context;
			v->cq.cqe = (int)o->n;
		}
	}
	RPC_END;
done:
	if (rc) {
		errno = rc;
		return NULL;
	}
	return &v->cq;
}

int srn_remote_destroy_cq(struct srn_vcq *v)
{
	int rc = remote_destroy(v->ctx, SH_DESTROY_CQ, v->rh);

	if (!rc) {
		pthread_mutex_destroy(&v->cq.mutex);
		pthread_cond_destroy(&v->cq.cond);
		free(v);
	}
	return rc;
}

struct ibv_qp *srn_remote_create_qp(struct srn_context *sctx, struct ibv_qp_init_attr_ex *a)
{
	struct srn_vqp *q = NULL;

	if ((a->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD) || a->srq) {
		errno = EOPNOTSUPP;       /* no SRQs, no extended QPs remotely */
		return NULL;
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd || !a->send_cq || !a->recv_cq ||
	    a->pd->context != &sctx->vctx.context || a->send_cq->context != a->pd->context ||
	    a->recv_cq->context != a->pd->context) {
		errno = EINVAL;
		return NULL;
	}
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC) {
		errno = EOPNOTSUPP;       /* UD needs address handles */
		return NULL;
	}
	RPC_BEGIN(SH_CREATE_QP);
	r->h[0] = to_spd(a->pd)->rh;
	r->h[1] = to_scq(a->send_cq)->rh;
	r->h[2] = to_scq(a->recv_cq)->rh;
	r->i[0] = (int32_t)a->qp_type;
	r->i[1] = a->sq_sig_all;
	r->cap = a->cap;
	rc = rpc(sctx, r, o);
	if (!rc) {
		q = calloc(1, sizeof(*q));
		if (!q) {
			rc = ENOMEM;
		} else {
			q->ctx = sctx;
			q->rh = o->h;
			q->pd = to_spd(a->pd);
			q->scq = to_scq(a->send_cq);
			q->rcq = to_scq(a->recv_cq);
			q->sq_sig_all = a->sq_sig_all != 0;
			pthread_mutex_init(&q->qp.mutex, NULL);
			pthread_cond_init(&q->qp.cond, NULL);
			q->qp.context = &sctx->vctx.context;
			q->qp.qp_context = a->qp_context;
			q->qp.pd = a->pd;
			q->qp.send_cq = a->send_cq;
			q->qp.recv_cq = a->recv_cq;
			q->qp.qp_num = (uint32_t)o->u[0];
			q->qp.handle = q->qp.qp_num;
			q->qp.state = IBV_QPS_RESET;
			q->qp.qp_type = a->qp_type;
			a->cap = o->cap;
			q->cap_send_wr = o->cap.max_send_wr;
			q->cap_recv_wr = o->cap.max_recv_wr;
			q->cap_send_sge = o->cap.max_send_sge;
			q->cap_recv_sge = o->cap.max_recv_sge;
			q->cap_inline = o->cap.max_inline_data;
			__atomic_add_fetch(&q->pd->users, 1, __ATOMIC_ACQ_REL);
		}
	}
	RPC_END;
done:
	if (rc) {
		errno = rc;
		return NULL;
	}
	return &q->qp;
}

int srn_remote_modify_qp(struct srn_vqp *q, struct ibv_qp_attr *attr, int mask)
{
	RPC_BEGIN(SH_MODIFY_QP);
	r->h[0] = q->rh;
	r->attr = *attr;
	r->i[0] = mask;
	rc = rpc(q->ctx, r, o);
	if (!rc && (mask & IBV_QP_STATE))
		q->qp.state = attr->qp_state;
	RPC_END;
done:
	return rc;
}

int srn_remote_query_qp(struct srn_vqp *q, struct ibv_qp_attr *attr, int mask,
			struct ibv_qp_init_attr *init)
{
	RPC_BEGIN(SH_QUERY_QP);
	r->h[0] = q->rh;
	r->i[0] = mask;
	rc = rpc(q->ctx, r, o);
	if (!rc) {
		*attr = o->attr;
		if (init) {
			*init = o->init;
			init->qp_context = q->qp.qp_context;
			init->send_cq = q->qp.send_cq;
			init->recv_cq = q->qp.recv_cq;
		}
	}
	RPC_END;
done:
	return rc;
}

int srn_remote_destroy_qp(struct srn_vqp *q)
{
	int rc = remote_destroy(q->ctx, SH_DESTROY_QP, q->rh);

	if (!rc) {
		__atomic_sub_fetch(&q->pd->users, 1, __ATOMIC_ACQ_REL);
		pthread_mutex_destroy(&q->qp.mutex);
		pthread_cond_destroy(&q->qp.cond);
		free(q);
	}
	return rc;
}

/*
 * rt_dev.c - runtime devices: creation (the port, the core with the
 * runtime's configuration, capture, live counters, the progress thread and
 * the CC control socket), destruction, and the per-process registry that
 * makes ibv_open_device of the same name share one device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "rt_dev.h"
#include "cc_ctl.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srn_rt_dev *reg[SRN_RT_MAX_DEVS];

static void *mem_calloc(size_t n, size_t size, void *user)
{
	(void)user;
	return calloc(n, size);
}

static void mem_free(void *p, void *user)
{
	(void)user;
	free(p);
}

static void dev_free(struct srn_rt_dev *rd)
{
	if (rd->shm) {
		srn_rt_publish(rd, srn_rt_now());
		srn_rt_shm_destroy(rd->shm);
	}
	srn_rt_pcap_close(rd->pcap);
	srn_rt_cc_stop(rd);
	if (rd->core)
		srn_dev_del(rd->core);
	if (rd->port.ops)
		rd->port.ops->close(&rd->port);
	srn_rt_rxbatch_free(&rd->port.rx);
	srn_rt_txbatch_free(&rd->port.tx);
	if (rd->evfd >= 0)
		close(rd->evfd);
	pthread_mutex_destroy(&rd->lock);
	free(rd);
}

/* the port: UDP sockets, or the fabric behind SOFTRNIC_FABRIC */
static int open_port(struct srn_rt_dev *rd)
{
	struct srn_rt_port *p = &rd->port;
	int r;
	p->ctr = rd->rt_ctr;
	p->udp.rx_fd = -1;
	for (int i = 0; i < SRN_RT_NSEND; i++)
		p->udp.tx_fd[i] = -1;
	if ((r = srn_rt_rxbatch_init(&p->rx)) < 0 || (r = srn_rt_txbatch_init(&p->tx)) < 0)
		return r;
	if (rd->cfg.fabric.sin_port)
		return srn_rt_port_open_fabric(p, rd->cfg.name, rd->cfg.ip, rd->cfg.port,
					       &rd->cfg.fabric, FABRIC_HELLO_MS);
	return srn_rt_port_open_udp(p, rd->cfg.ip, rd->cfg.port, !rd->cfg.no_offload);
}

/* the core device with the runtime's settings */
static int open_core(struct srn_rt_dev *rd)
{
	struct srn_dev_cfg dc;
	srn_dev_cfg_default(&dc);
	srn_rt_gid_from_ip(dc.gid, rd->cfg.ip);
	dc.l4 = rd->port.l4;
	dc.n_l4 = rd->port.n_l4;
	dc.mem.calloc = mem_calloc;
	dc.mem.free = mem_free;
	dc.mem.user = NULL;
	dc.ack_delay_ns = (rd->cfg.ack_delay_set ? rd->cfg.ack_delay_us : SRN_RT_ACK_DELAY_US) * 1000u;
	rd->spin_ns = (srn_ts)(rd->cfg.rx_spin_set ? rd->cfg.rx_spin_us : SRN_RT_RX_SPIN_US) * 1000u;
	int r = srn_rt_cc_config(rd, &rd->cfg, &dc);     /* SOFTRNIC_CC*: cc_ctl.c */
	if (r < 0)
		return r;
	int cr = srn_dev_new(&rd->core, &dc);
	if (cr < 0) {
		fprintf(stderr, "softrnic: %s: cannot create device: %s\n", rd->cfg.name,
			srn_strerror(cr));
		rd->core = NULL;
		return cr == SRN_ENOMEM ? -ENOMEM : -EINVAL;
	}
	return 0;
}

/* live counters in shared memory (softrnic stats) */
static void open_stats(struct srn_rt_dev *rd)
{
	const char *names[SRN_CTR_MAX + SRN_RT_CTR_MAX];
	for (int i = 0; i < SRN_CTR_MAX; i++)
		names[i] = srn_ctr_names[i];
	for (int i = 0; i < SRN_RT_CTR_MAX; i++)
		names[SRN_CTR_MAX + i] = srn_rt_ctr_names[i];
	rd->shm = srn_rt_shm_create(&rd->cfg, names, SRN_CTR_MAX + SRN_RT_CTR_MAX);
	if (rd->shm)
		srn_rt_publish(rd, srn_rt_now());
}

static struct srn_rt_dev *dev_create(const struct srn_rt_devcfg *cfg,
				     const struct srn_rt_hooks *hooks, int *err)
{
	struct srn_rt_dev *rd = calloc(1, sizeof *rd);
	if (!rd) {
		*err = ENOMEM;
		return NULL;
	}
	rd->cfg = *cfg;
	if (!rd->cfg.port)
		rd->cfg.port = SRN_ROCEV2_UDP_PORT;
	if (!rd->cfg.guid)
		rd->cfg.guid = srn_rt_guid_derive(rd->cfg.name, rd->cfg.ip);
	if (hooks)
		rd->hooks = *hooks;
	rd->evfd = -1;
	rd->sleep_target = SRN_TS_NEVER;
	pthread_mutex_init(&rd->lock, NULL);

	int r = open_port(rd);
	if (r < 0)
		goto fail;
	rd->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rd->evfd < 0) {
		r = -errno;
		goto fail;
	}
	if ((r = open_core(rd)) < 0)
		goto fail;
	if (rd->cfg.pcap_path[0]) {
		rd->pcap = srn_rt_pcap_open(rd->cfg.pcap_path);
		if (!rd->pcap) {
			r = -EIO;
			goto fail;
		}
	}
	open_stats(rd);
	if ((r = srn_rt_thread_start(rd)) < 0)
		goto fail;
	srn_rt_cc_start(rd);                    /* `softrnic cc load` socket */
	return rd;
fail:
	*err = -r;
	dev_free(rd);
	return NULL;
}

struct srn_rt_dev *srn_rt_dev_open(const struct srn_rt_devcfg *cfg, const struct srn_rt_hooks *hooks)
{
	if (!cfg || !cfg->name[0]) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&reg_lock);
	int free_slot = -1;
	for (int i = 0; i < SRN_RT_MAX_DEVS; i++) {
		if (reg[i] && strcmp(reg[i]->cfg.name, cfg->name) == 0) {
			struct srn_rt_dev *rd = reg[i];
			rd->refcnt++;
			pthread_mutex_unlock(&reg_lock);
			return rd;
		}
		if (!reg[i] && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0) {
		pthread_mutex_unlock(&reg_lock);
		errno = EMFILE;
		return NULL;
	}
	int err = 0;
	struct srn_rt_dev *rd = dev_create(cfg, hooks, &err);
	if (rd) {
		rd->refcnt = 1;
		reg[free_slot] = rd;
	}
	pthread_mutex_unlock(&reg_lock);
	if (!rd)
		errno = err ? err : EIO;
	return rd;
}

void srn_rt_dev_close(struct srn_rt_dev *rd)
{
	if (!rd)
		return;
	pthread_mutex_lock(&reg_lock);
	if (--rd->refcnt > 0) {
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	for (int i = 0; i < SRN_RT_MAX_DEVS; i++)
		if (reg[i] == rd)
			reg[i] = NULL;
	pthread_mutex_unlock(&reg_lock);
	srn_rt_thread_stop(rd);
	dev_free(rd);
}

/*
 * place.c - data between packets and registered memory: the requester's
 * gather from a send WQE's SGEs (resolved once to host pointers), the
 * completer's scatter of READ responses into them, and the responder's
 * placement into a receive WQE. Every key, PD, bound and access right is
 * checked before a byte moves (PSN-21).
 */
#include "core_int.h"

bool srn_place_resolve(struct srn_qp *qp, struct srn_swqe *w)
{
	if (w->resolved)
		return true;
	uint32_t acc = srn_wqe_is_rd_atomic(w) ? SRN_ACCESS_LOCAL_WRITE : 0;
	for (uint32_t i = 0; i < w->wr.num_sge; i++) {
		const struct srn_sge *s = &w->sge[i];
		if (s->length == 0) {
			w->host[i] = NULL;
			continue;
		}
		w->host[i] = srn_mr_xlate(qp->dev, s->lkey, qp->init.pdn, s->addr, s->length, acc);
		if (!w->host[i])
			return false;
	}
	w->resolved = true;
	return true;
}

void srn_place_gather(const struct srn_swqe *w, uint32_t off, uint8_t *dst, uint32_t len)
{
	if (w->is_inline) {
		memcpy(dst, w->inl + off, len);
		return;
	}
	for (uint32_t i = 0; i < w->wr.num_sge && len; i++) {
		uint32_t sl = w->sge[i].length;
		if (off >= sl) {
			off -= sl;
			continue;
		}
		uint32_t n = sl - off < len ? sl - off : len;
		memcpy(dst, w->host[i] + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
}

void srn_place_scatter(struct srn_swqe *w, uint32_t off, const uint8_t *src, uint32_t len)
{
	for (uint32_t i = 0; i < w->wr.num_sge && len; i++) {
		uint32_t sl = w->sge[i].length;
		if (off >= sl) {
			off -= sl;
			continue;
		}
		uint32_t n = sl - off < len ? sl - off : len;
		memcpy(w->host[i] + off, src, n);
		src += n;
		len -= n;
		off = 0;
	}
}

static uint64_t rwqe_len(const struct srn_rwqe *w)
{
	uint64_t t = 0;
	for (uint32_t i = 0; i < w->num_sge; i++)
		t += w->sge[i].length;
	return t;
}

int srn_place_rwqe(struct srn_dev *dev, uint32_t pdn, const struct srn_rwqe *w, uint32_t off,
		   const uint8_t *src, uint32_t len)
{
	if ((uint64_t)off + len > rwqe_len(w))
		return SRN_ERANGE;
	/* pass 0 checks every SGE the data touches, pass 1 copies */
	for (int pass = 0; pass < 2; pass++) {
		uint32_t o = off, l = len;
		const uint8_t *s = src;
		for (uint32_t i = 0; i < w->num_sge && l; i++) {
			const struct srn_sge *g = &w->sge[i];
			if (o >= g->length) {
				o -= g->length;
				continue;
			}
			uint8_t *host = srn_mr_xlate(dev, g->lkey, pdn, g->addr, g->length,
						     SRN_ACCESS_LOCAL_WRITE);
			if (!host)
				return SRN_EINVAL;
			uint32_t n = g->length - o < l ? g->length - o : l;
			if (pass == 1) {
				memcpy(host + o, s, n);
				s += n;
			}
			l -= n;
			o = 0;
		}
	}
	return SRN_OK;
}

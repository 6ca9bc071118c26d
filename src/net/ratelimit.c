/* SPDX-License-Identifier: MIT */
/*
 * The ICMP error rate limit (RFC 1812 4.3.2.8, RFC 4443 2.4 (f)): one token
 * bucket for every interface and every worker, which the errors, the
 * Redirects and the resets the router answers with all draw from. It lives
 * in the first worker's stack and the others point to it (rxp_stack_share());
 * then it takes a spinlock, on the error path only.
 */
#include "icmp.h"

void rxp_ratelimit_init(struct rxp_ratelimit *rl, double rate, double burst)
{
	*rl = (struct rxp_ratelimit){ .rate = rate, .burst = burst, .tokens = burst };
}

int rxp_ratelimit_share(struct rxp_ratelimit *rl)
{
	int ret;

	if (rl->shared)
		return 0;
	ret = pthread_spin_init(&rl->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		return -ret;
	rl->shared = true;
	return 0;
}

void rxp_ratelimit_unshare(struct rxp_ratelimit *rl)
{
	if (!rl->shared)
		return;
	pthread_spin_destroy(&rl->lock);
	rl->shared = false;
}

static bool ratelimit_take_locked(struct rxp_ratelimit *rl, uint64_t now_ns)
{
	if (now_ns > rl->last_ns) {
		rl->tokens += (double)(now_ns - rl->last_ns) * 1e-9 * rl->rate;
		if (rl->tokens > rl->burst)
			rl->tokens = rl->burst;
		rl->last_ns = now_ns;
	}
	if (rl->tokens < 1.0)
		return false;
	rl->tokens -= 1.0;
	return true;
}

bool rxp_ratelimit_take(struct rxp_ratelimit *rl, uint64_t now_ns)
{
	bool ok;

	if (!rl->shared)
		return ratelimit_take_locked(rl, now_ns);
	pthread_spin_lock(&rl->lock);
	ok = ratelimit_take_locked(rl, now_ns);
	pthread_spin_unlock(&rl->lock);
	return ok;
}

void rxp_stack_set_icmp_rate(struct rxp_stack *st, double rate, double burst)
{
	struct rxp_ratelimit *rl = &st->shared->icmp_limit;

	if (rl->shared)
		pthread_spin_lock(&rl->lock);
	rl->rate = rate;
	rl->burst = burst;
	rl->tokens = burst;
	if (rl->shared)
		pthread_spin_unlock(&rl->lock);
}

void rxp_stack_icmp_rate(const struct rxp_stack *st, double *rate, double *burst)
{
	*rate = st->shared->icmp_limit.rate;
	*burst = st->shared->icmp_limit.burst;
}

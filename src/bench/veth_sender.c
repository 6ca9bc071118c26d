/* SPDX-License-Identifier: MIT */
/*
 * The benchmark lab's sender. One frame, fixed, written once into every slot
 * of a PACKET_TX_RING; the loop only hands slots back to the kernel and asks
 * it to send them, a ring's worth per system call, with the qdisc bypassed.
 *
 * Why not trafgen: it exits at the first EAGAIN from its flush. veth holds
 * a sent frame, charged to the sender's socket, until the peer's NAPI takes
 * it; when that NAPI waits out a coalescing timer the socket's send buffer
 * fills, and trafgen gave up on most windows of the coalesced path. A
 * full buffer is the sender's back-pressure, so this one waits it out.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include "veth_sender.h"

#define SLOT_SIZE 128		/* tpacket2_hdr, its sockaddr_ll room, and a frame of up to 96 bytes */
#define BLOCK_SIZE 4096
#define BLOCKS 64		/* 2048 slots: several veth rings' worth in flight */
#define SLOTS (BLOCKS * (BLOCK_SIZE / SLOT_SIZE))
/* where the frame starts in a TX slot without PACKET_TX_HAS_OFF */
#define DATA_OFF (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))
#define FULL_WAIT_NS 20000	/* a tenth of the coalescing timer the bench uses */

static void fail(const char *step)
{
	fprintf(stderr, "sender: %s: %s\n", step, strerror(errno));
	_exit(1);
}

static void enter(const char *netns, int cpu)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		fail(path);
	close(fd);
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fail("sched_setaffinity");
	}
}

/* The TX ring of a socket bound to @dev, every slot holding @frame. */
static int open_ring(const char *dev, const uint8_t *frame, size_t len, uint8_t **ring)
{
	struct tpacket_req req = {
		.tp_block_size = BLOCK_SIZE,
		.tp_block_nr = BLOCKS,
		.tp_frame_size = SLOT_SIZE,
		.tp_frame_nr = SLOTS,
	};
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	int version = TPACKET_V2, one = 1;
	/* protocol 0: the socket receives nothing */
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fail("socket(AF_PACKET)");
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)))
		fail("PACKET_VERSION");
	if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)))
		fail("PACKET_QDISC_BYPASS");
	if (setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)))
		fail("PACKET_TX_RING");
	*ring = mmap(NULL, (size_t)BLOCKS * BLOCK_SIZE, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, fd, 0);
	if (*ring == MAP_FAILED)
		fail("mmap of the TX ring");
	sll.sll_ifindex = (int)if_nametoindex(dev);
	if (!sll.sll_ifindex)
		fail(dev);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		fail("bind");
	for (unsigned i = 0; i < SLOTS; i++) {
		struct tpacket2_hdr *h = (struct tpacket2_hdr *)(*ring + (size_t)i * SLOT_SIZE);

		memcpy((uint8_t *)h + DATA_OFF, frame, len);
		h->tp_len = (uint32_t)len;
	}
	return fd;
}

static _Noreturn void blast(int fd, uint8_t *ring)
{
	const struct timespec full_wait = { .tv_nsec = FULL_WAIT_NS };
	unsigned next = 0;

	for (;;) {
		unsigned queued = 0;

		for (;;) {
			struct tpacket2_hdr *h = (struct tpacket2_hdr *)(ring + (size_t)next * SLOT_SIZE);
			uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);

			if (st == TP_STATUS_WRONG_FORMAT) {
				fprintf(stderr, "sender: the kernel refused the frame (TP_STATUS_WRONG_FORMAT)\n");
				_exit(1);
			}
			if (st != TP_STATUS_AVAILABLE)
				break;	/* still in flight, or not yet sent */
			__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
			next = (next + 1) % SLOTS;
			if (++queued == SLOTS)
				break;
		}
		if (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0) {
			if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR)
				fail("sendto");
			/* send buffer or device queue full: let the receiver drain */
			nanosleep(&full_wait, NULL);
		} else if (!queued) {
			nanosleep(&full_wait, NULL);
		}
	}
}

pid_t veth_sender_start(const char *netns, const char *dev, const uint8_t *frame, size_t len,
			int cpu, const char *log, char *err, size_t errlen)
{
	pid_t pid, parent = getpid();
	sigset_t stop, old;

	if (len < 14 || len > SLOT_SIZE - DATA_OFF) {
		snprintf(err, errlen, "sender: a frame of %zu bytes (14 to %zu)", len,
			 (size_t)(SLOT_SIZE - DATA_OFF));
		return -1;
	}
	fflush(NULL);
	/* a stop signal waits until the child has its own handlers: none is lost between */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &old);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the sender: fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		uint8_t *ring;

		/* SIGTERM and Ctrl-C end it; the caller's handlers are not its own */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* nor does it outlive the caller (killed, say), flooding on alone */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (getppid() != parent)
			_exit(1);
		/* nothing of the caller's output stays open in it (a pipe would not end) */
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
		}
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		enter(netns, cpu);
		fd = open_ring(dev, frame, len, &ring);
		blast(fd, ring);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return pid;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * heartbeat: what a VMFS heartbeat feels, from one SCSI generic node.
 *
 *	heartbeat [-b BLOCK_SIZE] [-i GAP_US] -t SECONDS /dev/sgN LBA
 *
 * Like an ESXi host's heartbeat, each beat is one single-block COMPARE AND
 * WRITE (16) of LBA whose verify data is what the last beat wrote, and whose
 * write data is the next value of a counter in the block's first 8 bytes
 * (little endian; the rest of the block repeats it).  The block is read once
 * first.  A beat starts GAP_US microseconds (10000 by default) after the
 * last one ended, until SECONDS have passed.  Each beat's time, submission
 * to completion, goes to stdout in microseconds, one per line, and the
 * counter's last value goes to stderr as "heartbeat: counter N".  Any beat
 * that does not end GOOD (a miscompare: someone else wrote the block) stops
 * the run with its sense on stderr and exit status 1.
 *
 * Timed here rather than from Python, whose SG_IO call in the emulated
 * guest costs as much as the target's own work and has pauses of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <scsi/sg.h>
#include <sys/ioctl.h>

#define TIMEOUT_MS	60000
#define MAX_BLOCK	4096

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void be64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = v;
}

/* One command to fd; 0 if it ended GOOD, else why is on stderr. */
static int sg(int fd, unsigned char *cdb, int cdb_len, int dir, void *data,
	      unsigned int len)
{
	unsigned char sense[64];
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = dir,
		.cmd_len = cdb_len,
		.mx_sb_len = sizeof(sense),
		.dxfer_len = len,
		.dxferp = data,
		.cmdp = cdb,
		.sbp = sense,
		.timeout = TIMEOUT_MS,
	};

	if (ioctl(fd, SG_IO, &h) < 0) {
		fprintf(stderr, "heartbeat: SG_IO: %s\n", strerror(errno));
		return 1;
	}
	if (h.status || h.host_status || h.driver_status) {
		fprintf(stderr, "heartbeat: opcode 0x%02x: status 0x%x host 0x%x driver 0x%x sense",
			cdb[0], h.status, h.host_status, h.driver_status);
		for (int b = 0; b < h.sb_len_wr; b++)
			fprintf(stderr, " %02x", sense[b]);
		fprintf(stderr, "\n");
		return 1;
	}
	return 0;
}

/* The block holding counter n. */
static void fill(unsigned char *blk, unsigned int bs, uint64_t n)
{
	for (unsigned int off = 0; off < bs; off += 8)
		for (int i = 0; i < 8; i++)
			blk[off + i] = n >> (8 * i);
}

int main(int argc, char **argv)
{
	static unsigned char buf[2 * MAX_BLOCK];
	unsigned int bs = 512, gap_us = 10000;
	unsigned char cdb[16];
	double seconds = 0, end;
	uint64_t lba, n = 0;
	int opt, fd;

	while ((opt = getopt(argc, argv, "b:i:t:")) != -1) {
		switch (opt) {
		case 'b':
			bs = atoi(optarg);
			break;
		case 'i':
			gap_us = atoi(optarg);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || seconds <= 0 || bs < 512 || bs > MAX_BLOCK || bs % 8)
		goto usage;
	lba = strtoull(argv[optind + 1], NULL, 0);
	fd = open(argv[optind], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "heartbeat: %s: %s\n", argv[optind], strerror(errno));
		return 2;
	}

	/* READ (16) of the block: where the counter stands */
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x88;
	be64(cdb + 2, lba);
	cdb[13] = 1;
	if (sg(fd, cdb, 16, SG_DXFER_FROM_DEV, buf, bs))
		return 1;
	for (int i = 7; i >= 0; i--)
		n = n << 8 | buf[i];

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x89;
	be64(cdb + 2, lba);
	cdb[13] = 1;
	end = now() + seconds;
	while (now() < end) {
		double t0;

		fill(buf + bs, bs, n + 1);
		t0 = now();
		if (sg(fd, cdb, 16, SG_DXFER_TO_DEV, buf, 2 * bs))
			return 1;
		printf("%.1f\n", (now() - t0) * 1e6);
		n++;
		memcpy(buf, buf + bs, bs);
		if (gap_us)
			usleep(gap_us);
	}
	fprintf(stderr, "heartbeat: counter %llu\n", (unsigned long long)n);
	return 0;
usage:
	fprintf(stderr, "usage: heartbeat [-b BLOCK_SIZE] [-i GAP_US] -t SECONDS /dev/sgN LBA\n");
	return 2;
}

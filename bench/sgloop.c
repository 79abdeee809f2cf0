// SPDX-License-Identifier: GPL-2.0
/*
 * sgloop: send a file of prepared SCSI commands to one SCSI generic node
 * and print the seconds they took.
 *
 *	sgloop [-d DEPTH] [-t SECONDS] [-r RATE] /dev/sgN COMMANDS
 *
 * COMMANDS holds records of: one byte CDB length, the CDB, a 32-bit
 * little-endian data-out length, the data-out bytes.  DEPTH (1 by default)
 * commands are in flight at once, as an initiator's data mover keeps them:
 * DEPTH threads, each with its own file descriptor, take the next command
 * in file order as soon as their last one ends.  With -t the file is sent
 * over and over until SECONDS have passed (a stream beside something
 * measured), and the commands sent are printed after the seconds.  With
 * -r no more than RATE commands a second start, all senders together
 * (VMFS's UNMAP at the rate it reclaims space): command i waits until
 * i / RATE seconds after the start.  A
 * command that does not end GOOD stops the run: its index, status and
 * sense go to stderr and the exit status is 1.
 *
 * The benchmarks send commands from here rather than from Python: in the
 * emulated guest a Python SG_IO call costs as much as the fabric's own
 * round trip, and would be counted as the target's time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <scsi/sg.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#define TIMEOUT_MS	120000
#define MAX_DEPTH	64

struct cmd {
	unsigned char cdb[16];
	unsigned char cdb_len;
	uint32_t data_len;
	unsigned char *data;
};

static int load(const char *path, struct cmd **cmds, size_t *nr)
{
	struct stat st;
	unsigned char *buf, *p, *end;
	size_t n = 0, cap = 0;
	struct cmd *c = NULL;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st))
		return -1;
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf || fread(buf, 1, st.st_size, f) != (size_t)st.st_size)
		return -1;
	fclose(f);
	for (p = buf, end = buf + st.st_size; p < end; n++) {
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			c = realloc(c, cap * sizeof(*c));
			if (!c)
				return -1;
		}
		c[n].cdb_len = *p++;
		if (c[n].cdb_len < 6 || c[n].cdb_len > 16 || end - p < c[n].cdb_len + 4)
			return -1;
		memcpy(c[n].cdb, p, c[n].cdb_len);
		p += c[n].cdb_len;
		c[n].data_len = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
		p += 4;
		if ((size_t)(end - p) < c[n].data_len)
			return -1;
		c[n].data = p;
		p += c[n].data_len;
	}
	*cmds = c;
	*nr = n;
	return 0;
}

static struct cmd *cmds;
static size_t nr_cmds;
static size_t next_cmd;		/* taken with __atomic_fetch_add */
static int failed;
static struct timespec t0;		/* the start */
static struct timespec deadline;	/* with -t: when to stop */
static int timed;
static double rate;			/* with -r: commands a second */

static struct timespec after(const struct timespec *t, double seconds)
{
	struct timespec r = {
		.tv_sec = t->tv_sec + (time_t)seconds,
		.tv_nsec = t->tv_nsec + (long)((seconds - (time_t)seconds) * 1e9),
	};

	if (r.tv_nsec >= 1000000000) {
		r.tv_sec++;
		r.tv_nsec -= 1000000000;
	}
	return r;
}

/* With -r: wait until command i is due, or with -t the time is up. */
static void pace(size_t i)
{
	struct timespec due;

	if (rate <= 0)
		return;
	due = after(&t0, i / rate);
	if (timed && (due.tv_sec > deadline.tv_sec ||
		      (due.tv_sec == deadline.tv_sec && due.tv_nsec > deadline.tv_nsec)))
		due = deadline;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
		;
}

/* One command; 0 if it ended GOOD, else what went wrong is on stderr. */
static int send(int fd, size_t i)
{
	unsigned char sense[64];
	struct sg_io_hdr h = {
		.interface_id = 'S',
		.dxfer_direction = cmds[i].data_len ? SG_DXFER_TO_DEV : SG_DXFER_NONE,
		.cmd_len = cmds[i].cdb_len,
		.mx_sb_len = sizeof(sense),
		.dxfer_len = cmds[i].data_len,
		.dxferp = cmds[i].data,
		.cmdp = cmds[i].cdb,
		.sbp = sense,
		.timeout = TIMEOUT_MS,
	};

	if (ioctl(fd, SG_IO, &h) < 0) {
		fprintf(stderr, "sgloop: command %zu: SG_IO: %s\n", i, strerror(errno));
		return 1;
	}
	if (h.status || h.host_status || h.driver_status) {
		fprintf(stderr, "sgloop: command %zu: status 0x%x host 0x%x driver 0x%x sense",
			i, h.status, h.host_status, h.driver_status);
		for (int b = 0; b < h.sb_len_wr; b++)
			fprintf(stderr, " %02x", sense[b]);
		fprintf(stderr, "\n");
		return 1;
	}
	return 0;
}

static int past(const struct timespec *t)
{
	struct timespec n;

	clock_gettime(CLOCK_MONOTONIC, &n);
	return n.tv_sec > t->tv_sec || (n.tv_sec == t->tv_sec && n.tv_nsec >= t->tv_nsec);
}

/*
 * A sender: the next command until none are left (with -t: until the
 * time is up, round the file again) or one has failed.
 */
static void *sender(void *arg)
{
	int fd = *(int *)arg;

	while (!__atomic_load_n(&failed, __ATOMIC_RELAXED)) {
		size_t i = __atomic_fetch_add(&next_cmd, 1, __ATOMIC_RELAXED);

		if (!timed && i >= nr_cmds)
			break;
		pace(i);
		if (timed && past(&deadline))
			break;
		if (send(fd, i % nr_cmds))
			__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int fds[MAX_DEPTH], depth = 1, d, opt;
	pthread_t threads[MAX_DEPTH];
	struct timespec t1;
	double seconds = 0;

	while ((opt = getopt(argc, argv, "d:t:r:")) != -1) {
		switch (opt) {
		case 'd':
			depth = atoi(optarg);
			break;
		case 't':
			seconds = atof(optarg);
			timed = 1;
			break;
		case 'r':
			rate = atof(optarg);
			if (rate <= 0)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || depth < 1 || depth > MAX_DEPTH || (timed && seconds <= 0))
		goto usage;
	if (load(argv[optind + 1], &cmds, &nr_cmds) || !nr_cmds) {
		fprintf(stderr, "sgloop: %s: unreadable, malformed or empty\n", argv[optind + 1]);
		return 2;
	}
	for (d = 0; d < depth; d++) {
		fds[d] = open(argv[optind], O_RDWR);
		if (fds[d] < 0) {
			fprintf(stderr, "sgloop: %s: %s\n", argv[optind], strerror(errno));
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	deadline = after(&t0, seconds);
	for (d = 0; d < depth; d++)
		if (pthread_create(&threads[d], NULL, sender, &fds[d])) {
			fprintf(stderr, "sgloop: cannot start sender %d\n", d);
			return 2;
		}
	for (d = 0; d < depth; d++)
		pthread_join(threads[d], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (failed)
		return 1;
	printf("%.6f", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (timed)	/* each sender took one index past the last it sent */
		printf(" %zu", next_cmd - depth);
	printf("\n");
	return 0;
usage:
	fprintf(stderr, "usage: sgloop [-d DEPTH] [-t SECONDS] [-r RATE] /dev/sgN COMMANDS (DEPTH 1-%d)\n",
		MAX_DEPTH);
	return 2;
}

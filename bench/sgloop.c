// SPDX-License-Identifier: GPL-2.0
/*
 * sgloop: send a file of prepared SCSI commands to one SCSI generic node,
 * one at a time, each waited for, and print the seconds the loop took.
 *
 *	sgloop /dev/sgN COMMANDS
 *
 * COMMANDS holds records of: one byte CDB length, the CDB, a 32-bit
 * little-endian data-out length, the data-out bytes.  A command that does
 * not end GOOD stops the loop: its index, status and sense go to stderr
 * and the exit status is 1.
 *
 * The benchmarks send commands from here rather than from Python: in the
 * emulated guest a Python SG_IO call costs as much as the fabric's own
 * round trip, and would be counted as the target's time.
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
#include <sys/stat.h>

#define TIMEOUT_MS	120000

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

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	unsigned char sense[64];
	struct cmd *cmds;
	size_t nr, i;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: sgloop /dev/sgN COMMANDS\n");
		return 2;
	}
	if (load(argv[2], &cmds, &nr)) {
		fprintf(stderr, "sgloop: %s: unreadable or malformed\n", argv[2]);
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "sgloop: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nr; i++) {
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
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.6f\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The power-cut harness's initiator: one iSCSI session to one LUN, driven
 * through a pipe by tests/powercut/initiator.py.  It runs on the host, so
 * what it was told survives the target's guest being killed.
 *
 *   iscsi_pipe PORTAL TARGET_IQN LUN INITIATOR_IQN
 *
 * Each request on stdin: four native u32 (CDB length, direction 0 none,
 * 1 out, 2 in, data-out length, data-in length), the CDB, the data out.
 * Each reply on stdout: i32 status (the SAM status, or -1 when the
 * command got no status: the session broke), u32 sense length, u32
 * data-in length, the sense bytes, the data in.  No reconnect: a command
 * whose session died is reported as such, never resent.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

/* Long enough for a 16 MiB EXTENDED COPY in a software-emulated guest. */
#define COMMAND_TIMEOUT_S 600
#define CDB_MAX 32
#define XFER_MAX (64u << 20)

struct request {
	uint32_t cdb_len, dir, out_len, in_len;
};

struct reply {
	int32_t status;
	uint32_t sense_len, data_len;
};

static int read_full(void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(STDIN_FILENO, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int write_full(const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(STDOUT_FILENO, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int answer(int32_t status, const unsigned char *sense,
		  uint32_t sense_len, const unsigned char *data,
		  uint32_t data_len)
{
	struct reply r = { status, sense_len, data_len };

	if (write_full(&r, sizeof(r)) || write_full(sense, sense_len) ||
	    write_full(data, data_len))
		return -1;
	return 0;
}

/*
 * Expected once per LUN at a power cut.  libiscsi's last error may be older
 * than the failure (a unit attention at login), so it is only a hint.
 */
static void no_status(struct iscsi_context *iscsi)
{
	fprintf(stderr, "iscsi_pipe: a command got no status (last error: %s)\n",
		iscsi_get_error(iscsi));
}

static const int xfer_dir[] = { SCSI_XFER_NONE, SCSI_XFER_WRITE,
				SCSI_XFER_READ };

/* One command; -1 when the pipe itself failed. */
static int one_command(struct iscsi_context *iscsi, int lun,
		       const struct request *rq, unsigned char *cdb,
		       unsigned char *out)
{
	struct iscsi_data data = { .size = rq->out_len, .data = out };
	struct scsi_task *task;
	int ret;

	task = scsi_create_task(rq->cdb_len, cdb, xfer_dir[rq->dir],
				rq->dir == 1 ? rq->out_len : rq->in_len);
	if (!task)
		return answer(-1, NULL, 0, NULL, 0);
	task = iscsi_scsi_command_sync(iscsi, lun, task,
				       rq->dir == 1 ? &data : NULL);
	if (!task) {
		no_status(iscsi);
		return answer(-1, NULL, 0, NULL, 0);
	}
	if (task->status == SCSI_STATUS_CHECK_CONDITION) {
		/* datain holds the response's SenseLength field, then sense. */
		uint32_t len = task->datain.size > 2 ? task->datain.size - 2 : 0;

		ret = answer(task->status, task->datain.data + 2, len, NULL, 0);
	} else if (task->status >= 0 && task->status <= 0xff) {
		uint32_t len = rq->dir == 2 ? (uint32_t)task->datain.size : 0;

		if (len > rq->in_len)
			len = rq->in_len;
		ret = answer(task->status, NULL, 0, task->datain.data, len);
	} else {
		/* SCSI_STATUS_ERROR, _CANCELLED, _TIMEOUT: no status came. */
		no_status(iscsi);
		ret = answer(-1, NULL, 0, NULL, 0);
	}
	scsi_free_scsi_task(task);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned char cdb[CDB_MAX], *out;
	struct iscsi_context *iscsi;
	struct request rq;
	int lun;

	if (argc != 5) {
		fprintf(stderr,
			"usage: iscsi_pipe PORTAL TARGET_IQN LUN INITIATOR_IQN\n");
		return 2;
	}
	lun = atoi(argv[3]);
	iscsi = iscsi_create_context(argv[4]);
	if (!iscsi || iscsi_set_targetname(iscsi, argv[2]) ||
	    iscsi_set_session_type(iscsi, ISCSI_SESSION_NORMAL) ||
	    iscsi_set_header_digest(iscsi, ISCSI_HEADER_DIGEST_NONE)) {
		fprintf(stderr, "iscsi_pipe: cannot set up a context\n");
		return 1;
	}
	iscsi_set_noautoreconnect(iscsi, 1);
	iscsi_set_timeout(iscsi, COMMAND_TIMEOUT_S);
	if (iscsi_full_connect_sync(iscsi, argv[1], lun)) {
		fprintf(stderr, "iscsi_pipe: login to %s %s: %s\n", argv[1],
			argv[2], iscsi_get_error(iscsi));
		return 1;
	}
	out = malloc(XFER_MAX);
	if (!out)
		return 1;
	/* Ready: the caller waits for this byte before its first request. */
	if (write_full("R", 1))
		return 1;
	while (!read_full(&rq, sizeof(rq))) {
		if (rq.cdb_len == 0 || rq.cdb_len > CDB_MAX || rq.dir > 2 ||
		    rq.out_len > XFER_MAX || rq.in_len > XFER_MAX) {
			fprintf(stderr, "iscsi_pipe: malformed request\n");
			return 1;
		}
		if (read_full(cdb, rq.cdb_len) ||
		    (rq.out_len && read_full(out, rq.out_len)))
			return 1;
		if (one_command(iscsi, lun, &rq, cdb, out))
			return 1;
	}
	iscsi_logout_sync(iscsi);
	iscsi_destroy_context(iscsi);
	free(out);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * target_core_vaai: the block-device store.
 *
 * A command's scatterlist becomes one or more bios submitted under a plug;
 * the last bio to finish completes the command.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/scatterlist.h>

#include "vaai.h"

static int vaai_bdev_open(struct vaai_dev *vdev)
{
	struct block_device *bdev = vaai_file_bdev(vdev->file);

	vdev->bdev.bdev = bdev;
	vdev->min_block = bdev_logical_block_size(bdev);
	vdev->dma_align = bdev_dma_alignment(bdev);
	vdev->dev.dev_attrib.is_nonrot = vaai_bdev_nonrot(bdev);
	/*
	 * UNMAP is a write-zeroes that may deallocate where the device has
	 * one (zeros guaranteed: LBPRZ = 1), else a discard (LBPRZ = 0).
	 */
	vdev->lbprz = bdev_write_zeroes_sectors(bdev) != 0;
	if (bdev_max_discard_sectors(bdev) || vdev->lbprz)
		vdev->unmap_unit = max(bdev_discard_granularity(bdev),
				       bdev_logical_block_size(bdev));
	return 0;
}

static loff_t vaai_bdev_size(struct vaai_dev *vdev)
{
	return bdev_nr_bytes(vdev->bdev.bdev);
}

static void vaai_bdev_bounce_free(struct scatterlist *sgl, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		__free_page(sg_page(&sgl[i]));
	kfree(sgl);
}

static void vaai_bdev_put(struct vaai_io *io)
{
	if (!atomic_dec_and_test(&io->pending))
		return;
	if (io->bounce)
		vaai_bdev_bounce_free(io->bounce, io->sgl_nents);
	vaai_io_done(io, io->error);
}

/*
 * An untorn write goes as one bio the block layer must not split, and the
 * device's atomic units assume segments of whole pages.  LIO allocates its
 * data pages whole; a fabric that passes the initiator's own list
 * (tcm_loop, vhost-scsi) may not, and then the data is copied into pages.
 */
static bool vaai_bdev_whole_pages(struct vaai_io *io)
{
	struct scatterlist *sg;
	size_t left = io->len;
	int i;

	for_each_sg(io->sgl, sg, io->sgl_nents, i) {
		size_t len = min_t(size_t, sg->length, left);

		if (!len)
			break;
		if (sg->offset || (len != PAGE_SIZE && len != left))
			return false;
		left -= len;
	}
	return true;
}

static int vaai_bdev_bounce(struct vaai_io *io)
{
	unsigned int i, nr = DIV_ROUND_UP(io->len, PAGE_SIZE);
	struct scatterlist *sgl;

	sgl = kmalloc_array(nr, sizeof(*sgl), GFP_NOIO);
	if (!sgl)
		return -ENOMEM;
	sg_init_table(sgl, nr);
	for (i = 0; i < nr; i++) {
		size_t off = (size_t)i * PAGE_SIZE;
		size_t len = min_t(size_t, PAGE_SIZE, io->len - off);
		struct page *page = alloc_page(GFP_NOIO);

		if (!page) {
			vaai_bdev_bounce_free(sgl, i);
			return -ENOMEM;
		}
		sg_pcopy_to_buffer(io->sgl, io->sgl_nents, page_address(page),
				   len, off);
		sg_set_page(&sgl[i], page, len, 0);
	}
	io->sgl = io->bounce = sgl;
	io->sgl_nents = nr;
	return 0;
}

static void vaai_bdev_end_io(struct bio *bio)
{
	struct vaai_io *io = bio->bi_private;

	if (bio->bi_status)
		cmpxchg(&io->error, 0, blk_status_to_errno(bio->bi_status));
	bio_put(bio);
	vaai_bdev_put(io);
}

static struct bio *vaai_bdev_bio_alloc(struct vaai_io *io, blk_opf_t opf,
				       sector_t sector, unsigned int nr_vecs)
{
	struct bio *bio;

	bio = bio_alloc(io->vdev->bdev.bdev, min_t(unsigned int, nr_vecs,
						   BIO_MAX_VECS), opf, GFP_NOIO);
	bio->bi_iter.bi_sector = sector;
	bio->bi_end_io = vaai_bdev_end_io;
	bio->bi_private = io;
	atomic_inc(&io->pending);
	return bio;
}

static void vaai_bdev_submit_rw(struct vaai_io *io)
{
	blk_opf_t opf = io->write ? REQ_OP_WRITE : REQ_OP_READ;
	sector_t sector = io->pos >> SECTOR_SHIFT;
	size_t left = io->len;
	struct scatterlist *sg;
	struct bio *bio = NULL;
	struct blk_plug plug;
	int i;

	if (io->fua)
		opf |= REQ_FUA;
	if (io->atomic) {
		int ret = vaai_bdev_whole_pages(io) ? 0 : vaai_bdev_bounce(io);

		if (ret) {
			vaai_io_done(io, ret);
			return;
		}
		opf |= VAAI_REQ_ATOMIC;
	}
	vaai_io_lock(io, io->pos, io->len, false);

	/* One reference for the submitter, dropped after the last submit. */
	atomic_set(&io->pending, 1);
	blk_start_plug(&plug);
	/*
	 * The initiator's buffer may be larger than the transfer (an
	 * underflow LIO core accepted): move io->len bytes, no more.
	 */
	for_each_sg(io->sgl, sg, io->sgl_nents, i) {
		unsigned int len = min_t(size_t, sg->length, left);

		if (!len)
			break;
		if (bio && bio_add_page(bio, sg_page(sg), len, sg->offset) == len)
			goto next;
		if (bio && io->atomic) {
			/* an untorn write is one bio, or none */
			io->error = -EINVAL;
			bio_io_error(bio);
			bio = NULL;
			break;
		}
		if (bio)
			submit_bio(bio);
		bio = vaai_bdev_bio_alloc(io, opf, sector, io->sgl_nents - i);
		if (bio_add_page(bio, sg_page(sg), len, sg->offset) != len) {
			io->error = -EIO;
			bio_io_error(bio);
			bio = NULL;
			break;
		}
next:
		sector += len >> SECTOR_SHIFT;
		left -= len;
	}
	if (bio)
		submit_bio(bio);
	blk_finish_plug(&plug);
	vaai_bdev_put(io);
}

/* A block device's cache has no ranges: flush all of it. */
static int vaai_bdev_flush(struct vaai_dev *vdev, loff_t pos, loff_t len)
{
	return blkdev_issue_flush(vdev->bdev.bdev);
}

/*
 * A bio of a few segments on the caller's stack: a heartbeat's read and
 * write take nothing from the bio pool.
 */
#define VAAI_BDEV_STACK_VECS	4

/*
 * The bytes a bio of a larger synchronous transfer carries on a
 * bio-based device (a RAM disk, a device mapper target).  A RAM disk
 * copies a bio's data in submit_bio(), with no point to reschedule at: a
 * copy's 256 KiB chunk in one bio held its CPU for a millisecond under
 * the emulator, and the thread that would complete a heartbeat on that
 * CPU waited for it.  A transfer's bios are all in flight before it
 * waits.  A request-based device (a disk) only queues the bio there and
 * gets the transfer whole; so does a write with FUA, which would
 * otherwise pay for it in every piece on a device that emulates FUA with
 * a flush.
 */
#define VAAI_BDEV_BIO_BYTES	(64U << 10)

/* bv[*i...] into bio from *pos on, up to *len bytes in all. */
static void vaai_bdev_fill(struct bio *bio, struct bio_vec *bv,
			   unsigned int nr, unsigned int *i, loff_t *pos,
			   size_t *len, unsigned int max, unsigned int block)
{
	bio->bi_iter.bi_sector = *pos >> SECTOR_SHIFT;
	for (; *i < nr && *len; (*i)++) {
		unsigned int n = min_t(size_t, bv[*i].bv_len, *len);

		/* past max, only on to the end of a logical block */
		if (bio->bi_iter.bi_size >= max &&
		    !(bio->bi_iter.bi_size % block))
			break;
		if (bio_add_page(bio, bv[*i].bv_page, n, bv[*i].bv_offset) != n)
			break;
		*pos += n;
		*len -= n;
	}
}

/*
 * Synchronous transfer of len bytes from or to bv (COMPARE AND WRITE,
 * OR WRITE, VERIFY, WRITE SAME's pattern, a copy's chunk).
 */
static int vaai_bdev_xfer_bvec(struct vaai_dev *vdev, bool write, loff_t pos,
			       struct bio_vec *bv, unsigned int nr, size_t len,
			       bool fua)
{
	blk_opf_t opf = write ? REQ_OP_WRITE | REQ_SYNC | (fua ? REQ_FUA : 0) :
				REQ_OP_READ;
	struct bio_vec stack_vecs[VAAI_BDEV_STACK_VECS];
	struct block_device *bdev = vdev->bdev.bdev;
	unsigned int max = UINT_MAX, block = bdev_logical_block_size(bdev);
	struct bio stack_bio, *bio = NULL, *next;
	unsigned int i = 0;
	int ret;

	if (!len)
		return 0;
	if (!fua && !queue_is_mq(bdev_get_queue(bdev)))
		max = VAAI_BDEV_BIO_BYTES;
	if (nr <= VAAI_BDEV_STACK_VECS && len <= max) {
		bio_init(&stack_bio, bdev, stack_vecs, nr, opf);
		vaai_bdev_fill(&stack_bio, bv, nr, &i, &pos, &len, max, block);
		ret = len ? -EIO : submit_bio_wait(&stack_bio);
		bio_uninit(&stack_bio);
		return ret;
	}
	/* each bio chained to the next; the last completes after them all */
	while (len) {
		next = bio_alloc(bdev, min_t(unsigned int, nr - i, BIO_MAX_VECS),
				 opf, GFP_NOIO);
		vaai_bdev_fill(next, bv, nr, &i, &pos, &len, max, block);
		if (!next->bi_iter.bi_size) {
			/* bv shorter than len: no bio would ever take the rest */
			bio_put(next);
			break;
		}
		if (bio) {
			bio_chain(bio, next);
			submit_bio(bio);
			cond_resched();
		}
		bio = next;
	}
	if (!bio)
		return -EIO;
	ret = submit_bio_wait(bio);
	bio_put(bio);
	return ret ?: len ? -EIO : 0;
}

static int vaai_bdev_zero(struct vaai_dev *vdev, loff_t pos, loff_t len)
{
	return blkdev_issue_zeroout(vdev->bdev.bdev, pos >> SECTOR_SHIFT,
				    len >> SECTOR_SHIFT, GFP_NOIO,
				    BLKDEV_ZERO_NOUNMAP);
}

static int vaai_bdev_unmap(struct vaai_dev *vdev, loff_t pos, loff_t len)
{
	sector_t sector = pos >> SECTOR_SHIFT, nr = len >> SECTOR_SHIFT;

	if (vdev->lbprz)
		return blkdev_issue_zeroout(vdev->bdev.bdev, sector, nr,
					    GFP_NOIO, 0);
	return blkdev_issue_discard(vdev->bdev.bdev, sector, nr, GFP_NOIO);
}

/* A block device does not say what it has allocated: "mapped or unknown". */
static loff_t vaai_bdev_map_status(struct vaai_dev *vdev, loff_t pos,
				   loff_t len, bool *mapped)
{
	*mapped = true;
	return len;
}

const struct vaai_store_ops vaai_bdev_ops = {
	.name		= "bdev",
	.open		= vaai_bdev_open,
	.size		= vaai_bdev_size,
	.submit_rw	= vaai_bdev_submit_rw,
	.flush		= vaai_bdev_flush,
	.xfer_bvec	= vaai_bdev_xfer_bvec,
	.zero		= vaai_bdev_zero,
	.unmap		= vaai_bdev_unmap,
	.map_status	= vaai_bdev_map_status,
};

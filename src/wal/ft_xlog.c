/*-------------------------------------------------------------------------
 *
 * ft_xlog.c
 *	  Construction of fractam WAL records (the "do" side).
 *
 * Each function is called inside the caller's critical section, after the
 * pages were changed and marked dirty; it inserts the record and stamps
 * the pages with its LSN.  Relations that need no WAL (temporary,
 * unlogged, or created in this transaction at wal_level=minimal) log
 * nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "ft/ft_page.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "wal/ft_xlog.h"

void
ftxlog_reserve(Relation rel, int nblocks)
{
	if (RelationNeedsWAL(rel) && nblocks > XLR_NORMAL_MAX_BLOCK_ID + 1)
		XLogEnsureRecordSpace(nblocks - 1, nblocks + XLR_NORMAL_RDATAS);
}

/*
 * item was added at off of buf: a leaf's entry, or (msg) a buffer node's
 * message, whose MSN became the node's (redo takes it from the message).
 */
void
ftxlog_insert(Relation rel, Buffer buf, OffsetNumber off,
			  const char *item, Size len, bool msg)
{
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;

	XLogBeginInsert();
	XLogRegisterData((char *) &off, sizeof(OffsetNumber));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) item, len);
	recptr = XLogInsert(RM_FRACTAM_ID,
						msg ? XLOG_FT_INSERT_MSG : XLOG_FT_INSERT);
	PageSetLSN(BufferGetPage(buf), recptr);
}

/*
 * The items at offsets first .. first + n - 1 of leaf buf were just added
 * (XLOG_FT_APPEND); data is their block data, built by the caller before
 * its critical section.
 */
void
ftxlog_append(Relation rel, Buffer buf, OffsetNumber first, int n,
			  const char *data, Size datalen)
{
	xl_ft_append xlrec;
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;
	xlrec.first = first;
	xlrec.nitems = (uint16) n;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) data, datalen);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_APPEND);
	PageSetLSN(BufferGetPage(buf), recptr);
}

void
ftxlog_flush(Relation rel, Buffer bbuf, OffsetNumber slice_first,
			 uint16 nslice, OffsetNumber pivot_off,
			 char **pivots, Size *pivotlens, int npivots,
			 Buffer *leaves, int nleaves, bool count_flush,
			 const char *leafdelta, Size leafdeltalen)
{
	xl_ft_flush xlrec;
	XLogRecPtr	recptr;
	uint16		lens[FT_MAX_RECORD_BLOCKS];
	int			i;

	if (!RelationNeedsWAL(rel))
		return;
	Assert(nleaves + 1 <= FT_MAX_RECORD_BLOCKS);
	Assert(npivots <= FT_MAX_RECORD_BLOCKS);

	xlrec.slice_first = slice_first;
	xlrec.nslice = nslice;
	xlrec.pivot_off = pivot_off;
	xlrec.npivots = npivots;
	xlrec.nleaves = nleaves;
	xlrec.flags = count_flush ? FT_XL_COUNT_FLUSH : 0;
	if (leafdelta)
		xlrec.flags |= FT_XL_LEAF_DELTA;

	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, bbuf, REGBUF_STANDARD);
	for (i = 0; i < npivots; i++)
	{
		lens[i] = (uint16) pivotlens[i];
		XLogRegisterBufData(0, (char *) &lens[i], sizeof(uint16));
		XLogRegisterBufData(0, pivots[i], pivotlens[i]);
	}
	if (leafdelta)
	{
		/* a leaf changed in place: its delta (dropped with an FPI) */
		XLogRegisterBuffer(1, leaves[0], REGBUF_STANDARD);
		XLogRegisterBufData(1, (char *) leafdelta, leafdeltalen);
	}
	/* new or rewritten leaves: one whole image each, never an FPI plus a delta */
	for (i = leafdelta ? 1 : 0; i < nleaves; i++)
		XLogRegisterBuffer(i + 1, leaves[i],
						   REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_FLUSH);

	PageSetLSN(BufferGetPage(bbuf), recptr);
	for (i = 0; i < nleaves; i++)
		PageSetLSN(BufferGetPage(leaves[i]), recptr);
}

void
ftxlog_move(Relation rel, Buffer upper, OffsetNumber *moved, int nmoved,
			Buffer lower, const char *payload, Size payloadlen,
			uint64 lower_msn)
{
	xl_ft_move	xlrec;
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;
	xlrec.lower_msn = lower_msn;
	xlrec.nmoved = nmoved;

	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, upper, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) moved, nmoved * sizeof(OffsetNumber));
	XLogRegisterBuffer(1, lower, REGBUF_STANDARD);
	XLogRegisterBufData(1, (char *) payload, payloadlen);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_MOVE);
	PageSetLSN(BufferGetPage(upper), recptr);
	PageSetLSN(BufferGetPage(lower), recptr);
}

void
ftxlog_images(Relation rel, Buffer *bufs, int nbufs, uint16 reason)
{
	xl_ft_images xlrec;
	XLogRecPtr	recptr;
	int			i;

	if (!RelationNeedsWAL(rel))
		return;
	Assert(nbufs <= FT_MAX_RECORD_BLOCKS);
	xlrec.nblocks = nbufs;
	xlrec.reason = reason;

	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	for (i = 0; i < nbufs; i++)
		XLogRegisterBuffer(i, bufs[i], REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_IMAGES);
	for (i = 0; i < nbufs; i++)
		PageSetLSN(BufferGetPage(bufs[i]), recptr);
}

/*
 * ftxlog_images, but block 1 (a left sibling whose only change is its
 * right link) is logged as its new right link, not as an image: half of
 * what a merge of two leaves or the deletion of an empty leaf would log
 * otherwise.  With node (FT_IMAGES_MERGED_PIVOTS), block 0, the level-1
 * node of a merge of leaves, is logged by which of its pivots went, not as
 * an image either (the image took a third of such a record).
 */
void
ftxlog_images_relinked(Relation rel, Buffer *bufs, int nbufs, uint16 reason,
					   const xl_ft_merged_node *node)
{
	xl_ft_images xlrec;
	XLogRecPtr	recptr;
	BlockNumber right;
	int			i;

	if (!RelationNeedsWAL(rel))
		return;
	Assert(nbufs >= 2 && nbufs <= FT_MAX_RECORD_BLOCKS);
	Assert(FtImagesRelinked(reason));
	Assert((node != NULL) == (reason == FT_IMAGES_MERGED_PIVOTS));
	xlrec.nblocks = nbufs;
	xlrec.reason = reason;
	right = FtPageGetOpaque(BufferGetPage(bufs[1]))->ft_right;

	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	for (i = 0; i < nbufs; i++)
		XLogRegisterBuffer(i, bufs[i],
						   i == 1 || (i == 0 && node != NULL) ? REGBUF_STANDARD :
						   REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
	if (node != NULL)
		XLogRegisterBufData(0, (char *) node, sizeof(*node));
	XLogRegisterBufData(1, (char *) &right, sizeof(right));
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_IMAGES);
	for (i = 0; i < nbufs; i++)
		PageSetLSN(BufferGetPage(bufs[i]), recptr);
}

void
ftxlog_vacuum(Relation rel, Buffer buf, OffsetNumber *offsets, int ndeleted)
{
	xl_ft_vacuum xlrec;
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;
	xlrec.ndeleted = ndeleted;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) offsets, ndeleted * sizeof(OffsetNumber));
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_VACUUM);
	PageSetLSN(BufferGetPage(buf), recptr);
}

void
ftxlog_frame_dead(Relation rel, Buffer buf, uint64 stamp, const uint16 *idx,
				  int n)
{
	xl_ft_frame_dead xlrec;
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;
	xlrec.stamp = stamp;
	xlrec.ndead = (uint16) n;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) idx, n * sizeof(uint16));
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_FRAME_DEAD);
	PageSetLSN(BufferGetPage(buf), recptr);
}

void
ftxlog_frame_change(Relation rel, Buffer buf, uint64 stamp, const char *data,
					Size len)
{
	xl_ft_frame_change xlrec;
	XLogRecPtr	recptr;

	StaticAssertStmt(sizeof(xl_ft_frame_change) != sizeof(xl_ft_frame_dead),
					 "a frame change record is told from frame_dead by its length");
	if (!RelationNeedsWAL(rel))
		return;
	memset(&xlrec, 0, sizeof(xlrec));
	xlrec.stamp = stamp;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) data, len);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_FRAME_DEAD);
	PageSetLSN(BufferGetPage(buf), recptr);
}

void
ftxlog_prune(Relation rel, Buffer buf, const char *delta, Size deltalen,
			 uint16 ndeleted, uint16 ninserted)
{
	xl_ft_prune xlrec;
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;
	xlrec.ndeleted = ndeleted;
	xlrec.ninserted = ninserted;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) delta, deltalen);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_PRUNE);
	PageSetLSN(BufferGetPage(buf), recptr);
}

void
ftxlog_reuse(Relation rel, BlockNumber blkno, FullTransactionId safexid)
{
	xl_ft_reuse xlrec;

	/* only hot-standby readers need to hear about it */
	if (!RelationNeedsWAL(rel) || !XLogStandbyInfoActive())
		return;
	xlrec.node = rel->rd_node;
	xlrec.block = blkno;
	xlrec.safexid = safexid;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogInsert(RM_FRACTAM_ID, XLOG_FT_REUSE);
}

void
ftxlog_patch(Relation rel, Buffer buf, OffsetNumber off, uint16 start,
			 const char *bytes, uint16 len)
{
	xl_ft_patch xlrec;
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;
	xlrec.off = off;
	xlrec.start = start;
	xlrec.len = len;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) bytes, len);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_PATCH);
	PageSetLSN(BufferGetPage(buf), recptr);
}

void
ftxlog_transform(Relation rel, Buffer buf, OffsetNumber off, uint16 transform)
{
	xl_ft_transform xlrec;
	XLogRecPtr	recptr;

	StaticAssertStmt(sizeof(xl_ft_transform) != sizeof(xl_ft_patch),
					 "a transform record is told from a patch by its length");
	if (!RelationNeedsWAL(rel))
		return;
	xlrec.off = off;
	xlrec.transform = transform;
	xlrec.reserved = 0;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_PATCH);
	PageSetLSN(BufferGetPage(buf), recptr);
}

void
ftxlog_patches(Relation rel, Buffer buf, const char *payload, Size len,
			   uint16 npatches)
{
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;
	XLogBeginInsert();
	XLogRegisterData((char *) &npatches, sizeof(npatches));
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) payload, len);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_PATCHES);
	PageSetLSN(BufferGetPage(buf), recptr);
}

void
ftxlog_meta_seq(Relation rel, Buffer metabuf, uint64 seq, bool with_free)
{
	XLogRecPtr	recptr;
	FtMetaData *meta = FtPageGetMeta(BufferGetPage(metabuf));

	if (!RelationNeedsWAL(rel))
		return;
	XLogBeginInsert();
	XLogRegisterData((char *) &seq, sizeof(seq));
	if (with_free)
	{
		XLogRegisterData((char *) &meta->nfree_seq, sizeof(uint32));
		XLogRegisterData((char *) meta->free_seq,
						 meta->nfree_seq * sizeof(FtSeqExtent));
	}
	XLogRegisterBuffer(0, metabuf, REGBUF_STANDARD);
	recptr = XLogInsert(RM_FRACTAM_ID, XLOG_FT_META_SEQ);
	PageSetLSN(BufferGetPage(metabuf), recptr);
}

void
ftxlog_vm(Relation rel, Buffer vmbuf, uint8 info, BlockNumber heapblk,
		  TransactionId cutoff_xid, uint8 flags)
{
	xl_ft_vm	xlrec;
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;
	xlrec.heapblk = heapblk;
	xlrec.cutoff_xid = cutoff_xid;
	xlrec.flags = flags;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterBuffer(0, vmbuf, 0);
	recptr = XLogInsert(RM_FRACTAM_ID, info);
	PageSetLSN(BufferGetPage(vmbuf), recptr);
}

/*
 * A row change of a table for logical decoding (XLOG_FT_LOGICAL).  The
 * caller has checked RelationIsLogicallyLogged and holds no buffer lock.
 * The record carries the replication origin of the session (as heap's
 * DML records do), so that decoding can filter changes by origin.
 */
void
ftxlog_logical(Relation rel, uint8 action, HeapTuple newtup,
			   HeapTuple oldtup)
{
	xl_ft_logical xlrec;

	memset(&xlrec, 0, sizeof(xlrec));
	xlrec.node = rel->rd_node;
	xlrec.action = action;
	xlrec.newlen = newtup ? newtup->t_len : 0;
	xlrec.oldlen = oldtup ? oldtup->t_len : 0;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	if (newtup)
		XLogRegisterData((char *) newtup->t_data, newtup->t_len);
	if (oldtup)
		XLogRegisterData((char *) oldtup->t_data, oldtup->t_len);
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	(void) XLogInsert(RM_FRACTAM_ID, XLOG_FT_LOGICAL);
}

static RmgrData fractam_rmgr = {
	.rm_name = FT_RMGR_NAME,
	.rm_redo = ft_redo,
	.rm_desc = ft_desc,
	.rm_identify = ft_identify,
	.rm_startup = NULL,			/* redo keeps no state between records */
	.rm_cleanup = NULL,
	.rm_mask = ft_mask,
	.rm_decode = ft_decode		/* XLOG_FT_LOGICAL: table row changes */
};

/* At library load (_PG_init), before recovery can start */
void
ft_register_rmgr(void)
{
	RegisterCustomRmgr(RM_FRACTAM_ID, &fractam_rmgr);
}

/*-------------------------------------------------------------------------
 *
 * ft_redo.c
 *	  Redo and masking for fractam's WAL records.
 *
 * Redo is deterministic and reads no catalogs: it applies the same page
 * helpers (src/ft/ft_page.c) as the do side, so the pages it produces are
 * byte-identical, which wal_consistency_checking verifies through ft_mask.
 * All blocks of a multi-page record are locked together, in registration
 * order (top-down, left to right), so hot-standby readers never see half
 * of a flush.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/bufmask.h"
#include "access/xlogutils.h"
#include "ft/ft.h"
#include "ft/ft_page.h"
#include "storage/bufmgr.h"
#include "storage/standby.h"
#include "wal/ft_vmpage.h"
#include "wal/ft_xlog.h"

/*
 * A record whose layout is not this build's: WAL written by an older build
 * of fractam (README, limitations).  Applying it would corrupt pages.
 */
static void
wal_format_mismatch(const char *what)
{
	ereport(PANIC,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("fractam: %s WAL record does not have this build's layout", what),
			 errhint("WAL written by an older fractam build cannot be replayed; "
					 "restart that build until a clean shutdown, then upgrade.")));
}

static void
ft_redo_insert(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	char	   *rec = XLogRecGetData(record);
	bool		msg = (XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_FT_INSERT_MSG;
	Size		datalen = XLogRecGetDataLen(record);
	OffsetNumber offnum;
	Buffer		buf;

	if (datalen != SizeOfFtInsert && !(msg && datalen == SizeOfFtInsertMsgOld))
		wal_format_mismatch("INSERT");
	memcpy(&offnum, rec, sizeof(OffsetNumber));
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		char	   *item = XLogRecGetBlockData(record, 0, &len);

		ft_page_add_item(page, item, len, offnum);
		if (msg)
		{
			FtMsgHeader hdr;

			if (len < sizeof(FtMsgHeader))
				wal_format_mismatch("INSERT_MSG");
			memcpy(&hdr, item, sizeof(hdr));
			FtPageGetOpaque(page)->ft_msn = FtMsgMsn(&hdr);
			/* an older build's record names the same MSN */
			Assert(datalen == SizeOfFtInsert ||
				   memcmp(rec + SizeOfFtInsert, &FtPageGetOpaque(page)->ft_msn,
						  sizeof(uint64)) == 0);
		}
		PageSetLSN(page, lsn);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
ft_redo_append(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	xl_ft_append xlrec;
	Buffer		buf;

	if (XLogRecGetDataLen(record) != sizeof(xl_ft_append))
		wal_format_mismatch("APPEND");
	memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		datalen;
		char	   *data = XLogRecGetBlockData(record, 0, &datalen);
		char	   *end = data + datalen;
		int			i;

		for (i = 0; i < xlrec.nitems; i++)
		{
			uint16		len;

			if (data + sizeof(uint16) > end)
				wal_format_mismatch("APPEND");
			memcpy(&len, data, sizeof(uint16));
			data += sizeof(uint16);
			if (data + len > end)
				wal_format_mismatch("APPEND");
			ft_page_add_item(page, data, len, xlrec.first + i);
			data += len;
		}
		if (data != end)
			wal_format_mismatch("APPEND");
		PageSetLSN(page, lsn);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/*
 * Redo a leaf changed in place (block block_id's data is an FtLeafDelta):
 * a flush's leaf that did not split, or a pruned leaf.  buf is returned
 * locked (or invalid), for the caller to release.
 */
static void
redo_leaf_delta(XLogReaderState *record, uint8 block_id, Buffer *buf,
				const char *what)
{
	if (XLogReadBufferForRedo(record, block_id, buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(*buf);
		Size		datalen;
		char	   *data = XLogRecGetBlockData(record, block_id, &datalen);
		char	   *delta = palloc(datalen);

		memcpy(delta, data, datalen);	/* realign */
		if (!ft_leaf_delta_valid(delta, datalen))
			wal_format_mismatch(what);
		ft_apply_leaf_delta(page, delta);
		pfree(delta);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(*buf);
	}
}

static void
ft_redo_flush(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	xl_ft_flush *xlrec = (xl_ft_flush *) XLogRecGetData(record);
	Buffer		bbuf;
	Buffer		leaves[FT_MAX_RECORD_BLOCKS];
	int			i;

	if (XLogReadBufferForRedo(record, 0, &bbuf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(bbuf);
		Size		datalen;
		char	   *data = XLogRecGetBlockData(record, 0, &datalen);
		char	   *pivots[FT_MAX_RECORD_BLOCKS];
		Size		lens[FT_MAX_RECORD_BLOCKS];
		PGAlignedBlock scratch;
		char	   *dst = scratch.data;

		for (i = 0; i < xlrec->npivots; i++)
		{
			uint16		len;

			memcpy(&len, data, sizeof(uint16));
			data += sizeof(uint16);
			memcpy(dst, data, len);		/* realign */
			pivots[i] = dst;
			lens[i] = len;
			data += len;
			dst += MAXALIGN(len);
		}
		ft_apply_flush_to_buffer_node(page, xlrec->slice_first, xlrec->nslice,
									  xlrec->pivot_off, pivots, lens,
									  xlrec->npivots,
									  (xlrec->flags & FT_XL_COUNT_FLUSH) != 0);
		PageSetLSN(page, lsn);
		MarkBufferDirty(bbuf);
	}
	i = 0;
	if (xlrec->flags & FT_XL_LEAF_DELTA)
	{
		redo_leaf_delta(record, 1, &leaves[0], "FLUSH");
		i = 1;
	}
	for (; i < xlrec->nleaves; i++)
	{
		if (XLogReadBufferForRedo(record, i + 1, &leaves[i]) != BLK_RESTORED)
			elog(ERROR, "fractam redo: flush record without leaf image for block %d",
				 i + 1);
	}
	for (i = 0; i < xlrec->nleaves; i++)
		if (BufferIsValid(leaves[i]))
			UnlockReleaseBuffer(leaves[i]);
	if (BufferIsValid(bbuf))
		UnlockReleaseBuffer(bbuf);
}

static void
ft_redo_move(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	xl_ft_move *xlrec = (xl_ft_move *) XLogRecGetData(record);
	Buffer		ubuf;
	Buffer		lbuf;
	int			n = xlrec->nmoved;
	XLogRedoAction uaction;
	XLogRedoAction laction;

	/* lock both (top-down), so standby readers never see half a move */
	uaction = XLogReadBufferForRedo(record, 0, &ubuf);
	laction = XLogReadBufferForRedo(record, 1, &lbuf);

	if (laction == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(lbuf);
		Size		datalen;
		char	   *data = XLogRecGetBlockData(record, 1, &datalen);

		ft_apply_move_lower(page, data, n, xlrec->lower_msn);
		PageSetLSN(page, lsn);
		MarkBufferDirty(lbuf);
	}
	if (uaction == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(ubuf);
		Size		datalen;
		OffsetNumber offsets[MaxOffsetNumber];
		char	   *data = XLogRecGetBlockData(record, 0, &datalen);

		Assert(datalen == n * sizeof(OffsetNumber));
		memcpy(offsets, data, n * sizeof(OffsetNumber));
		ft_apply_move_upper(page, offsets, n);
		PageSetLSN(page, lsn);
		MarkBufferDirty(ubuf);
	}
	if (BufferIsValid(lbuf))
		UnlockReleaseBuffer(lbuf);
	if (BufferIsValid(ubuf))
		UnlockReleaseBuffer(ubuf);
}

static void
ft_redo_images(XLogReaderState *record)
{
	xl_ft_images *xlrec = (xl_ft_images *) XLogRecGetData(record);
	Buffer		bufs[FT_MAX_RECORD_BLOCKS];
	int			i;

	for (i = 0; i < xlrec->nblocks; i++)
	{
		XLogRedoAction action = XLogReadBufferForRedo(record, i, &bufs[i]);

		if (i == 0 && xlrec->reason == FT_IMAGES_MERGED_PIVOTS)
		{
			/* the node loses the merged leaves' pivots but the first */
			if (action == BLK_NEEDS_REDO)
			{
				Page		page = BufferGetPage(bufs[i]);
				Size		len;
				char	   *data = XLogRecGetBlockData(record, i, &len);
				xl_ft_merged_node node;
				BlockNumber target;

				if (len != sizeof(node))
					wal_format_mismatch("IMAGES (merged pivots)");
				memcpy(&node, data, sizeof(node));
				XLogRecGetBlockTag(record, xlrec->nblocks - 1, NULL, NULL,
								   &target);
				if (node.nmerged != xlrec->nblocks - 2 || node.nmerged < 2 ||
					node.first + node.nmerged > FtPageGetOpaque(page)->ft_nchildren)
					wal_format_mismatch("IMAGES (merged pivots)");
				ft_apply_merge_to_node(page, node.first, node.nmerged, target);
				PageSetLSN(page, record->EndRecPtr);
				MarkBufferDirty(bufs[i]);
			}
			continue;
		}
		if (i == 1 && FtImagesRelinked(xlrec->reason))
		{
			/* the left sibling takes its new right link */
			if (action == BLK_NEEDS_REDO)
			{
				Page		page = BufferGetPage(bufs[i]);
				Size		len;
				char	   *data = XLogRecGetBlockData(record, i, &len);
				BlockNumber right;

				if (len != sizeof(BlockNumber))
					wal_format_mismatch("IMAGES (relink)");
				memcpy(&right, data, sizeof(right));
				FtPageGetOpaque(page)->ft_right = right;
				PageSetLSN(page, record->EndRecPtr);
				MarkBufferDirty(bufs[i]);
			}
			continue;
		}
		if (action != BLK_RESTORED)
			elog(ERROR, "fractam redo: image record without image for block %d", i);
	}
	/* hot-standby backends drop routing copies that may lead to the node */
	if (xlrec->reason == FT_IMAGES_DELETE_UPPER)
		ft_routecache_advance_epoch();
	for (i = 0; i < xlrec->nblocks; i++)
		if (BufferIsValid(bufs[i]))
			UnlockReleaseBuffer(bufs[i]);
}

static void
ft_redo_vacuum(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	xl_ft_vacuum *xlrec = (xl_ft_vacuum *) XLogRecGetData(record);
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		OffsetNumber offsets[MaxOffsetNumber];
		char	   *data = XLogRecGetBlockData(record, 0, &len);

		Assert(len == xlrec->ndeleted * sizeof(OffsetNumber));
		memcpy(offsets, data, xlrec->ndeleted * sizeof(OffsetNumber));
		PageIndexMultiDelete(page, offsets, xlrec->ndeleted);
		PageSetLSN(page, lsn);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/* the frame of compressed leaf buf, which a frame record names */
static FtFrameHeader *
redo_frame(Buffer buf, const char *what)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);

	if (!FtPageIsCompressed(opaque) ||
		PageGetMaxOffsetNumber(page) != FtFirstDataOffset(opaque))
		elog(PANIC, "fractam: %s record for block %u, which is not a compressed leaf",
			 what, BufferGetBlockNumber(buf));
	return (FtFrameHeader *) PageGetItem(page,
										 PageGetItemId(page, FtFirstDataOffset(opaque)));
}

/* XLOG_FT_FRAME_DEAD with xl_ft_frame_change: a change area grows */
static void
ft_redo_frame_change(XLogReaderState *record)
{
	xl_ft_frame_change xlrec;
	Buffer		buf;

	memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		FtFrameHeader *frame = redo_frame(buf, "frame-change");
		Size		len;
		char	   *data = XLogRecGetBlockData(record, 0, &len);
		FtFrameChange chg;

		if (len == 0)
			wal_format_mismatch("FRAME_DEAD (change)");
		while (len > 0)
		{
			if (len < FT_CHANGE_HDRSZ)
				wal_format_mismatch("FRAME_DEAD (change)");
			memcpy(&chg, data, FT_CHANGE_HDRSZ);
			if (len < FT_CHANGE_HDRSZ + chg.len)
				wal_format_mismatch("FRAME_DEAD (change)");
			if (!ft_frame_add_change(frame, xlrec.stamp, &chg,
									 data + FT_CHANGE_HDRSZ, false))
				elog(PANIC, "fractam redo: a change does not fit the frame of block %u",
					 BufferGetBlockNumber(buf));
			data += FT_CHANGE_HDRSZ + chg.len;
			len -= FT_CHANGE_HDRSZ + chg.len;
		}
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
ft_redo_frame_dead(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	xl_ft_frame_dead xlrec;
	Buffer		buf;

	if (XLogRecGetDataLen(record) == sizeof(xl_ft_frame_change))
	{
		ft_redo_frame_change(record);
		return;
	}
	memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		FtFrameHeader *frame = redo_frame(buf, "frame-dead");
		Size		len;
		char	   *data = XLogRecGetBlockData(record, 0, &len);
		uint16	   *idx = palloc(Max(len, 1));

		if (len != xlrec.ndead * sizeof(uint16))
			wal_format_mismatch("FRAME_DEAD");
		memcpy(idx, data, len);
		ft_frame_set_dead(frame, xlrec.stamp, idx, xlrec.ndead);
		pfree(idx);
		PageSetLSN(page, lsn);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
ft_redo_prune(XLogReaderState *record)
{
	Buffer		buf;

	redo_leaf_delta(record, 0, &buf, "PRUNE");
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
ft_redo_reuse(XLogReaderState *record)
{
	xl_ft_reuse *xlrec = (xl_ft_reuse *) XLogRecGetData(record);

	if (InHotStandby)
		ResolveRecoveryConflictWithSnapshotFullXid(xlrec->safexid, xlrec->node);
}

/* XLOG_FT_PATCH with xl_ft_transform: the item replaced by its transform */
static void
ft_redo_transform(XLogReaderState *record)
{
	xl_ft_transform xlrec;
	Buffer		buf;

	memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		ItemId		iid;
		char	   *item;
		Size		newlen;

		if (xlrec.off < FirstOffsetNumber ||
			xlrec.off > PageGetMaxOffsetNumber(page))
			wal_format_mismatch("PATCH (transform)");
		iid = PageGetItemId(page, xlrec.off);
		item = ft_item_transformed(xlrec.transform,
								   (char *) PageGetItem(page, iid),
								   ItemIdGetLength(iid), &newlen);
		if (!PageIndexTupleOverwrite(page, xlrec.off, (Item) item, newlen))
			elog(PANIC, "fractam redo: item %u does not fit its page once transformed",
				 xlrec.off);
		pfree(item);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
ft_redo_patch(XLogReaderState *record)
{
	xl_ft_patch xlrec;
	Buffer		buf;

	if (XLogRecGetDataLen(record) == sizeof(xl_ft_transform))
	{
		ft_redo_transform(record);
		return;
	}
	if (XLogRecGetDataLen(record) != sizeof(xl_ft_patch))
		wal_format_mismatch("PATCH");
	memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		char	   *bytes = XLogRecGetBlockData(record, 0, &len);
		ItemId		iid;

		if (len != xlrec.len || xlrec.off > PageGetMaxOffsetNumber(page))
			wal_format_mismatch("PATCH");
		iid = PageGetItemId(page, xlrec.off);
		if ((Size) xlrec.start + xlrec.len > ItemIdGetLength(iid))
			elog(PANIC, "fractam redo: patch of %u bytes at %u exceeds item %u of length %u",
				 xlrec.len, xlrec.start, xlrec.off, ItemIdGetLength(iid));
		memcpy((char *) PageGetItem(page, iid) + xlrec.start, bytes, len);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
ft_redo_meta_seq(XLogReaderState *record)
{
	uint64		seq;
	Buffer		buf;

	const char *data = XLogRecGetData(record);
	Size		len = XLogRecGetDataLen(record);
	uint32		nfree = 0;
	bool		with_free = len > sizeof(uint64);

	if (len < sizeof(uint64))
		wal_format_mismatch("META_SEQ");
	memcpy(&seq, data, sizeof(seq));
	if (with_free)
	{
		if (len < sizeof(uint64) + sizeof(uint32))
			wal_format_mismatch("META_SEQ");
		memcpy(&nfree, data + sizeof(uint64), sizeof(uint32));
		if (nfree > FT_META_MAX_FREE_SEQ ||
			len != sizeof(uint64) + sizeof(uint32) + nfree * sizeof(FtSeqExtent))
			wal_format_mismatch("META_SEQ");
	}
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);

		ft_meta_set_seq(page, seq);
		if (with_free)
		{
			FtSeqExtent ranges[FT_META_MAX_FREE_SEQ];

			/* (unaligned in the record) */
			memcpy(ranges, data + sizeof(uint64) + sizeof(uint32),
				   nfree * sizeof(FtSeqExtent));
			ft_meta_set_free_seq(page, ranges, nfree);
		}
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/* a bit change in a table's visibility map (XLOG_FT_VM_SET/CLEAR) */
static void
ft_redo_vm(XLogReaderState *record, bool set)
{
	xl_ft_vm	xlrec;
	Buffer		buf;

	if (XLogRecGetDataLen(record) != sizeof(xl_ft_vm))
		wal_format_mismatch(set ? "VM_SET" : "VM_CLEAR");
	memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
	if (set && InHotStandby && TransactionIdIsValid(xlrec.cutoff_xid))
	{
		RelFileNode rnode;

		XLogRecGetBlockTag(record, 0, &rnode, NULL, NULL);
		ResolveRecoveryConflictWithSnapshot(xlrec.cutoff_xid, rnode);
	}
	if (XLogReadBufferForRedoExtended(record, 0, RBM_ZERO_ON_ERROR, false,
									  &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);

		if (PageIsNew(page))
			PageInit(page, BLCKSZ, 0);
		ft_vm_page_change(page, xlrec.heapblk, xlrec.flags, set);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
ft_redo_patches(XLogReaderState *record)
{
	Buffer		buf;

	if (XLogRecGetDataLen(record) != sizeof(uint16))
		wal_format_mismatch("PATCHES");
	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		char	   *payload = XLogRecGetBlockData(record, 0, &len);

		if (!ft_apply_patches(page, payload, len))
			wal_format_mismatch("PATCHES");
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

void
ft_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	switch (info)
	{
		case XLOG_FT_INSERT:
		case XLOG_FT_INSERT_MSG:
			ft_redo_insert(record);
			break;
		case XLOG_FT_APPEND:
			ft_redo_append(record);
			break;
		case XLOG_FT_FLUSH:
			ft_redo_flush(record);
			break;
		case XLOG_FT_IMAGES:
			ft_redo_images(record);
			break;
		case XLOG_FT_VACUUM:
			ft_redo_vacuum(record);
			break;
		case XLOG_FT_FRAME_DEAD:
			ft_redo_frame_dead(record);
			break;
		case XLOG_FT_PRUNE:
			ft_redo_prune(record);
			break;
		case XLOG_FT_REUSE:
			ft_redo_reuse(record);
			break;
		case XLOG_FT_MOVE:
			ft_redo_move(record);
			break;
		case XLOG_FT_PATCH:
			ft_redo_patch(record);
			break;
		case XLOG_FT_PATCHES:
			ft_redo_patches(record);
			break;
		case XLOG_FT_META_SEQ:
			ft_redo_meta_seq(record);
			break;
		case XLOG_FT_VM_SET:
			ft_redo_vm(record, true);
			break;
		case XLOG_FT_VM_CLEAR:
			ft_redo_vm(record, false);
			break;
		case XLOG_FT_LOGICAL:
			break;				/* for decoding only */
		default:
			elog(PANIC, "fractam redo: unknown record type %u", info);
	}
}

/*
 * Mask a page for wal_consistency_checking.  fractam sets no hint bits and
 * keeps no state outside the line pointers, items and special space, so
 * only the LSN, checksum and unused space need masking.
 */
void
ft_mask(char *pagedata, BlockNumber blkno)
{
	Page		page = (Page) pagedata;
	OffsetNumber off;
	OffsetNumber maxoff;

	mask_page_lsn_and_checksum(pagedata);
	mask_page_hint_bits(pagedata);
	mask_unused_space(pagedata);

	/*
	 * The alignment padding after items whose length is not MAXALIGNed (a
	 * table's row versions) is zeroed when an item is added, but pages
	 * written by earlier builds may hold old bytes there, as heap_mask
	 * allows for heap pages.
	 */
	if (PageGetPageSize(page) != BLCKSZ || PageIsNew(page) ||
		((PageHeader) page)->pd_lower < SizeOfPageHeaderData ||
		((PageHeader) page)->pd_lower > BLCKSZ ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(FtPageOpaqueData)) ||
		(FtPageGetOpaque(page)->ft_flags & FT_PAGE_META))
		return;
	maxoff = PageGetMaxOffsetNumber(page);
	for (off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		Size		len = ItemIdGetLength(iid);

		if (ItemIdIsNormal(iid) && MAXALIGN(len) != len &&
			ItemIdGetOffset(iid) + MAXALIGN(len) <= BLCKSZ)
			memset(pagedata + ItemIdGetOffset(iid) + len, MASK_MARKER,
				   MAXALIGN(len) - len);
	}
}

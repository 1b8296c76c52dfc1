/*-------------------------------------------------------------------------
 *
 * ft_vacuum.c
 *	  Bulk deletion of items, from leaves AND from buffered messages.
 *
 * VACUUM walks the buffer level left to right.  For each buffer node it
 * takes a cleanup lock and keeps it while it cleans the node's messages
 * and then each child leaf (also under a cleanup lock).  Holding the
 * buffer node exclusively for the whole subtree means no flush, direct
 * apply or leaf split can move an item between a page we cleaned and one
 * we have not: every item is seen exactly once, wherever it sits.  The
 * cleanup locks wait for scans that still pin the pages, so no scan can
 * return an entry whose TID VACUUM has freed for reuse.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "wal/ft_xlog.h"

static void
delete_offsets(FtTree *tree, Buffer buf, OffsetNumber *dead, int ndead)
{
	if (ndead == 0)
		return;
	START_CRIT_SECTION();
	PageIndexMultiDelete(BufferGetPage(buf), dead, ndead);
	MarkBufferDirty(buf);
	ftxlog_vacuum(tree->rel, buf, dead, ndead);
	END_CRIT_SECTION();
}

/* clean one leaf, which the caller has cleanup-locked */
static void
vacuum_leaf(FtTree *tree, Buffer buf, FtVacuumCallback callback, void *arg,
			FtVacuumResult *result)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	OffsetNumber dead[MaxOffsetNumber];
	int			ndead = 0;

	for (off = FtFirstDataOffset(opaque); off <= maxoff; off++)
	{
		Size		len;
		char	   *item = ft_page_item(page, off, &len);

		if (callback(item, len, arg))
			dead[ndead++] = off;
		else
			result->num_items += 1;
	}
	delete_offsets(tree, buf, dead, ndead);
	result->items_removed += ndead;
}

/* clean the messages of one buffer node, which the caller has cleanup-locked */
static void
vacuum_messages(FtTree *tree, Buffer buf, FtVacuumCallback callback,
				void *arg, FtVacuumResult *result)
{
	Page		page = BufferGetPage(buf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	OffsetNumber dead[MaxOffsetNumber];
	int			ndead = 0;

	for (off = FtFirstMsgOffset(opaque); off <= maxoff; off++)
	{
		char	   *key;
		Size		keylen;
		FtMsgHeader *hdr = ft_msg(page, off, &key, &keylen);

		/*
		 * A buffered INSERT of a dead entry goes away.  DELETE messages
		 * carry no TID that could be reused and are left to the flush.
		 */
		if (hdr->type == FT_MSG_INSERT && callback(key, keylen, arg))
			dead[ndead++] = off;
		else if (hdr->type == FT_MSG_INSERT)
			result->num_items += 1;
	}
	delete_offsets(tree, buf, dead, ndead);
	result->items_removed += ndead;
}

/*
 * Clean the leaves from blkno rightwards up to the one whose high key is
 * bound (NULL: to the end).  Returns the block after the last one cleaned.
 */
static BlockNumber
vacuum_leaf_run(FtTree *tree, BlockNumber blkno, const char *bound,
				Size boundlen, FtVacuumCallback callback, void *arg,
				FtVacuumResult *result)
{
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf = ReadBuffer(tree->rel, blkno);
		Page		page;
		FtPageOpaque opaque;
		bool		last;

		CHECK_FOR_INTERRUPTS();
		LockBufferForCleanup(buf);
		ft_checkpage(tree->rel, buf);
		page = BufferGetPage(buf);
		opaque = FtPageGetOpaque(page);
		if (!FtPageIsLeaf(opaque))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has a non-leaf page at block %u in its leaf chain",
							RelationGetRelationName(tree->rel), blkno)));
		vacuum_leaf(tree, buf, callback, arg, result);
		if (FtPageIsRightmost(opaque))
			last = true;
		else if (bound == NULL)
			last = false;
		else
		{
			Size		hlen;
			char	   *hikey = ft_page_item(page, FT_HIKEY, &hlen);

			last = ft_cmp(tree, hikey, hlen, bound, boundlen) >= 0;
		}
		blkno = opaque->ft_right;
		UnlockReleaseBuffer(buf);
		if (last)
			break;
	}
	return blkno;
}

/*
 * VACUUM holds at most one page lock at a time, and waits for a cleanup
 * lock holding nothing else.  For each buffer node, left to right, it
 * first cleans the node's messages, then the leaves of the node's key
 * range by following the leaf chain (so leaves split off meanwhile are
 * seen too).  Nothing it has not seen can move into a page it has cleaned:
 * a flush only moves messages the node held when it was cleaned (already
 * clean) or later ones, and entries inserted during VACUUM never carry a
 * TID VACUUM is removing (the table keeps those TIDs reserved until index
 * cleanup is done).
 */
void
ft_vacuum(FtTree *tree, FtVacuumCallback callback, void *arg,
		  FtVacuumResult *result)
{
	FtDescent	d;
	BlockNumber bblk;
	BlockNumber leafblk;

	memset(result, 0, sizeof(FtVacuumResult));

	/* leftmost buffer node, or the root leaf */
	ft_descend(tree, "", 0, false, 1, BUFFER_LOCK_SHARE, &d);
	if (d.level == 0)
	{
		leafblk = BufferGetBlockNumber(d.buf);
		UnlockReleaseBuffer(d.buf);
		vacuum_leaf_run(tree, leafblk, NULL, 0, callback, arg, result);
		result->num_pages = RelationGetNumberOfBlocks(tree->rel);
		return;
	}
	bblk = BufferGetBlockNumber(d.buf);
	leafblk = ft_child_block(BufferGetPage(d.buf), 0);
	UnlockReleaseBuffer(d.buf);

	while (bblk != InvalidBlockNumber)
	{
		Buffer		bbuf = ReadBuffer(tree->rel, bblk);
		Page		bpage;
		FtPageOpaque bopaque;
		char	   *bound = NULL;
		Size		boundlen = 0;

		CHECK_FOR_INTERRUPTS();
		LockBufferForCleanup(bbuf);
		ft_checkpage(tree->rel, bbuf);
		bpage = BufferGetPage(bbuf);
		bopaque = FtPageGetOpaque(bpage);
		if (!FtPageIsBuffer(bopaque))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has a non-buffer page at block %u on the buffer level",
							RelationGetRelationName(tree->rel), bblk)));
		vacuum_messages(tree, bbuf, callback, arg, result);
		if (!FtPageIsRightmost(bopaque))
		{
			char	   *hikey = ft_page_item(bpage, FT_HIKEY, &boundlen);

			bound = palloc(boundlen);
			memcpy(bound, hikey, boundlen);
		}
		bblk = bopaque->ft_right;
		UnlockReleaseBuffer(bbuf);

		leafblk = vacuum_leaf_run(tree, leafblk, bound, boundlen,
								  callback, arg, result);
		if (bound)
			pfree(bound);
	}
	result->num_pages = RelationGetNumberOfBlocks(tree->rel);
}

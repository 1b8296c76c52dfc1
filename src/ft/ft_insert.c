/*-------------------------------------------------------------------------
 *
 * ft_insert.c
 *	  The write path: right-edge fast path, adaptive direct apply, and
 *	  buffering of messages in buffer nodes.
 *
 * An insert descends with share locks to the buffer node B above the
 * target leaf L.  If B holds no messages for L and applying to L costs no
 * I/O (L is in shared buffers, or L is the rightmost leaf), the item goes
 * straight into L while B stays share-locked: B's share lock keeps every
 * other writer from adding a message for L meanwhile, so "no pending
 * message above L" stays true until we are done.  Otherwise the item
 * becomes an INSERT message in B (exclusive lock), with the next MSN of B.
 * When B is full, its heaviest child is flushed first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "wal/ft_xlog.h"

void
ft_check_item_size(FtTree *tree, Size len)
{
	if (len > FT_MAX_ITEM_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index row size %zu exceeds fractam maximum %zu for index \"%s\"",
						len, (Size) FT_MAX_ITEM_SIZE,
						RelationGetRelationName(tree->rel)),
				 errhint("Values larger than 1/3 of a buffer page cannot be indexed.")));
}

/* free space below which a buffer node prefetches its next flush target */
#define FT_PREFETCH_FREE	(BLCKSZ / 4)

typedef enum LeafInsertResult
{
	LEAF_INSERTED,
	LEAF_FULL					/* no room, or an equal key to replace */
} LeafInsertResult;

/*
 * Add item to a leaf we hold exclusively, if it fits.
 */
static LeafInsertResult
leaf_insert(FtTree *tree, Buffer lbuf, const char *item, Size len)
{
	Page		page = BufferGetPage(lbuf);
	bool		found;
	OffsetNumber off;

	off = ft_leaf_lower_bound(tree, page, item, len, &found);
	if (found)
	{
		Size		olen;
		char	   *old = ft_page_item(page, off, &olen);

		/* an identical item is already there: nothing to do */
		if (olen == len && memcmp(old, item, len) == 0)
			return LEAF_INSERTED;
		return LEAF_FULL;		/* replacement goes through a rewrite */
	}
	if (PageGetExactFreeSpace(page) < ft_item_space(len))
		return LEAF_FULL;

	START_CRIT_SECTION();
	ft_page_add_item(page, item, len, off);
	MarkBufferDirty(lbuf);
	ftxlog_insert(tree->rel, lbuf, off, item, len, false, 0);
	END_CRIT_SECTION();
	return LEAF_INSERTED;
}

/*
 * Right-edge fast path (ascending keys): append to the cached rightmost
 * leaf without descending.  The rightmost leaf never has buffered messages
 * (inserts for it are always applied directly), so applying there without
 * looking at its buffer node is safe.
 */
static bool
try_fastpath(FtTree *tree, const char *item, Size len)
{
	BlockNumber blkno = RelationGetTargetBlock(tree->rel);
	Buffer		buf;
	Page		page;
	FtPageOpaque opaque;
	bool		ok = false;

	if (blkno == InvalidBlockNumber)
		return false;
	buf = ReadBuffer(tree->rel, blkno);
	if (!ConditionalLockBuffer(buf))
	{
		ReleaseBuffer(buf);
		return false;
	}
	ft_checkpage(tree->rel, buf);
	page = BufferGetPage(buf);
	opaque = FtPageGetOpaque(page);
	if (FtPageIsLeaf(opaque) && !FtPageIsDeleted(opaque) &&
		FtPageIsRightmost(opaque) &&
		PageGetMaxOffsetNumber(page) >= FirstOffsetNumber &&
		PageGetExactFreeSpace(page) >= ft_item_space(len))
	{
		Size		llen;
		char	   *last = ft_page_item(page, PageGetMaxOffsetNumber(page), &llen);

		if (ft_cmp(tree, item, len, last, llen) > 0)
			ok = (leaf_insert(tree, buf, item, len) == LEAF_INSERTED);
	}
	UnlockReleaseBuffer(buf);
	if (!ok)
		RelationSetTargetBlock(tree->rel, InvalidBlockNumber);
	return ok;
}

/*
 * Add an INSERT message to buffer node bbuf (held exclusively).
 */
static bool
buffer_insert(FtTree *tree, Buffer bbuf, const char *item, Size len,
			  OffsetNumber off)
{
	Page		page = BufferGetPage(bbuf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	Size		msglen = FT_MSG_HDRSZ + len;
	PGAlignedBlock msgbuf;
	FtMsgHeader *hdr = (FtMsgHeader *) msgbuf.data;
	uint64		msn;
	Size		freebefore;

	if (PageGetExactFreeSpace(page) < ft_item_space(msglen))
		return false;

	memset(hdr, 0, FT_MSG_HDRSZ);
	memcpy(msgbuf.data + FT_MSG_HDRSZ, item, len);
	/* off (from examine_target) is after all equal keys: (key, MSN) order */
	Assert(off == ft_msg_bound(tree, page, item, len, true));
	msn = opaque->ft_msn + 1;
	if (msn > FT_MSG_MAX_MSN)
		elog(ERROR, "fractam: message sequence of index \"%s\" is exhausted",
			 RelationGetRelationName(tree->rel));
	FtMsgSet(hdr, msn, FT_MSG_INSERT);

	freebefore = PageGetExactFreeSpace(page);

	START_CRIT_SECTION();
	ft_page_add_item(page, msgbuf.data, msglen, off);
	opaque->ft_msn = msn;
	MarkBufferDirty(bbuf);
	ftxlog_insert(tree->rel, bbuf, off, msgbuf.data, msglen, true, msn);
	END_CRIT_SECTION();

	/*
	 * When the node passes three quarters full, start reading the leaf the
	 * next flush will most likely go to, so that its I/O overlaps with the
	 * inserts that fill the rest of the node.
	 */
	if (freebefore >= FT_PREFETCH_FREE && PageGetExactFreeSpace(page) < FT_PREFETCH_FREE)
		(void) PrefetchBuffer(tree->rel, MAIN_FORKNUM,
							  ft_child_block(page, ft_heaviest_child(tree, page)));
	return true;
}

/* Where an item goes under a buffer node, and whether to apply it directly */
typedef struct InsertTarget
{
	int			childidx;
	BlockNumber child;
	bool		rightmost_child;	/* the rightmost leaf of the tree */
	bool		direct;			/* slice empty and applying costs no I/O */
	OffsetNumber msgpos;		/* where a message for the item would go */
} InsertTarget;

static void
examine_target(FtTree *tree, Page bpage, const char *item, Size len,
			   InsertTarget *t)
{
	FtPageOpaque bopaque = FtPageGetOpaque(bpage);
	OffsetNumber firstmsg = FtFirstMsgOffset(bopaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(bpage);
	OffsetNumber pos;
	bool		empty = true;
	char	   *key;
	Size		keylen;

	t->childidx = ft_child_index(tree, bpage, item, len, false);
	t->child = ft_child_block(bpage, t->childidx);
	t->rightmost_child = FtPageIsRightmost(bopaque) &&
		t->childidx == bopaque->ft_nchildren - 1;

	/*
	 * Where a message for item would go, after any equal keys.  The child's
	 * slice is empty exactly when the messages on either side of that
	 * position belong to other children: item lies inside the child's
	 * range, and messages are sorted.
	 */
	pos = ft_msg_bound(tree, bpage, item, len, true);
	t->msgpos = pos;
	if (pos > firstmsg)
	{
		ft_msg(bpage, pos - 1, &key, &keylen);
		if (t->childidx == 0)
			empty = false;
		else
		{
			char	   *pkey;
			Size		pkeylen;

			ft_pivot(bpage, FtFirstDataOffset(bopaque) + t->childidx, &pkey, &pkeylen);
			if (ft_cmp(tree, key, keylen, pkey, pkeylen) >= 0)
				empty = false;
		}
	}
	if (empty && pos <= maxoff && t->childidx < bopaque->ft_nchildren - 1)
	{
		char	   *pkey;
		Size		pkeylen;

		ft_msg(bpage, pos, &key, &keylen);
		ft_pivot(bpage, FtFirstDataOffset(bopaque) + t->childidx + 1, &pkey, &pkeylen);
		if (ft_cmp(tree, key, keylen, pkey, pkeylen) < 0)
			empty = false;
	}
	else if (empty && pos <= maxoff)
		empty = false;			/* last child: anything after item is its own */
	t->direct = empty &&
		(!tree->buffering || t->rightmost_child ||
		 (tree->direct_apply && ft_leaf_resident(tree, t->child)));
}

/*
 * Insert into a leaf that is the root (tree of height 1).
 */
static bool
insert_into_root_leaf(FtTree *tree, const char *item, Size len)
{
	FtDescent	d;
	LeafInsertResult res;

	ft_descend(tree, item, len, false, 0, BUFFER_LOCK_EXCLUSIVE, &d);
	if (BufferIsValid(d.parent))
	{
		/* the tree grew meanwhile: start over */
		UnlockReleaseBuffer(d.buf);
		ReleaseBuffer(d.parent);
		return false;
	}
	res = leaf_insert(tree, d.buf, item, len);
	UnlockReleaseBuffer(d.buf);
	if (res == LEAF_FULL)
		ft_make_room(tree, item, len, true);
	return res == LEAF_INSERTED;
}

/*
 * Under an exclusively locked buffer node: put item into child childidx
 * (whose slice must be empty) through a rewrite of the leaf, splitting
 * it if needed.  Returns false if the buffer node first needs to split.
 */
static bool
apply_with_rewrite(FtTree *tree, Buffer bbuf, int childidx,
				   const char *item, Size len)
{
	Page		bpage = BufferGetPage(bbuf);
	Buffer		lbuf = ft_getbuf(tree, ft_child_block(bpage, childidx),
								 BUFFER_LOCK_EXCLUSIVE);

	if (leaf_insert(tree, lbuf, item, len) == LEAF_INSERTED)
	{
		UnlockReleaseBuffer(lbuf);
		return true;
	}
	return ft_flush_child(tree, bbuf, childidx, lbuf, item, len) == FT_FLUSH_DONE;
}

static void
note_buffered(FtTree *tree, bool buffered)
{
	if (tree->rootcache)
		tree->rootcache->last_buffered = buffered;
}

void
ft_insert(FtTree *tree, const char *item, Size len)
{
	ft_check_item_size(tree, len);

	if (try_fastpath(tree, item, len))
		return;

	for (;;)
	{
		FtDescent	d;
		Page		bpage;
		InsertTarget t;
		bool		exclusive;

		CHECK_FOR_INTERRUPTS();

		/*
		 * Inserts into an index much larger than memory are mostly
		 * buffered, which needs the buffer node exclusively; when the last
		 * insert was buffered, lock it exclusively right away instead of
		 * descending twice.
		 */
		exclusive = tree->rootcache && tree->rootcache->last_buffered;
		ft_descend(tree, item, len, false, 1,
				   exclusive ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE, &d);
		if (d.level == 0)
		{
			UnlockReleaseBuffer(d.buf);
			if (insert_into_root_leaf(tree, item, len))
				return;
			continue;
		}
		bpage = BufferGetPage(d.buf);
		examine_target(tree, bpage, item, len, &t);

		if (!exclusive)
		{
			if (t.direct)
			{
				/* adaptive direct apply, B share-locked */
				Buffer		lbuf = ft_getbuf(tree, t.child, BUFFER_LOCK_EXCLUSIVE);

				if (leaf_insert(tree, lbuf, item, len) == LEAF_INSERTED)
				{
					if (t.rightmost_child)
						RelationSetTargetBlock(tree->rel, t.child);
					UnlockReleaseBuffer(lbuf);
					UnlockReleaseBuffer(d.buf);
					note_buffered(tree, false);
					return;
				}
				UnlockReleaseBuffer(lbuf);
				/* the leaf must be rewritten or split: needs B exclusive */
			}
			else if (PageGetExactFreeSpace(bpage) < ft_item_space(FT_MSG_HDRSZ + len))
			{
				/*
				 * B is full and will need a flush: read the heaviest child
				 * into shared buffers now, while we hold no exclusive lock,
				 * so the flush does no I/O under B's exclusive lock
				 * (usually).  The pin is dropped at once: we must not wait
				 * for B's lock holding one.
				 */
				ReleaseBuffer(ReadBuffer(tree->rel,
										 ft_child_block(bpage,
														ft_heaviest_child(tree, bpage))));
			}
			UnlockReleaseBuffer(d.buf);

			/* exclusive pass over the buffer node */
			ft_descend(tree, item, len, false, 1, BUFFER_LOCK_EXCLUSIVE, &d);
			if (d.level == 0)
			{
				UnlockReleaseBuffer(d.buf);
				continue;
			}
			bpage = BufferGetPage(d.buf);
			examine_target(tree, bpage, item, len, &t);
		}

		/* B is locked exclusively */
		if (t.direct)
		{
			bool		done = apply_with_rewrite(tree, d.buf, t.childidx, item, len);

			UnlockReleaseBuffer(d.buf);
			if (done)
			{
				note_buffered(tree, false);
				return;
			}
			ft_make_room(tree, item, len, true);
			continue;
		}

		if (buffer_insert(tree, d.buf, item, len, t.msgpos))
		{
			UnlockReleaseBuffer(d.buf);
			note_buffered(tree, true);
			return;
		}

		/* B is full: flush its heaviest child, then retry */
		{
			int			heavy = ft_heaviest_child(tree, bpage);
			Buffer		lbuf = ft_getbuf(tree, ft_child_block(bpage, heavy),
										 BUFFER_LOCK_EXCLUSIVE);
			FtFlushResult res;

			res = ft_flush_child(tree, d.buf, heavy, lbuf, NULL, 0);
			/* the next flush of this node will go here: start reading it */
			if (res == FT_FLUSH_DONE)
				(void) PrefetchBuffer(tree->rel, MAIN_FORKNUM,
									  ft_child_block(bpage, ft_heaviest_child(tree, bpage)));
			UnlockReleaseBuffer(d.buf);
			if (res == FT_FLUSH_NEED_SPLIT)
				ft_make_room(tree, item, len, true);
		}
	}
}

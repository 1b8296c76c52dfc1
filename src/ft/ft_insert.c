/*-------------------------------------------------------------------------
 *
 * ft_insert.c
 *	  The write path: right-edge fast path, adaptive direct apply, and
 *	  buffering of messages in buffer nodes.
 *
 * In a two-level tree (root buffer node B above the leaves), an insert
 * descends with share locks to B.  If B holds no messages for the target
 * leaf L and applying to L costs no I/O (L is in shared buffers, or L is
 * the rightmost leaf), the item goes
 * straight into L while B stays share-locked: B's share lock keeps every
 * other writer from adding a message for L meanwhile, so "no pending
 * message above L" stays true until we are done.  Otherwise the item
 * becomes an INSERT message in B (exclusive lock), with the next MSN of B.
 * When B is full, its heaviest child is flushed first.
 *
 * Taller trees have a second buffer level: new messages enter the level-2
 * node T and move down to level 1 in batches (see insert_two_level).
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
 * Read-ahead a level-2 node asks for once it is unlocked: the leaves its
 * next move will flush (ft_prefetch_move_leaves), or target Invalid.
 */
typedef struct MoveReadAhead
{
	BlockNumber target;			/* the level-1 node the move goes to */
	Size		need;			/* bytes the move brings */
} MoveReadAhead;

static void
move_read_ahead(FtTree *tree, const MoveReadAhead *ra)
{
	if (ra->target != InvalidBlockNumber)
		ft_prefetch_move_leaves(tree, ra->target, ra->need);
}

/*
 * Add an INSERT message to buffer node bbuf (held exclusively).  ra is set
 * to the read-ahead the caller should start after unlocking bbuf.
 */
static bool
buffer_insert(FtTree *tree, Buffer bbuf, const char *item, Size len,
			  OffsetNumber off, MoveReadAhead *ra)
{
	Page		page = BufferGetPage(bbuf);
	FtPageOpaque opaque = FtPageGetOpaque(page);
	Size		msglen = FT_MSG_HDRSZ + len;
	PGAlignedBlock msgbuf;
	FtMsgHeader *hdr = (FtMsgHeader *) msgbuf.data;
	uint64		msn;
	Size		freebefore;

	ra->target = InvalidBlockNumber;

	/*
	 * A level-2 node keeps room for one more pivot, for when a child splits
	 * (see make_pivot_room).
	 */
	if (PageGetExactFreeSpace(page) < ft_item_space(msglen) +
		(opaque->ft_level >= 2 ? FT_PIVOT_ROOM(tree) : 0))
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
	 * Start reading what the next flush or move out of this node will need,
	 * so that its I/O overlaps with the inserts that fill the rest of the
	 * node.  A level-1 node (the root of a two-level tree, which receives
	 * every insert) does so when it passes three quarters full: its flush
	 * needs the heaviest child's leaf.  A level-2 node receives a small
	 * share of the inserts, in a large index a few per second, so anything
	 * read that early would be evicted again before its move needs it: it
	 * waits until it has room for only a few more messages, then prefetches
	 * its heaviest child X, and one message later has the caller read X
	 * (once this node is unlocked: nobody should wait for this node while we
	 * wait for X) and prefetch the leaves X will flush to make room.
	 */
	if (opaque->ft_level == 1)
	{
		if (freebefore >= FT_PREFETCH_FREE &&
			PageGetExactFreeSpace(page) < FT_PREFETCH_FREE)
			(void) PrefetchBuffer(tree->rel, MAIN_FORKNUM,
								  ft_child_block(page, ft_heaviest_child(tree, page)));
	}
	else
	{
		Size		space = ft_item_space(msglen);
		Size		reserve = FT_PIVOT_ROOM(tree);
		Size		availbefore = freebefore - reserve;
		Size		availafter = PageGetExactFreeSpace(page) - reserve;

		if (availbefore >= FT_PREFETCH_MOVE_MSGS * space &&
			availafter < FT_PREFETCH_MOVE_MSGS * space)
			(void) PrefetchBuffer(tree->rel, MAIN_FORKNUM,
								  ft_child_block(page, ft_heaviest_child(tree, page)));
		else if (availbefore >= FT_PREFETCH_LEAVES_MSGS * space &&
				 availafter < FT_PREFETCH_LEAVES_MSGS * space)
			ra->target = ft_child_block(page,
										ft_heaviest_slice(tree, page, &ra->need));
	}
	return true;
}

/* Where an item goes under a buffer node, and whether to apply it directly */
typedef struct InsertTarget
{
	int			childidx;
	BlockNumber child;
	bool		rightmost_child;	/* the rightmost page of the level below */
	bool		slice_empty;	/* no message for the child's range here */
	bool		direct;			/* level 1: slice empty and applying costs
								 * no I/O */
	OffsetNumber msgpos;		/* where a message for the item would go */
} InsertTarget;

/*
 * Does buffer node page hold a message in [low, high) (NULL: open ends),
 * given that pos is where a key inside that range would go?  Messages are
 * sorted, so only the neighbours of pos need a look.
 */
static bool
range_has_messages(FtTree *tree, Page page, OffsetNumber pos,
				   const char *low, Size lowlen,
				   const char *high, Size highlen)
{
	OffsetNumber firstmsg = FtFirstMsgOffset(FtPageGetOpaque(page));
	char	   *key;
	Size		keylen;

	if (pos > firstmsg)
	{
		ft_msg(page, pos - 1, &key, &keylen);
		if (low == NULL || ft_cmp(tree, key, keylen, low, lowlen) >= 0)
			return true;
	}
	if (pos <= PageGetMaxOffsetNumber(page))
	{
		ft_msg(page, pos, &key, &keylen);
		if (high == NULL || ft_cmp(tree, key, keylen, high, highlen) < 0)
			return true;
	}
	return false;
}

/* the key of pivot i of an internal page, or NULL for i out of range */
static char *
pivot_key(Page page, int i, Size *len)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	char	   *key;

	if (i <= 0 || i >= opaque->ft_nchildren)
	{
		*len = 0;
		return NULL;
	}
	ft_pivot(page, FtFirstDataOffset(opaque) + i, &key, len);
	return key;
}

static void
examine_target(FtTree *tree, Page bpage, const char *item, Size len,
			   InsertTarget *t)
{
	FtPageOpaque bopaque = FtPageGetOpaque(bpage);
	char	   *low;
	Size		lowlen;
	char	   *high;
	Size		highlen;

	t->childidx = ft_child_index(tree, bpage, item, len, false);
	t->child = ft_child_block(bpage, t->childidx);
	t->rightmost_child = FtPageIsRightmost(bopaque) &&
		t->childidx == bopaque->ft_nchildren - 1;

	/*
	 * Where a message for item would go, after any equal keys; the child's
	 * slice is empty exactly when the messages on either side of that
	 * position belong to other children.
	 */
	t->msgpos = ft_msg_bound(tree, bpage, item, len, true);
	low = pivot_key(bpage, t->childidx, &lowlen);
	high = pivot_key(bpage, t->childidx + 1, &highlen);
	t->slice_empty = !range_has_messages(tree, bpage, t->msgpos,
										 low, lowlen, high, highlen);
	t->direct = bopaque->ft_level == 1 && t->slice_empty &&
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
		ft_make_room(tree, item, len, 1);
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

typedef enum InsertStep
{
	INSERT_DONE,
	INSERT_RETRY,				/* start over */
	INSERT_RETRY_EXCLUSIVE		/* start over, locking exclusively */
} InsertStep;

/*
 * Insert under a level-2 buffer node T (d->buf, locked share or
 * exclusive; released here).
 *
 * The item is applied directly to its leaf L when no message for L's key
 * range is buffered in T or in the level-1 node X between them and L
 * costs no I/O: T and X stay locked meanwhile (at least share), which
 * keeps any message for L from arriving (only T receives new messages,
 * and moving them down needs T exclusively).  Otherwise it becomes a
 * message in T.  X is only read when T holds no message for X's range at
 * all (or X is the rightmost node, whose rightmost leaf never has
 * messages): in an index much larger than memory, buffered inserts then
 * touch T alone, and X only once per move of many messages.
 */
static InsertStep
insert_two_level(FtTree *tree, const char *item, Size len, FtDescent *d,
				 bool exclusive)
{
	Buffer		tbuf = d->buf;
	Page		tpage = BufferGetPage(tbuf);
	InsertTarget t;
	MoveReadAhead ra;

	examine_target(tree, tpage, item, len, &t);
	if (t.slice_empty || t.rightmost_child || !tree->buffering)
	{
		Buffer		xbuf = ft_getbuf(tree, t.child,
									 exclusive ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE);
		Page		xpage = BufferGetPage(xbuf);
		InsertTarget lt;
		bool		direct;

		if (FtPageGetOpaque(xpage)->ft_level != 1)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has a downlink to block %u at level 1, but the page is at level %u",
							RelationGetRelationName(tree->rel), t.child,
							FtPageGetOpaque(xpage)->ft_level)));
		examine_target(tree, xpage, item, len, &lt);
		direct = lt.direct;
		if (direct && !t.slice_empty)
		{
			/* T holds messages for X: are any for L's range? */
			char	   *low;
			Size		lowlen;
			char	   *high;
			Size		highlen;

			low = pivot_key(xpage, lt.childidx, &lowlen);
			if (low == NULL)
				low = pivot_key(tpage, t.childidx, &lowlen);
			high = pivot_key(xpage, lt.childidx + 1, &highlen);
			if (high == NULL)
				high = pivot_key(tpage, t.childidx + 1, &highlen);
			direct = !range_has_messages(tree, tpage, t.msgpos,
										 low, lowlen, high, highlen);
		}
		if (direct && !exclusive)
		{
			Buffer		lbuf = ft_getbuf(tree, lt.child, BUFFER_LOCK_EXCLUSIVE);
			bool		done = (leaf_insert(tree, lbuf, item, len) == LEAF_INSERTED);

			if (done && lt.rightmost_child)
				RelationSetTargetBlock(tree->rel, lt.child);
			UnlockReleaseBuffer(lbuf);
			UnlockReleaseBuffer(xbuf);
			UnlockReleaseBuffer(tbuf);
			if (done)
			{
				note_buffered(tree, false);
				return INSERT_DONE;
			}
			/* the leaf must be rewritten or split: needs X exclusive */
			return INSERT_RETRY_EXCLUSIVE;
		}
		if (direct)
		{
			bool		done = apply_with_rewrite(tree, xbuf, lt.childidx, item, len);

			UnlockReleaseBuffer(xbuf);
			UnlockReleaseBuffer(tbuf);
			if (done)
			{
				note_buffered(tree, false);
				return INSERT_DONE;
			}
			ft_make_room(tree, item, len, 1);
			return INSERT_RETRY;
		}
		UnlockReleaseBuffer(xbuf);
	}

	if (!exclusive)
	{
		/* as in the one-level case: read the next move's target early */
		if (PageGetExactFreeSpace(tpage) < ft_item_space(FT_MSG_HDRSZ + len))
			ReleaseBuffer(ReadBuffer(tree->rel,
									 ft_child_block(tpage, ft_heaviest_child(tree, tpage))));
		UnlockReleaseBuffer(tbuf);
		return INSERT_RETRY_EXCLUSIVE;
	}

	if (buffer_insert(tree, tbuf, item, len, t.msgpos, &ra))
	{
		UnlockReleaseBuffer(tbuf);
		note_buffered(tree, true);
		move_read_ahead(tree, &ra);
		return INSERT_DONE;
	}

	/*
	 * T is full.  Without any messages (its pivots and the pivot room take
	 * the page: very long keys) only a split of T helps.
	 */
	if (PageGetMaxOffsetNumber(tpage) < FtFirstMsgOffset(FtPageGetOpaque(tpage)))
	{
		UnlockReleaseBuffer(tbuf);
		ft_make_room(tree, item, len, 2);
		return INSERT_RETRY_EXCLUSIVE;
	}

	/* move its heaviest child's messages down, then retry */
	{
		char	   *splitkey = NULL;
		Size		splitkeylen = 0;
		FtFlushResult res;

		res = ft_flush_to_node(tree, tbuf, ft_heaviest_child(tree, tpage),
							   &splitkey, &splitkeylen);
		UnlockReleaseBuffer(tbuf);
		if (res == FT_FLUSH_NEED_SPLIT)
		{
			ft_make_room(tree, splitkey, splitkeylen, 1);
			pfree(splitkey);
		}
	}
	return INSERT_RETRY_EXCLUSIVE;
}

void
ft_insert(FtTree *tree, const char *item, Size len)
{
	bool		want_exclusive = false;

	ft_check_item_size(tree, len);

	if (try_fastpath(tree, item, len))
		return;

	for (;;)
	{
		FtDescent	d;
		Page		bpage;
		InsertTarget t;
		MoveReadAhead ra;
		bool		exclusive;

		CHECK_FOR_INTERRUPTS();

		/*
		 * Inserts into an index much larger than memory are mostly
		 * buffered, which needs the buffer node exclusively; when the last
		 * insert was buffered, lock it exclusively right away instead of
		 * descending twice.
		 */
		exclusive = want_exclusive ||
			(tree->rootcache && tree->rootcache->last_buffered);
		ft_descend(tree, item, len, false, FT_TOP_BUFFER_LEVEL,
				   exclusive ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE, &d);
		if (d.level == 0)
		{
			UnlockReleaseBuffer(d.buf);
			if (insert_into_root_leaf(tree, item, len))
				return;
			continue;
		}
		if (d.level == 2)
		{
			InsertStep	step = insert_two_level(tree, item, len, &d, exclusive);

			if (step == INSERT_DONE)
				return;
			want_exclusive = (step == INSERT_RETRY_EXCLUSIVE);
			continue;
		}

		/* a two-level tree: the root is the only buffer node */
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
			want_exclusive = true;
			continue;
		}

		/* B is locked exclusively */
		want_exclusive = false;
		if (t.direct)
		{
			bool		done = apply_with_rewrite(tree, d.buf, t.childidx, item, len);

			UnlockReleaseBuffer(d.buf);
			if (done)
			{
				note_buffered(tree, false);
				return;
			}
			ft_make_room(tree, item, len, 1);
			continue;
		}

		if (buffer_insert(tree, d.buf, item, len, t.msgpos, &ra))
		{
			/* only level-2 nodes ask for read-ahead after unlocking */
			Assert(ra.target == InvalidBlockNumber);
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
				ft_make_room(tree, item, len, 1);
			want_exclusive = true;
		}
	}
}

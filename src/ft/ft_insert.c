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

Size
ft_max_item_size(void)
{
	return FT_MAX_ITEM_SIZE;
}

/*
 * A tree whose items are all in leaves (no buffering) and whose high keys
 * and pivots are short key prefixes needs only that one item and a high
 * key fit on a leaf: a split can always put the item on a page of its own.
 */
Size
ft_tree_max_item_size(FtTree *tree)
{
	if (tree->keyprefix > 0 && !tree->buffering)
		return MAXALIGN_DOWN(FT_LEAF_CAPACITY - sizeof(ItemIdData) -
							 ft_item_space(tree->keyprefix));
	return FT_MAX_ITEM_SIZE;
}

void
ft_check_item_size(FtTree *tree, Size len)
{
	if (len > ft_tree_max_item_size(tree))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s row size %zu exceeds fractam maximum %zu for %s \"%s\"",
						ft_relkind_name(tree->rel),
						len, ft_tree_max_item_size(tree),
						ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel)),
				 ft_relation_is_index(tree->rel) ?
				 errhint("Values larger than 1/5 of a buffer page cannot be indexed by fractam; index a hash of the value, or use btree.") : 0));
}

typedef enum LeafInsertResult
{
	LEAF_INSERTED,
	LEAF_FULL,					/* no room, or an equal key to replace */
	LEAF_KEY_MAY_EXIST,			/* unique insert: an item with the same key
								 * may be stored where this leaf does not
								 * show; nothing done */
	LEAF_KEY_REJECTED			/* unique insert: the caller's check refused
								 * an item with the same key; nothing done */
} LeafInsertResult;

/*
 * A unique insert (ft_insert_unique) decides on a leaf it holds
 * exclusively whether the key is new, when nothing is buffered above the
 * leaf for the leaf's range (the direct-apply condition) and the leaf's
 * range covers every position an item with that key could take: items are
 * sorted by (key, rest), so such items form one run next to the insert
 * position, and the run can only continue into a neighbouring leaf if a
 * bound of this leaf has the same key.  The caller's check sees every item
 * of the run (if any) and may refuse the insert.  keycmp compares keys only
 * (see ft_insert_unique); low is the leaf's lower bound (lowlen 0: minus
 * infinity), known from the pivots on the way down.  NULL: a plain insert.
 */
typedef struct UniqueProbe
{
	FtCompareFn keycmp;
	FtUniqueCheckFn check;
	FtUniquePruneFn prune;		/* or NULL */
	void	   *checkarg;
	const char *low;
	Size		lowlen;
	bool		accepted;		/* check accepted the whole run once */
	bool		recheck;		/* started over after the check accepted:
								 * judge no run again (see leaf_check_key) */
	bool		rewrite;		/* ft_rewrite_leaf_of: rewrite the leaf even
								 * if the item is there as it is */
	bool		replace;		/* ft_replace: the item replaces the stored
								 * one with its key, if check accepts that
								 * one */
} UniqueProbe;

/*
 * Remove the items of the run the check called obsolete and the caller's
 * prune callback agrees may go, from leaf lbuf held exclusively; true if
 * any went.  This is how a unique index whose rows are updated over and
 * over (the table keeps no update chains behind one entry) keeps each key's
 * run short between VACUUMs, as nbtree's simple deletion does: every
 * insert with the key sees the run anyway, and removes what it found dead.
 */
static bool
prune_run(FtTree *tree, UniqueProbe *u, Buffer lbuf, Page page,
		  OffsetNumber *cand, int ncand)
{
	const char **items = palloc(ncand * sizeof(char *));
	Size	   *lens = palloc(ncand * sizeof(Size));
	bool	   *remove = palloc0(ncand * sizeof(bool));
	OffsetNumber *dead = palloc(ncand * sizeof(OffsetNumber));
	FullTransactionId horizon;
	int			ndead = 0;
	int			i;

	for (i = 0; i < ncand; i++)
		items[i] = ft_page_item(page, cand[i], &lens[i]);
	horizon = u->prune(u->checkarg, items, lens, ncand, remove);
	for (i = 0; i < ncand; i++)
		if (remove[i])
			dead[ndead++] = cand[i];
	if (ndead > 0)
	{
		/* standbys first cancel the queries that could still need them */
		if (FullTransactionIdIsValid(horizon))
			ft_log_removal_horizon(tree, horizon);
		ft_delete_offsets(tree, lbuf, dead, ndead);
	}
	pfree(items);
	pfree(lens);
	pfree(remove);
	pfree(dead);
	return ndead > 0;
}

/*
 * The unique check of item, which would go at off of leaf lbuf (found: an
 * equal item is there already): LEAF_INSERTED means "go ahead".  *pruned
 * says that obsolete items of the run were removed (off is stale then).
 */
static LeafInsertResult
leaf_check_key(FtTree *tree, UniqueProbe *u, Buffer lbuf, Page page,
			   OffsetNumber off, bool found, const char *item, Size len,
			   bool *pruned)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber lo = off;
	OffsetNumber hi = off;
	OffsetNumber o;
	char	   *other;
	Size		olen;
	OffsetNumber *obsolete = NULL;
	int			nobsolete = 0;

	*pruned = false;
	if (found)
		return LEAF_KEY_MAY_EXIST;

	/* the run of items with item's key: [lo, hi) */
	while (lo > first)
	{
		other = ft_page_item(page, lo - 1, &olen);
		if (u->keycmp(tree->cmp_arg, other, olen, item, len) != 0)
			break;
		lo--;
	}
	while (hi <= maxoff)
	{
		other = ft_page_item(page, hi, &olen);
		if (u->keycmp(tree->cmp_arg, other, olen, item, len) != 0)
			break;
		hi++;
	}

	/* does it go on in a neighbouring leaf? */
	if (lo == first && u->lowlen > 0 &&
		u->keycmp(tree->cmp_arg, u->low, u->lowlen, item, len) == 0)
		return LEAF_KEY_MAY_EXIST;
	if (hi > maxoff && !FtPageIsRightmost(opaque))
	{
		other = ft_page_item(page, FT_HIKEY, &olen);
		if (u->keycmp(tree->cmp_arg, other, olen, item, len) == 0)
			return LEAF_KEY_MAY_EXIST;
	}

	/*
	 * The run is all there is: let the caller judge each item.  A retry
	 * after the check accepted (the leaf was full) holds buffer nodes
	 * exclusively, so it does not judge again; another insert of the key may
	 * have come in while nothing was locked, so only an empty run is still
	 * decided here, and any other is left to the caller's search (which
	 * judges holding no page).
	 */
	if (lo < hi && u->check == NULL)
		return LEAF_KEY_MAY_EXIST;
	if (u->accepted)
		return LEAF_INSERTED;
	if (lo < hi && u->recheck)
		return LEAF_KEY_MAY_EXIST;
	for (o = lo; o < hi; o++)
	{
		FtUniqueVerdict v;

		other = ft_page_item(page, o, &olen);
		v = u->check(u->checkarg, other, olen);
		if (v == FT_UNIQUE_REFUSE)
		{
			if (obsolete)
				pfree(obsolete);
			return LEAF_KEY_REJECTED;
		}
		if (v == FT_UNIQUE_ACCEPT_OBSOLETE && u->prune)
		{
			if (obsolete == NULL)
				obsolete = palloc((hi - lo) * sizeof(OffsetNumber));
			obsolete[nobsolete++] = o;
		}
	}
	u->accepted = true;
	if (nobsolete > 0)
	{
		*pruned = prune_run(tree, u, lbuf, page, obsolete, nobsolete);
		pfree(obsolete);
	}
	return LEAF_INSERTED;
}

/*
 * Add item to a leaf we hold exclusively, if it fits (and, for a unique
 * insert, if the leaf shows every item with its key and the check accepts
 * them).
 */
static LeafInsertResult
leaf_insert(FtTree *tree, Buffer lbuf, const char *item, Size len,
			UniqueProbe *u)
{
	Page		page = BufferGetPage(lbuf);
	Page		view;
	bool		found;
	OffsetNumber off;

	if (tree->leaf_insert_hook)
		tree->leaf_insert_hook(tree, item, len);

	/*
	 * A compressed leaf is searched and checked in its decoded copy, and
	 * takes no item in place: the caller rewrites it with the item
	 * (ft_flush_child).
	 */
	view = ft_leaf_view(tree, lbuf);
	off = ft_leaf_insert_position(tree, view, item, len, &found);
	if (u && u->replace)
	{
		Size		olen;
		char	   *old;

		/* check and replacement under this one exclusive lock */
		if (!found)
			return LEAF_KEY_REJECTED;
		old = ft_page_item(view, off, &olen);
		if (u->check(u->checkarg, old, olen) != FT_UNIQUE_ACCEPT)
			return LEAF_KEY_REJECTED;
	}
	else if (u)
	{
		bool		pruned;
		LeafInsertResult check = leaf_check_key(tree, u, lbuf, view, off,
												found, item, len, &pruned);

		if (check != LEAF_INSERTED)
			return check;
		if (pruned)
		{
			view = ft_leaf_view(tree, lbuf);
			off = ft_leaf_lower_bound(tree, view, item, len, &found);
		}
	}
	if (found)
	{
		Size		olen;
		char	   *old = ft_page_item(view, off, &olen);

		/* an identical item is already there: nothing to do */
		if (olen == len && memcmp(old, item, len) == 0 &&
			!(u && u->rewrite && view != page))
			return LEAF_INSERTED;
		return LEAF_FULL;		/* replacement goes through a rewrite */
	}
	if (view != page)
		return LEAF_FULL;
	if (PageGetExactFreeSpace(page) < ft_item_space(len))
	{
		/* the leaf's owner may give up items it no longer needs */
		if (!ft_prune_leaf(tree, lbuf, ft_item_space(len)))
			return LEAF_FULL;
		off = ft_leaf_lower_bound(tree, page, item, len, &found);
		if (found || PageGetExactFreeSpace(page) < ft_item_space(len))
			return LEAF_FULL;
	}

	START_CRIT_SECTION();
	ft_page_add_item(page, item, len, off);
	MarkBufferDirty(lbuf);
	ftxlog_insert(tree->rel, lbuf, off, item, len, false);
	END_CRIT_SECTION();
	return LEAF_INSERTED;
}

/*
 * The leaf this backend last inserted into directly (its target block,
 * RelationSetTargetBlock, as nbtree does), pinned and locked exclusively,
 * if it still takes items that sort after its last item without a
 * descent: a live uncompressed leaf with at least one item that is either
 * the rightmost leaf, or any leaf of an unbuffered tree.  The rightmost
 * leaf never has buffered messages (inserts for it are always applied
 * directly), and an unbuffered tree has none anywhere, so applying there
 * without looking at the buffer node above is safe.  *last is the leaf's
 * last item; the caller checks that its items go after it and, for a leaf
 * that is not the rightmost, before its high key (then they belong in
 * this leaf: the leaf's range holds last, so it starts at or below it).
 * A leaf another backend holds locked is not waited for.
 */
static Buffer
lock_target_leaf(FtTree *tree, char **last, Size *lastlen)
{
	BlockNumber blkno = RelationGetTargetBlock(tree->rel);
	Buffer		buf;
	Page		page;
	FtPageOpaque opaque;

	if (blkno == InvalidBlockNumber)
		return InvalidBuffer;
	/* a bulk load's leaf stays in its ring (FtTree.strategy) */
	buf = ft_pin_target(tree, blkno);
	if (!ConditionalLockBuffer(buf))
	{
		ReleaseBuffer(buf);
		return InvalidBuffer;
	}
	ft_checkpage(tree->rel, buf);
	page = BufferGetPage(buf);
	opaque = FtPageGetOpaque(page);
	if (FtPageIsLeaf(opaque) && !FtPageIsDeleted(opaque) &&
		!FtPageIsCompressed(opaque) &&
		(FtPageIsRightmost(opaque) || !tree->buffering) &&
		PageGetMaxOffsetNumber(page) >= FtFirstDataOffset(opaque))
	{
		*last = ft_page_item(page, PageGetMaxOffsetNumber(page), lastlen);
		return buf;
	}
	UnlockReleaseBuffer(buf);
	RelationSetTargetBlock(tree->rel, InvalidBlockNumber);
	return InvalidBuffer;
}

/* Whether item belongs in the target leaf page after last (see above) */
static inline bool
target_takes(FtTree *tree, Page page, const char *last, Size lastlen,
			 const char *item, Size len)
{
	Size		hlen;
	char	   *hikey;

	if (ft_cmp(tree, item, len, last, lastlen) <= 0)
		return false;
	if (FtPageIsRightmost(FtPageGetOpaque(page)))
		return true;
	hikey = ft_page_item(page, FT_HIKEY, &hlen);
	return ft_cmp(tree, item, len, hikey, hlen) < 0;
}

/*
 * Fast path for ascending keys: insert into the target leaf (above) without
 * descending, where the item goes after last, or (not for unique inserts)
 * anywhere after the leaf's first item: an appender whose leaf another
 * appender's newer row ids share (each takes a pseudo-block of a table's
 * row ids at the right edge) inserts before the other's rows until the
 * leaf splits between the two.  A unique insert takes it only at the right
 * edge: every item of the tree is <= the rightmost leaf's last item, so an
 * item whose key sorts after last's key cannot have a duplicate.
 */
static bool
try_fastpath(FtTree *tree, const char *item, Size len, FtCompareFn keycmp)
{
	char	   *last;
	Size		llen;
	Buffer		buf = lock_target_leaf(tree, &last, &llen);
	Page		page;
	OffsetNumber off = InvalidOffsetNumber;

	if (!BufferIsValid(buf))
		return false;
	page = BufferGetPage(buf);
	if (PageGetExactFreeSpace(page) < ft_item_space(len))
	{
		/* full: leaf_insert prunes or splits it */
	}
	else if (target_takes(tree, page, last, llen, item, len))
	{
		if (keycmp == NULL ||
			(FtPageIsRightmost(FtPageGetOpaque(page)) &&
			 keycmp(tree->cmp_arg, last, llen, item, len) < 0))
			off = OffsetNumberNext(PageGetMaxOffsetNumber(page));
	}
	else if (keycmp == NULL)
	{
		OffsetNumber first = FtFirstDataOffset(FtPageGetOpaque(page));
		Size		flen;
		char	   *fitem = ft_page_item(page, first, &flen);
		bool		found;

		/* between the first item and last: in this leaf's range */
		if (ft_cmp(tree, item, len, fitem, flen) > 0 &&
			ft_cmp(tree, item, len, last, llen) < 0)
		{
			off = ft_leaf_lower_bound(tree, page, item, len, &found);
			if (found)
				off = InvalidOffsetNumber;	/* leaf_insert decides */
		}
	}
	if (off != InvalidOffsetNumber)
	{
		/* it fits (checked above): nothing for leaf_insert's other cases */
		if (tree->leaf_insert_hook)
			tree->leaf_insert_hook(tree, item, len);
		START_CRIT_SECTION();
		ft_page_add_item(page, item, len, off);
		MarkBufferDirty(buf);
		ftxlog_insert(tree->rel, buf, off, item, len, false);
		END_CRIT_SECTION();
	}
	UnlockReleaseBuffer(buf);
	if (off == InvalidOffsetNumber)
		RelationSetTargetBlock(tree->rel, InvalidBlockNumber);
	return off != InvalidOffsetNumber;
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
		elog(ERROR, "fractam: message sequence of %s \"%s\" is exhausted",
			 ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel));
	FtMsgSet(hdr, msn, FT_MSG_INSERT);

	freebefore = PageGetExactFreeSpace(page);

	START_CRIT_SECTION();
	ft_page_add_item(page, msgbuf.data, msglen, off);
	opaque->ft_msn = msn;
	MarkBufferDirty(bbuf);
	ftxlog_insert(tree->rel, bbuf, off, msgbuf.data, msglen, true);
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
	Buffer		child_recent;	/* where the child was seen, or Invalid */
	bool		rightmost_child;	/* the rightmost page of the level below */
	bool		slice_empty;	/* no message for the child's range here */
	bool		direct;			/* level 1: slice empty and applying costs
								 * no I/O */
	bool		drain;			/* level 1: the slice is not empty, but the
								 * index is in memory: flush it, item and all */
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
			   bool unique, InsertTarget *t)
{
	FtPageOpaque bopaque = FtPageGetOpaque(bpage);
	char	   *low;
	Size		lowlen;
	char	   *high;
	Size		highlen;

	t->childidx = ft_child_index(tree, bpage, item, len, false);
	t->child = ft_child_block(bpage, t->childidx);
	t->child_recent = InvalidBuffer;
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
	/*
	 * A unique insert must read the leaf anyway (to see whether the key is
	 * there), so the leaf's I/O is no reason for it to buffer; and once the
	 * leaf is read, applying the item there costs less I/O than flushing a
	 * message into it later, which reads it again.
	 */
	t->direct = bopaque->ft_level == 1 && t->slice_empty &&
		(!tree->buffering || t->rightmost_child ||
		 (tree->direct_apply &&
		  (unique || ft_leaf_resident(tree, t->child, &t->child_recent) ||
		   ft_leaf_in_memory(tree, t->child))));
	t->drain = bopaque->ft_level == 1 && !t->slice_empty && tree->buffering &&
		tree->direct_apply && ft_index_in_memory(tree);
}

typedef enum InsertStep
{
	INSERT_DONE,
	INSERT_RETRY,				/* start over */
	INSERT_RETRY_EXCLUSIVE,		/* start over, locking exclusively */
	INSERT_RETRY_LEAF_PARENT,	/* start over, locking the level-1 node
								 * above the leaf exclusively (the level-2
								 * node only shared) */
	INSERT_KEY_MAY_EXIST,		/* unique insert: the tree cannot rule out an
								 * item with the same key cheaply; nothing
								 * was inserted */
	INSERT_KEY_REJECTED			/* unique insert: the caller's check refused
								 * an item with the same key */
} InsertStep;

/* the InsertStep of a unique check's refusal or doubt */
static InsertStep
key_step(LeafInsertResult res)
{
	Assert(res == LEAF_KEY_MAY_EXIST || res == LEAF_KEY_REJECTED);
	return res == LEAF_KEY_REJECTED ? INSERT_KEY_REJECTED : INSERT_KEY_MAY_EXIST;
}

/*
 * Insert into a leaf that is the root (tree of height 1).
 */
static InsertStep
insert_into_root_leaf(FtTree *tree, const char *item, Size len,
					  UniqueProbe *u)
{
	FtDescent	d;
	LeafInsertResult res;
	FtSplitRequest full;

	ft_descend(tree, item, len, false, 0, BUFFER_LOCK_EXCLUSIVE, &d);
	if (BufferIsValid(d.parent))
	{
		/* the tree grew meanwhile: start over */
		UnlockReleaseBuffer(d.buf);
		ReleaseBuffer(d.parent);
		return INSERT_RETRY;
	}
	if (u)
	{
		/* the root leaf holds every item: its range has no lower bound */
		u->low = NULL;
		u->lowlen = 0;
	}
	res = leaf_insert(tree, d.buf, item, len, u);
	full = ft_split_request(d.buf);
	UnlockReleaseBuffer(d.buf);
	if (res == LEAF_KEY_MAY_EXIST || res == LEAF_KEY_REJECTED)
		return key_step(res);
	if (res == LEAF_FULL)
	{
		ft_make_room(tree, item, len, &full);
		return INSERT_RETRY;
	}
	return INSERT_DONE;
}

/*
 * The leaf a direct insert found full is split (or rewritten) on the retry,
 * under its parent's exclusive lock, where every insert below the parent
 * waits for it.  Take the new page the split needs now, holding no lock:
 * extending the file, or evicting a dirty buffer for the new page (which
 * may flush WAL first), then happens outside the parent's lock.  The page
 * stays locked (nothing links to it yet) until ft_newleaf hands it to the
 * split; insert_item gives back one the retry did not use.
 */
static void
take_spare_leaf(FtTree *tree)
{
	if (!BufferIsValid(tree->spare_leaf))
		tree->spare_leaf = ft_newleaf(tree);
}

/*
 * Under an exclusively locked buffer node: put item into child childidx
 * (whose slice must be empty) through a rewrite of the leaf, splitting
 * it if needed.  INSERT_RETRY means the buffer node first needs to split.
 */
static InsertStep
apply_with_rewrite(FtTree *tree, Buffer bbuf, int childidx,
				   const char *item, Size len, UniqueProbe *u)
{
	Page		bpage = BufferGetPage(bbuf);
	Buffer		lbuf = ft_getleaf(tree, ft_child_block(bpage, childidx),
								  BUFFER_LOCK_EXCLUSIVE);
	LeafInsertResult res = leaf_insert(tree, lbuf, item, len, u);

	if (res != LEAF_FULL)
	{
		UnlockReleaseBuffer(lbuf);
		return res == LEAF_INSERTED ? INSERT_DONE : key_step(res);
	}
	tree->sealed_split = false;
	if (ft_flush_child(tree, bbuf, childidx, lbuf, item, len, false) == FT_FLUSH_DONE)
	{
		/* the split left full leaves behind an append point: compress them */
		if (tree->sealed_split)
			ft_seal_behind(tree, bbuf, childidx, item, len);
		return INSERT_DONE;
	}
	return INSERT_RETRY;
}

/*
 * In an index that is in memory, buffered messages only cost: an insert
 * that would join them flushes its leaf's slice of buffer node bbuf (held
 * exclusively, with nothing buffered above it for the leaf) into the leaf
 * together with the item, and after that the leaf takes direct inserts
 * again.
 */
static InsertStep
drain_into_leaf(FtTree *tree, Buffer bbuf, const InsertTarget *t,
				const char *item, Size len)
{
	Buffer		lbuf = ft_getleaf(tree, t->child, BUFFER_LOCK_EXCLUSIVE);

	if (ft_flush_child(tree, bbuf, t->childidx, lbuf, item, len, false) == FT_FLUSH_DONE)
		return INSERT_DONE;
	return INSERT_RETRY;
}

static void
note_buffered(FtTree *tree, bool buffered)
{
	if (tree->rootcache)
		tree->rootcache->last_buffered = buffered;
}

/*
 * The lower bound of child childidx of an internal page whose own lower
 * bound is (plow, plowlen); lowlen 0 means minus infinity.
 */
static void
child_low(Page page, int childidx, const char *plow, Size plowlen,
		  const char **low, Size *lowlen)
{
	char	   *key = pivot_key(page, childidx, lowlen);

	if (key != NULL)
		*low = key;
	else
	{
		*low = plow;
		*lowlen = plow ? plowlen : 0;
	}
}

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
 *
 * A unique insert (u) never buffers: it returns INSERT_KEY_MAY_EXIST
 * wherever a plain insert would add a message.
 */
static InsertStep
insert_two_level(FtTree *tree, const char *item, Size len, FtDescent *d,
				 bool exclusive, bool x_exclusive, UniqueProbe *u)
{
	Buffer		tbuf = d->buf;
	Page		tpage = BufferGetPage(tbuf);
	InsertTarget t;
	MoveReadAhead ra;

	x_exclusive |= exclusive;

	examine_target(tree, tpage, item, len, u != NULL, &t);
	if (t.slice_empty || t.rightmost_child || !tree->buffering)
	{
		Buffer		xbuf = ft_getbuf(tree, t.child,
									 x_exclusive ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE);
		Page		xpage = BufferGetPage(xbuf);
		InsertTarget lt;
		bool		direct;

		if (FtPageGetOpaque(xpage)->ft_level != 1)
			ereport(ERROR,
					(errcode(ft_corrupted_errcode(tree->rel)),
					 errmsg("%s \"%s\" has a downlink to block %u at level 1, but the page is at level %u",
							ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel), t.child,
							FtPageGetOpaque(xpage)->ft_level)));
		examine_target(tree, xpage, item, len, u != NULL, &lt);
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
		if (direct && u)
		{
			const char *xlow;
			Size		xlowlen;

			child_low(tpage, t.childidx, d->lowkey, d->lowkeylen,
					  &xlow, &xlowlen);
			child_low(xpage, lt.childidx, xlow, xlowlen, &u->low, &u->lowlen);
		}
		if (direct && !x_exclusive)
		{
			Buffer		lbuf = ft_getbuf_recent(tree, lt.child, BUFFER_LOCK_EXCLUSIVE,
												lt.child_recent);
			LeafInsertResult res = leaf_insert(tree, lbuf, item, len, u);

			if (res == LEAF_INSERTED && (lt.rightmost_child || !tree->buffering))
				ft_set_target(tree, lt.child, lbuf);
			UnlockReleaseBuffer(lbuf);
			UnlockReleaseBuffer(xbuf);
			UnlockReleaseBuffer(tbuf);
			if (res == LEAF_INSERTED)
			{
				note_buffered(tree, false);
				return INSERT_DONE;
			}
			if (res != LEAF_FULL)
				return key_step(res);
			/* the leaf must be rewritten or split: needs X exclusive */
			take_spare_leaf(tree);
			return INSERT_RETRY_LEAF_PARENT;
		}
		if (direct || (lt.drain && t.slice_empty && u == NULL && x_exclusive))
		{
			InsertStep	step = direct ?
				apply_with_rewrite(tree, xbuf, lt.childidx, item, len, u) :
				drain_into_leaf(tree, xbuf, &lt, item, len);
			FtSplitRequest full = ft_split_request(xbuf);

			UnlockReleaseBuffer(xbuf);
			UnlockReleaseBuffer(tbuf);
			if (step == INSERT_DONE)
				note_buffered(tree, false);
			else if (step == INSERT_RETRY)
				ft_make_room(tree, item, len, &full);
			return step;
		}
		UnlockReleaseBuffer(xbuf);
		if (lt.drain && t.slice_empty && u == NULL)
		{
			/* drain_into_leaf needs X exclusively */
			UnlockReleaseBuffer(tbuf);
			return INSERT_RETRY_LEAF_PARENT;
		}
	}

	if (u)
	{
		UnlockReleaseBuffer(tbuf);
		return INSERT_KEY_MAY_EXIST;
	}

	/*
	 * In an index that is in memory, messages in T for X's range only keep
	 * the range buffered: move them down (the retry then drains X's slice
	 * into the leaf) rather than add to them.
	 */
	if (!t.slice_empty && tree->buffering && tree->direct_apply &&
		ft_index_in_memory(tree))
	{
		char	   *splitkey = NULL;
		Size		splitkeylen = 0;

		if (exclusive &&
			ft_flush_to_node(tree, tbuf, t.childidx, &splitkey,
							 &splitkeylen, false) == FT_FLUSH_NEED_SPLIT)
		{
			FtSplitRequest full = ft_split_request_level(1);

			UnlockReleaseBuffer(tbuf);
			ft_make_room(tree, splitkey, splitkeylen, &full);
			pfree(splitkey);
		}
		else
			UnlockReleaseBuffer(tbuf);
		return INSERT_RETRY_EXCLUSIVE;
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
		FtSplitRequest full = ft_split_request(tbuf);

		UnlockReleaseBuffer(tbuf);
		ft_make_room(tree, item, len, &full);
		return INSERT_RETRY_EXCLUSIVE;
	}

	/* move its heaviest child's messages down, then retry */
	{
		char	   *splitkey = NULL;
		Size		splitkeylen = 0;
		FtFlushResult res;

		res = ft_flush_to_node(tree, tbuf, ft_heaviest_child(tree, tpage),
							   &splitkey, &splitkeylen, false);
		UnlockReleaseBuffer(tbuf);
		if (res == FT_FLUSH_NEED_SPLIT)
		{
			FtSplitRequest full = ft_split_request_level(1);

			ft_make_room(tree, splitkey, splitkeylen, &full);
			pfree(splitkey);
		}
	}
	return INSERT_RETRY_EXCLUSIVE;
}

/*
 * Insert under the root of a two-level tree, the only buffer node B
 * (d->buf, locked share or exclusive; released here).  Like
 * insert_two_level, one level lower.
 */
static InsertStep
insert_one_level(FtTree *tree, const char *item, Size len, FtDescent *d,
				 bool exclusive, UniqueProbe *u)
{
	Page		bpage = BufferGetPage(d->buf);
	InsertTarget t;
	MoveReadAhead ra;

	examine_target(tree, bpage, item, len, u != NULL, &t);
	if (t.direct && u)
		child_low(bpage, t.childidx, d->lowkey, d->lowkeylen,
				  &u->low, &u->lowlen);

	if (!exclusive)
	{
		bool		leaf_full = false;

		if (t.direct)
		{
			/* adaptive direct apply, B share-locked */
			Buffer		lbuf = ft_getbuf_recent(tree, t.child, BUFFER_LOCK_EXCLUSIVE,
												t.child_recent);
			LeafInsertResult res = leaf_insert(tree, lbuf, item, len, u);

			if (res == LEAF_INSERTED && (t.rightmost_child || !tree->buffering))
				ft_set_target(tree, t.child, lbuf);
			UnlockReleaseBuffer(lbuf);
			if (res != LEAF_FULL)
			{
				UnlockReleaseBuffer(d->buf);
				if (res != LEAF_INSERTED)
					return key_step(res);
				note_buffered(tree, false);
				return INSERT_DONE;
			}
			/* the leaf must be rewritten or split: needs B exclusive */
			leaf_full = true;
		}
		else if (u)
		{
			UnlockReleaseBuffer(d->buf);
			return INSERT_KEY_MAY_EXIST;
		}
		else if (t.drain)
		{
			/* drain_into_leaf needs B exclusively */
		}
		else if (PageGetExactFreeSpace(bpage) < ft_item_space(FT_MSG_HDRSZ + len))
		{
			/*
			 * B is full and will need a flush: read the heaviest child into
			 * shared buffers now, while we hold no exclusive lock, so the
			 * flush does no I/O under B's exclusive lock (usually).  The pin
			 * is dropped at once: we must not wait for B's lock holding one.
			 */
			ReleaseBuffer(ReadBuffer(tree->rel,
									 ft_child_block(bpage,
													ft_heaviest_child(tree, bpage))));
		}
		UnlockReleaseBuffer(d->buf);
		if (leaf_full)
			take_spare_leaf(tree);
		return INSERT_RETRY_EXCLUSIVE;
	}

	/* B is locked exclusively */
	if (t.direct || (t.drain && u == NULL))
	{
		InsertStep	step = t.direct ?
			apply_with_rewrite(tree, d->buf, t.childidx, item, len, u) :
			drain_into_leaf(tree, d->buf, &t, item, len);
		FtSplitRequest full = ft_split_request(d->buf);

		UnlockReleaseBuffer(d->buf);
		if (step == INSERT_DONE)
			note_buffered(tree, false);
		else if (step == INSERT_RETRY)
			ft_make_room(tree, item, len, &full);
		return step;
	}

	if (u)
	{
		UnlockReleaseBuffer(d->buf);
		return INSERT_KEY_MAY_EXIST;
	}

	if (buffer_insert(tree, d->buf, item, len, t.msgpos, &ra))
	{
		/* only level-2 nodes ask for read-ahead after unlocking */
		Assert(ra.target == InvalidBlockNumber);
		UnlockReleaseBuffer(d->buf);
		note_buffered(tree, true);
		return INSERT_DONE;
	}

	/* B is full: flush its heaviest child, then retry */
	{
		int			heavy = ft_heaviest_child(tree, bpage);
		Buffer		lbuf = ft_getbuf(tree, ft_child_block(bpage, heavy),
									 BUFFER_LOCK_EXCLUSIVE);
		FtFlushResult res;
		FtSplitRequest full;

		res = ft_flush_child(tree, d->buf, heavy, lbuf, NULL, 0, false);
		/* the next flush of this node will go here: start reading it */
		if (res == FT_FLUSH_DONE)
			(void) PrefetchBuffer(tree->rel, MAIN_FORKNUM,
								  ft_child_block(bpage, ft_heaviest_child(tree, bpage)));
		full = ft_split_request(d->buf);
		UnlockReleaseBuffer(d->buf);
		if (res == FT_FLUSH_NEED_SPLIT)
			ft_make_room(tree, item, len, &full);
	}
	return INSERT_RETRY_EXCLUSIVE;
}

/*
 * The insert itself; with u, a unique insert (see ft_insert_unique).
 */
static FtUniqueResult
insert_item_steps(FtTree *tree, const char *item, Size len, UniqueProbe *u)
{
	bool		want_exclusive = false;
	bool		want_x_exclusive = false;

	ft_check_item_size(tree, len);

	if (try_fastpath(tree, item, len, u ? u->keycmp : NULL))
		return FT_UNIQUE_INSERTED;
	ft_prune_forget();

	for (;;)
	{
		FtDescent	d;
		InsertStep	step;
		bool		exclusive;

		CHECK_FOR_INTERRUPTS();

		/*
		 * Inserts into an index much larger than memory are mostly
		 * buffered, which needs the buffer node exclusively; when the last
		 * insert was buffered, lock it exclusively right away instead of
		 * descending twice.  A unique insert never buffers.
		 */
		exclusive = want_exclusive ||
			(u == NULL && tree->rootcache && tree->rootcache->last_buffered);
		ft_descend(tree, item, len, false, FT_TOP_BUFFER_LEVEL,
				   exclusive ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE, &d);
		if (d.level == 0)
		{
			UnlockReleaseBuffer(d.buf);
			step = insert_into_root_leaf(tree, item, len, u);
		}
		else if (d.level == 2)
			step = insert_two_level(tree, item, len, &d, exclusive,
									want_x_exclusive, u);
		else
			step = insert_one_level(tree, item, len, &d, exclusive, u);
		if (d.lowkey)
			pfree(d.lowkey);

		if (step == INSERT_DONE)
			return FT_UNIQUE_INSERTED;
		if (step == INSERT_KEY_MAY_EXIST)
			return FT_UNIQUE_UNDECIDED;
		if (step == INSERT_KEY_REJECTED)
			return FT_UNIQUE_REJECTED;

		/*
		 * A unique insert whose check accepted the key's run under the
		 * leaf's lock, and must now start over (the leaf was full), cannot
		 * trust that check any longer: another insert of the key may have
		 * come in while nothing was locked.  See leaf_check_key.
		 */
		if (u && u->accepted)
		{
			u->accepted = false;
			u->recheck = true;
			if (tree->unique_retry_delay > 0)
				pg_usleep(tree->unique_retry_delay);
		}
		want_exclusive = (step == INSERT_RETRY_EXCLUSIVE);
		want_x_exclusive = (step == INSERT_RETRY_LEAF_PARENT);
	}
}

static FtUniqueResult
insert_item(FtTree *tree, const char *item, Size len, UniqueProbe *u)
{
	FtUniqueResult res;

	tree->spare_leaf = InvalidBuffer;
	res = insert_item_steps(tree, item, len, u);
	ft_release_spare_leaf(tree);
	return res;
}

void
ft_insert(FtTree *tree, const char *item, Size len)
{
	(void) insert_item(tree, item, len, NULL);
}

/*
 * Append a prefix of the ascending items to the cached rightmost leaf (the
 * right-edge fast path for many items): those that sort after its last item
 * and fit, in one WAL record.  Returns how many went in (0: the caller
 * inserts the first one by ft_insert, which may split and find the new
 * right edge).
 */
static int
append_to_right_edge(FtTree *tree, char **items, Size *lens, int n)
{
	char	   *last;
	Size		llen;
	Buffer		buf = lock_target_leaf(tree, &last, &llen);
	Page		page;
	Size		free;
	Size		datalen = 0;
	char	   *data;
	char	   *p;
	OffsetNumber first;
	int			k = 0;
	int			i;

	if (!BufferIsValid(buf))
		return 0;
	page = BufferGetPage(buf);
	free = PageGetExactFreeSpace(page);
	while (k < n && ft_item_space(lens[k]) <= free &&
		   target_takes(tree, page, last, llen, items[k], lens[k]))
	{
		free -= ft_item_space(lens[k]);
		datalen += sizeof(uint16) + lens[k];
		last = items[k];
		llen = lens[k];
		k++;
	}
	if (k == 0)
	{
		UnlockReleaseBuffer(buf);
		RelationSetTargetBlock(tree->rel, InvalidBlockNumber);
		return 0;
	}

	for (i = 0; i < k; i++)
		if (tree->leaf_insert_hook)
			tree->leaf_insert_hook(tree, items[i], lens[i]);
	/* the record's block data, built before the critical section */
	data = p = palloc(datalen);
	for (i = 0; i < k; i++)
	{
		uint16		len = (uint16) lens[i];

		memcpy(p, &len, sizeof(uint16));
		p += sizeof(uint16);
		memcpy(p, items[i], lens[i]);
		p += lens[i];
	}
	first = OffsetNumberNext(PageGetMaxOffsetNumber(page));

	START_CRIT_SECTION();
	for (i = 0; i < k; i++)
		ft_page_add_item(page, items[i], lens[i], first + i);
	MarkBufferDirty(buf);
	ftxlog_append(tree->rel, buf, first, k, data, datalen);
	END_CRIT_SECTION();

	UnlockReleaseBuffer(buf);
	pfree(data);
	return k;
}

/*
 * Insert n items in ascending order (a table's new rows of one COPY batch):
 * runs of them that go at the right edge are appended a leaf at a time, one
 * WAL record per leaf; the rest go in one by one.  In a compressed table,
 * the split of a full right edge takes the batch's next items along and
 * leaves compressed pages behind (ft_flush_child, take_append_batch).
 */
void
ft_insert_ascending(FtTree *tree, char **items, Size *lens, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		ft_check_item_size(tree, lens[i]);
	i = 0;
	while (i < n)
	{
		int			done;

		CHECK_FOR_INTERRUPTS();
		Assert(i == 0 || ft_cmp(tree, items[i - 1], lens[i - 1],
								items[i], lens[i]) < 0);
		done = append_to_right_edge(tree, items + i, lens + i, n - i);
		if (done == 0)
		{
			FtAppendBatch batch = {items + i, lens + i, n - i, 0};

			/* a full right edge of a compressed table takes more along */
			if (tree->codec != FT_CODEC_NONE && !tree->buffering)
				tree->append_batch = &batch;
			ft_insert(tree, items[i], lens[i]);
			tree->append_batch = NULL;
			done = 1 + batch.taken;
		}
		i += done;
	}
}

static void
probe_init(UniqueProbe *probe, FtCompareFn keycmp, FtUniqueCheckFn check,
		   FtUniquePruneFn prune, void *checkarg, bool replace)
{
	probe->keycmp = keycmp;
	probe->check = check;
	probe->prune = prune;
	probe->checkarg = checkarg;
	probe->low = NULL;
	probe->lowlen = 0;
	probe->accepted = false;
	probe->recheck = false;
	probe->replace = replace;
	probe->rewrite = false;
}

/*
 * A unique insert: item goes in only if the tree can tell, without reading
 * anything a plain insert would not, which items with the same key exist,
 * and check accepts each of them.  keycmp compares the key part of two
 * items (the tree's comparator must order items by key first, so that
 * items with equal keys are adjacent).  check (arg, an item with the same
 * key) returns false to refuse the insert; it is called with the leaf
 * locked exclusively (and the buffer nodes above it locked, share or, on a
 * retry after a full leaf, exclusive), so it must not wait for anything but
 * short-term locks of other relations.
 *
 * FT_UNIQUE_INSERTED: done.  FT_UNIQUE_REJECTED: check refused an item;
 * nothing was inserted.  FT_UNIQUE_UNDECIDED: nothing was inserted, and
 * items with the same key may exist where the insert's descent does not see
 * them (buffered, or in another leaf; the answer is "undecided" wherever a
 * plain insert would buffer): the caller must search for them, and insert
 * with ft_insert if it decides to.
 *
 * The check and the insertion happen under one lock of the leaf, which is
 * what keeps two unique inserts of one key that both decide here apart.
 * The caller must keep out, from the check until the item is in, any
 * insert of the key that does not decide here (one that searched, then
 * called ft_insert: it checked without the leaf locked); src/am locks the
 * key's hash, shared here and exclusively around the search.  Other unique
 * inserts of the key may run meanwhile, so a retry after the check accepted
 * the run (the leaf was full) decides only if the key has no item at all,
 * and answers FT_UNIQUE_UNDECIDED otherwise.
 */
FtUniqueResult
ft_insert_unique(FtTree *tree, const char *item, Size len,
				 FtCompareFn keycmp, FtUniqueCheckFn check,
				 FtUniquePruneFn prune, void *checkarg)
{
	UniqueProbe probe;

	Assert(keycmp != NULL);
	probe_init(&probe, keycmp, check, prune, checkarg, false);
	return insert_item(tree, item, len, &probe);
}

/*
 * Replace the item with item's key in an unbuffered tree by item, if
 * check (arg, the stored item) accepts it; false if it refuses or there is
 * no such item.  The check and the replacement happen under one exclusive
 * lock of the leaf, which is rewritten (and split, if the new item does
 * not fit) as a flush would.  For the rare change that ft_item_transform
 * cannot do in place: the caller, holding nothing, tells with check
 * whether the item is still the one it saw.
 */
typedef struct SameItem
{
	const char *item;
	Size		len;
} SameItem;

/* is the stored item still the one the caller copied? */
static FtUniqueVerdict
still_same(void *arg, const char *item, Size len)
{
	SameItem   *same = (SameItem *) arg;

	return (len == same->len && memcmp(item, same->item, len) == 0) ?
		FT_UNIQUE_ACCEPT : FT_UNIQUE_REFUSE;
}

/*
 * Rewrite the compressed leaf that holds item (an unbuffered tree's, with
 * item exactly as stored), as a replacement of the item would: a table's
 * into compressed halves with fresh change areas (ft_flush_child), else
 * uncompressed, splitting it as needed: its change area is full, and the
 * writer that found it so needs room to change an entry in place.  Nothing happens if
 * the item is gone or changed (the caller looks again), or its leaf is no
 * longer compressed.
 */
void
ft_rewrite_leaf_of(FtTree *tree, const char *item, Size len)
{
	UniqueProbe probe;
	SameItem	same = {item, len};

	Assert(!tree->buffering);
	probe_init(&probe, tree->cmp, still_same, NULL, &same, true);
	probe.rewrite = true;
	(void) insert_item(tree, item, len, &probe);
}

bool
ft_replace(FtTree *tree, const char *item, Size len, FtUniqueCheckFn check,
		   void *checkarg)
{
	UniqueProbe probe;

	Assert(!tree->buffering);
	probe_init(&probe, tree->cmp, check, NULL, checkarg, true);
	return insert_item(tree, item, len, &probe) == FT_UNIQUE_INSERTED;
}

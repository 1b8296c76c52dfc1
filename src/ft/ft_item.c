/*-------------------------------------------------------------------------
 *
 * ft_item.c
 *	  One item of an unbuffered tree, found by its key, read or changed in
 *	  place.
 *
 * A tree built with buffering off keeps every item in its leaf (nothing
 * waits in buffer nodes), so the leaf found by a descent is the whole
 * truth about a key.  Table trees are such trees: the table AM reads a row
 * version here and writes its header in place (xmax, lock bits, the link
 * to the next version), always with the same length, under the leaf's
 * exclusive lock, inside one critical section with its WAL record
 * (XLOG_FT_PATCH).  The caller never waits for anything while it holds the
 * leaf: it releases the item, waits, and finds it again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/resowner.h"
#include "wal/ft_xlog.h"

/*
 * Tell the tree's leaf_range_hook where each leaf under node (a copy of
 * the level-1 node a descent passed) is.  low_known: the descent knows the
 * node's own lower bound, nodelow (NULL: minus infinity), which is its
 * first child's; otherwise that child is not reported.
 */
static void
report_leaf_ranges(FtTree *tree, Page node, bool low_known,
				   const char *nodelow, Size nodelowlen)
{
	FtPageOpaque opaque = FtPageGetOpaque(node);
	OffsetNumber first = FtFirstDataOffset(opaque);
	char	   *lo;
	Size		lolen;
	bool		known = true;
	int			i;

	ft_pivot(node, first, &lo, &lolen);
	if (lolen == 0)
	{
		/* the first child's pivot is empty: it starts where the node does */
		known = low_known;
		lo = (char *) nodelow;
		lolen = nodelowlen;
	}
	for (i = 0; i < opaque->ft_nchildren; i++)
	{
		char	   *hi;
		Size		hilen;

		if (i + 1 < opaque->ft_nchildren)
			ft_pivot(node, first + i + 1, &hi, &hilen);
		else if (FtPageIsRightmost(opaque))
		{
			hi = NULL;
			hilen = 0;
		}
		else
			hi = ft_page_item(node, FT_HIKEY, &hilen);
		if (known)
			tree->leaf_range_hook(tree, lolen > 0 ? lo : NULL, lolen, hi,
								  hilen, ft_child_block(node, i));
		lo = hi;
		lolen = hilen;
		known = true;
	}
}

/* The leaf of an unbuffered tree whose range holds key, locked with access */
static Buffer
descend_to_leaf(FtTree *tree, const char *key, Size keylen, int access)
{
	Buffer		buf;

	Assert(!tree->buffering);
	if (tree->leaf_range_hook != NULL)
	{
		FtDescent	d;
		PGAlignedBlock node;

		/* copy the level-1 node on the way (it stays pinned until here) */
		ft_descend_copy(tree, key, keylen, false, 0, access, &d, node.data,
						NULL, true);
		buf = d.buf;
		if (BufferIsValid(d.parent))
		{
			ReleaseBuffer(d.parent);
			report_leaf_ranges(tree, node.data, d.parentlow_known,
							   d.parentlow, d.parentlowlen);
		}
		if (BufferIsValid(d.parent2))
			ReleaseBuffer(d.parent2);
		if (d.lowkey)
			pfree(d.lowkey);
		if (d.parentlow)
			pfree(d.parentlow);
	}
	else
		buf = ft_descend_to_leaf(tree, key, keylen, access);
	return buf;
}

/*
 * Find the item whose key equals key and lock its leaf with access
 * (BUFFER_LOCK_SHARE or BUFFER_LOCK_EXCLUSIVE).  Returns false, holding
 * nothing, if there is none.  On true, ref->item points into the locked
 * shared page: it is valid until ft_item_release.
 */
bool
ft_item_find(FtTree *tree, const char *key, Size keylen, int access,
			 FtItemRef *ref)
{
	FtLeafHint	hint = FT_NO_LEAF_HINT;

	return ft_item_find_near(tree, key, keylen, access, ref, &hint);
}

/*
 * Is the page (locked, reached through a hint: it may since have been
 * deleted, reused, or never been a leaf) a leaf with items, compressed or
 * not?
 */
static bool
usable_leaf(Page page)
{
	FtPageOpaque opaque;

	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(FtPageOpaqueData)))
		return false;
	opaque = FtPageGetOpaque(page);
	return opaque->ft_page_id == FT_PAGE_ID && ft_page_format_known(opaque) &&
		FtPageIsLeaf(opaque) && !FtPageIsDeleted(opaque) &&
		PageGetMaxOffsetNumber(page) >= FtFirstDataOffset(opaque);
}

/* Is the item at off (if the leaf has one there) the one with key? */
static bool
item_at(FtTree *tree, Page page, OffsetNumber off, const char *key,
		Size keylen)
{
	char	   *item;
	Size		len;

	if (off < FtFirstDataOffset(FtPageGetOpaque(page)) ||
		off > PageGetMaxOffsetNumber(page))
		return false;
	item = ft_page_item(page, off, &len);
	return ft_cmp(tree, item, len, key, keylen) == 0;
}

/*
 * Does usable leaf page (locked) tell on its own where key is?  The leaf's
 * range is [its lower bound, its high key); its first item is not below
 * the lower bound, so a key between its first item and its high key
 * belongs here even when no item has it.  Sets *off and *found as
 * ft_leaf_lower_bound does; *beyond tells whether the key is at or past
 * the high key (it belongs to a leaf further right).
 */
static bool
leaf_decides(FtTree *tree, Page page, const char *key, Size keylen,
			 OffsetNumber *off, bool *found, bool *beyond)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);
	char	   *item;
	Size		len;

	*beyond = false;
	*off = ft_leaf_lower_bound(tree, page, key, keylen, found);
	if (*found)
		return true;

	/*
	 * A part of a compressed leaf (lookup_view) whose entries are all dead
	 * holds none, and tells nothing of where the leaf's range starts: the
	 * caller descends.  (A whole leaf here always holds an entry.)
	 */
	if (PageGetMaxOffsetNumber(page) < first)
		return false;
	item = ft_page_item(page, first, &len);
	if (ft_cmp(tree, item, len, key, keylen) > 0)
		return false;			/* may belong to the left neighbour */
	if (FtPageIsRightmost(opaque))
		return true;
	item = ft_page_item(page, FT_HIKEY, &len);
	*beyond = ft_cmp(tree, key, keylen, item, len) >= 0;
	return !*beyond;
}

/*
 * Pin block blkno of the tree: through recent (the buffer it was last seen
 * in, or InvalidBuffer) without a buffer-table lookup while that buffer
 * still holds it, else through a normal read.
 */
static Buffer
pin_hinted(FtTree *tree, BlockNumber blkno, Buffer recent)
{
	/* local buffers: ReadRecentBuffer mishandles them before 15.3 */
	if (BufferIsValid(recent) && !RelationUsesLocalBuffers(tree->rel) &&
		ReadRecentBuffer(tree->rel->rd_node, MAIN_FORKNUM, blkno, recent))
		return recent;
	return ReadBuffer(tree->rel, blkno);
}

/*
 * The leaf in buf (locked with access) as a page to look key up in: a
 * compressed leaf decoded, and for a reader only the part of it that would
 * hold key (ft_leaf_view_part), so that a point read decodes a part, not
 * the whole leaf.  A writer gets the whole leaf, unless its frame is wide
 * (FT_FRAME_LAYOUT_WIDE_*), where it gets the part too: a change of an
 * entry in place (ft_leaf_change_entry) finds the entry's frame index from
 * the offset in either.
 */
static Page
lookup_view(FtTree *tree, Buffer buf, const char *key, Size keylen,
			int access)
{
	const char *low;
	const char *high;
	Size		lowlen;
	Size		highlen;

	if (access != BUFFER_LOCK_SHARE && !ft_leaf_is_wide(BufferGetPage(buf)))
		return ft_leaf_view(tree, buf);
	return ft_leaf_view_part(tree, buf, key, keylen, true, &low, &lowlen,
							 &high, &highlen);
}

/*
 * Pin and lock leaf blkno (recent: the buffer it was last seen in, or
 * InvalidBuffer; kept: a buffer the caller's hint holds pinned, or
 * InvalidBuffer) if it is a usable leaf that decides where key is; else
 * hold nothing (but kept's pin) and return InvalidBuffer.  The entry after
 * the previous lookup's (prev, InvalidOffsetNumber if none) is tried
 * before a binary search.  *right is set to the leaf's right sibling when
 * the key lies beyond its range, else to InvalidBlockNumber.  A buffer
 * returned is pinned anew unless it is kept; *view is the page *off
 * points into (lookup_view).
 */
static Buffer
try_leaf(FtTree *tree, BlockNumber blkno, Buffer recent, Buffer kept,
		 OffsetNumber prev, const char *key, Size keylen, int access,
		 OffsetNumber *off, bool *found, BlockNumber *right, Page *view)
{
	Buffer		buf;
	Page		page;
	bool		beyond;

	*right = InvalidBlockNumber;
	if (BufferIsValid(kept) && BufferGetBlockNumber(kept) == blkno)
		buf = kept;
	else
		buf = pin_hinted(tree, blkno, recent);
	page = BufferGetPage(buf);
	LockBuffer(buf, access);
	if (usable_leaf(page))
	{
		/* a compressed leaf is searched in its decoded page (or part) */
		page = lookup_view(tree, buf, key, keylen, access);
		*view = page;
		/* a run of ascending keys: the next entry, or the same one again */
		if (prev != InvalidOffsetNumber)
		{
			if (item_at(tree, page, OffsetNumberNext(prev), key, keylen))
			{
				*off = OffsetNumberNext(prev);
				*found = true;
				return buf;
			}
			if (item_at(tree, page, prev, key, keylen))
			{
				*off = prev;
				*found = true;
				return buf;
			}
		}
		if (leaf_decides(tree, page, key, keylen, off, found, &beyond))
			return buf;
		if (beyond)
			*right = FtPageGetOpaque(page)->ft_right;
	}
	if (buf == kept)
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	else
		UnlockReleaseBuffer(buf);
	return InvalidBuffer;
}

/*
 * The hints of this backend that keep a pin (FtLeafHint.keep_pin), so that
 * ft_release_kept_pins can drop such pins before the backend waits for a
 * transaction or a heavyweight lock: a pin kept across a wait (a scan
 * below a row lock that waits for the row's locker) would make an
 * aggressive VACUUM that needs the leaf's cleanup lock wait for that
 * transaction too, where the deadlock detector cannot see it.  A hint
 * whose run goes on after the wait pins its leaf again.  Each pin belongs
 * to the resource owner that was current when it was taken (a cursor's
 * portal has its own): only pins of the current owner can be released
 * here, so those of other owners (a cursor fetched earlier, the query of a
 * PL/pgSQL loop) stay, as heap's scans keep theirs.  A hint the list has
 * no room for keeps no pin.  An abort forgets the list without touching
 * it (the hints' memory may be gone; the resource owners release their
 * pins), so a pin kept by a hint of an outer level then stays until its
 * owner releases it.
 */
#define MAX_KEPT_HINTS 8

typedef struct KeptHint
{
	FtLeafHint *hint;
	ResourceOwner owner;		/* of the pin */
} KeptHint;

static KeptHint kept_hints[MAX_KEPT_HINTS];
static int	nkept_hints = 0;

static int
find_kept(FtLeafHint *hint)
{
	for (int i = 0; i < nkept_hints; i++)
		if (kept_hints[i].hint == hint)
			return i;
	return -1;
}

static bool
register_kept(FtLeafHint *hint)
{
	if (nkept_hints == MAX_KEPT_HINTS)
		return false;
	kept_hints[nkept_hints].hint = hint;
	kept_hints[nkept_hints].owner = CurrentResourceOwner;
	nkept_hints++;
	return true;
}

static void
forget_kept(int i)
{
	kept_hints[i] = kept_hints[--nkept_hints];
}

/*
 * Drop the pin a hint keeps (FtLeafHint.keep_pin), if any.  The hint's
 * owner calls this in the resource owner that took the pin.
 */
void
ft_leaf_hint_release(FtLeafHint *hint)
{
	if (BufferIsValid(hint->kept))
	{
		int			i = find_kept(hint);

		Assert(i < 0 || kept_hints[i].owner == CurrentResourceOwner);
		ReleaseBuffer(hint->kept);
		if (i >= 0)
			forget_kept(i);
	}
	hint->kept = InvalidBuffer;
}

/* Drop the current resource owner's kept pins: the backend is about to wait */
void
ft_release_kept_pins(void)
{
	int			i = 0;

	while (i < nkept_hints)
	{
		FtLeafHint *hint = kept_hints[i].hint;

		if (kept_hints[i].owner != CurrentResourceOwner)
		{
			i++;
			continue;
		}
		Assert(BufferIsValid(hint->kept));
		ReleaseBuffer(hint->kept);
		hint->kept = InvalidBuffer;
		forget_kept(i);
	}
}

static void
kept_hints_xact_end(XactEvent event, void *arg)
{
	nkept_hints = 0;
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		ft_leaf_view_unprotect_all();
}

static void
kept_hints_subxact_end(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		nkept_hints = 0;
		ft_leaf_view_unprotect_all();
	}
}

void
ft_item_init(void)
{
	RegisterXactCallback(kept_hints_xact_end, NULL);
	RegisterSubXactCallback(kept_hints_subxact_end, NULL);
}

/*
 * ft_item_find for a run of nearby keys (an index scan's row ids): *hint is
 * the leaf the previous call ended in (see FtLeafHint), which is tried
 * before a descent and usually holds the next key too, and its right
 * sibling when the run has gone past it; it is updated.  Unless the hint
 * keeps a pin (keep_pin), none is kept between calls; with or without one,
 * the leaf may have changed since (split, emptied, deleted, reused: a pin
 * does not stop writers, only cleanup locks), so it is checked to still be
 * a live leaf whose range holds the key.  A leaf still in the buffer the
 * hint names is pinned
 * there without counting a use: the calls of a run read the same leaf
 * dozens of times, and counting each (up to the maximum usage count)
 * would make every leaf a range scan passed look hot, so the clock sweep
 * would have to pass over it five times before it could evict it.  The
 * entry tried first takes only an item with exactly the key, so this
 * serves trees whose keys are unique (a table's row ids): with equal keys
 * it could return another of them than the first.
 */
bool
ft_item_find_near(FtTree *tree, const char *key, Size keylen, int access,
				  FtItemRef *ref, FtLeafHint *hint)
{
	Buffer		buf = InvalidBuffer;
	Page		page;
	bool		found;
	bool		descended;
	OffsetNumber off;

restart:
	buf = InvalidBuffer;
	page = NULL;
	descended = false;
	if (hint->blkno != InvalidBlockNumber)
	{
		BlockNumber right;

		buf = try_leaf(tree, hint->blkno, hint->recent, hint->kept,
					   hint->off, key, keylen, access, &off, &found, &right,
					   &page);
		/* one step right costs less than a descent */
		if (!BufferIsValid(buf) && right != InvalidBlockNumber)
		{
			buf = try_leaf(tree, right, InvalidBuffer, hint->kept,
						   InvalidOffsetNumber, key, keylen, access, &off,
						   &found, &right, &page);
			if (BufferIsValid(buf))
				hint->blkno = BufferGetBlockNumber(buf);
		}
	}
	if (!BufferIsValid(buf))
	{
		buf = descend_to_leaf(tree, key, keylen, access);
		descended = true;
		hint->blkno = BufferGetBlockNumber(buf);
		page = lookup_view(tree, buf, key, keylen, access);
		off = ft_leaf_lower_bound(tree, page, key, keylen, &found);
	}

	/*
	 * A writer of a compressed leaf needs room in its change area for one
	 * change (ft_item_patch after an expansion): without it, the leaf is
	 * rewritten first (into compressed halves with fresh change areas) and
	 * the search starts over.  (Another writer may fill the new leaf's
	 * area before we get it; each rewrite leaves room for many changes.)
	 */
	if (found && access == BUFFER_LOCK_EXCLUSIVE &&
		!ft_leaf_has_change_room(tree, buf))
	{
		Size		len;
		char	   *item = ft_page_item(page, off, &len);
		char	   *copy = palloc(len);

		memcpy(copy, item, len);
		if (buf == hint->kept)
		{
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			if (descended)
				ReleaseBuffer(buf); /* the descent's pin */
		}
		else
			UnlockReleaseBuffer(buf);
		ft_leaf_hint_release(hint);
		hint->blkno = InvalidBlockNumber;
		hint->off = InvalidOffsetNumber;
		ft_rewrite_leaf_of(tree, copy, len);
		pfree(copy);
		CHECK_FOR_INTERRUPTS();
		goto restart;
	}

	Assert(page != NULL);
	hint->recent = buf;
	hint->off = found ? off : InvalidOffsetNumber;
	/* the hint keeps the leaf's pin: drop the one it kept before */
	if (hint->keep_pin && buf != hint->kept)
	{
		ft_leaf_hint_release(hint);
		if (register_kept(hint))
			hint->kept = buf;
	}
	else if (hint->keep_pin && descended)
		ReleaseBuffer(buf);		/* the descent pinned the kept leaf again */
	ref->borrowed = (buf == hint->kept);
	if (!found)
	{
		if (ref->borrowed)
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		else
			UnlockReleaseBuffer(buf);
		ref->buf = InvalidBuffer;
		return false;
	}
	ref->buf = buf;
	ref->off = off;
	ref->view = page;
	if (page != BufferGetPage(buf))
		ft_leaf_view_protect(page);
	ref->item = ft_page_item(page, off, &ref->len);
	return true;
}

/*
 * The last item of an unbuffered tree (whose rightmost leaf's last item is
 * its greatest), as a palloc'd copy, read from the rightmost leaf alone:
 * the leaf *hint names (its blkno and recent buffer, as a previous call
 * set them) if that is still the rightmost leaf, else the leaf a descent
 * towards maxkey (greater than every key) ends in.  Returns false, with
 * nothing copied, if that leaf is empty or compressed; the caller then
 * scans backwards.  Planning asks for this on every query of a table (its
 * size in TID blocks), so it must cost one page, not a descent and copies.
 */
bool
ft_item_last(FtTree *tree, const char *maxkey, Size maxkeylen,
			 FtLeafHint *hint, char **item, Size *len)
{
	Buffer		buf = InvalidBuffer;
	Page		page;
	bool		found = false;

	Assert(!hint->keep_pin);
	if (hint->blkno != InvalidBlockNumber)
	{
		buf = pin_hinted(tree, hint->blkno, hint->recent);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!usable_leaf(page) || ft_leaf_is_compressed(page) ||
			!FtPageIsRightmost(FtPageGetOpaque(page)))
		{
			UnlockReleaseBuffer(buf);
			buf = InvalidBuffer;
		}
	}
	/*
	 * Not descend_to_leaf: this descent (planning's) tells no leaf ranges
	 * (leaf_range_hook), so that it leaves the hints of the row lookups as
	 * their own descents set them, and it takes a compressed leaf too.
	 */
	if (!BufferIsValid(buf))
		buf = ft_descend_to_leaf(tree, maxkey, maxkeylen, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	hint->blkno = BufferGetBlockNumber(buf);
	hint->recent = buf;
	if (usable_leaf(page) && !ft_leaf_is_compressed(page))
	{
		Size		l;
		char	   *last = ft_page_item(page, PageGetMaxOffsetNumber(page), &l);

		Assert(FtPageIsRightmost(FtPageGetOpaque(page)));
		*item = palloc(l);
		memcpy(*item, last, l);
		*len = l;
		found = true;
	}
	UnlockReleaseBuffer(buf);
	return found;
}

/* ft_leaf_change_entry for ref, which follows its decoded leaf */
static bool
change_entry(FtTree *tree, FtItemRef *ref, int transform, Size start,
			 const char *bytes, Size len)
{
	Page		view = ref->view;

	if (!ft_leaf_change_entry(tree, ref->buf, &ref->view, ref->off,
							  transform, start, bytes, len))
		return false;
	if (ref->view != view)
	{
		ft_leaf_view_unprotect(view);
		ft_leaf_view_protect(ref->view);
	}
	return true;
}

/*
 * Overwrite len bytes at start of the found item (its leaf locked
 * exclusively) with bytes, and log it.
 */
void
ft_item_patch(FtTree *tree, FtItemRef *ref, Size start, const char *bytes,
			  Size len)
{
	Assert(BufferIsValid(ref->buf));
	Assert(start + len <= ref->len);

	if (ref->view != BufferGetPage(ref->buf))
	{
		/* a compressed leaf: into its change area (room was made at find) */
		if (!change_entry(tree, ref, 0, start, bytes, len))
			elog(ERROR, "fractam: block %u of \"%s\" has no room left for a change in place",
				 BufferGetBlockNumber(ref->buf),
				 RelationGetRelationName(tree->rel));
		ref->item = ft_page_item(ref->view, ref->off, &ref->len);
		return;
	}

	START_CRIT_SECTION();
	memcpy(ref->item + start, bytes, len);
	MarkBufferDirty(ref->buf);
	ftxlog_patch(tree->rel, ref->buf, ref->off, (uint16) start, bytes,
				 (uint16) len);
	END_CRIT_SECTION();
}

/* item transforms, by number (FtItemTransformFn) */
static FtItemTransformFn transforms[FT_TRANSFORM_MAX + 1];

void
ft_register_item_transform(int id, FtItemTransformFn fn)
{
	Assert(id > 0 && id <= FT_TRANSFORM_MAX);
	transforms[id] = fn;
}

/* transform id of item (also called by redo) */
char *
ft_item_transformed(int id, const char *item, Size len, Size *newlen)
{
	if (id <= 0 || id > FT_TRANSFORM_MAX || transforms[id] == NULL)
		elog(ERROR, "fractam: item transform %d is not registered", id);
	return transforms[id] (item, len, newlen);
}

/*
 * Replace the item ref holds (leaf locked exclusively) by its transform id
 * (same key, maybe longer), in place, if the leaf has room or once the
 * leaf's owner has made room in it (ft_prune_leaf).  One XLOG_FT_PATCH
 * record that names the transform, which redo repeats on the item: a few
 * bytes, not the new item.  Returns false, changing nothing, if the leaf
 * has no room; the caller then releases the leaf and goes through
 * ft_replace, which can split it.  ref then holds the new item.
 */
bool
ft_item_transform(FtTree *tree, FtItemRef *ref, int id)
{
	Page		page = BufferGetPage(ref->buf);
	Size		newlen;
	char	   *item = ft_item_transformed(id, ref->item, ref->len, &newlen);

	Assert(BufferIsValid(ref->buf));
	Assert(ft_cmp(tree, item, newlen, ref->item, ref->len) == 0);
	Assert(newlen <= ft_tree_max_item_size(tree));
	if (ref->view != page)
	{
		/* a compressed leaf: the change area records the transform */
		pfree(item);
		if (!change_entry(tree, ref, id, 0, NULL, 0))
			return false;
		ref->item = ft_page_item(ref->view, ref->off, &ref->len);
		return true;
	}
	if (PageGetExactFreeSpace(page) + MAXALIGN(ref->len) < MAXALIGN(newlen))
	{
		bool		found;

		/* the leaf's owner may give up or shrink items it holds */
		ft_prune_forget();
		if (!ft_prune_leaf(tree, ref->buf,
						   ft_item_space(newlen) - ft_item_space(ref->len)))
		{
			pfree(item);
			return false;
		}
		/* the leaf was rewritten (the item itself may have changed form) */
		ref->off = ft_leaf_lower_bound(tree, page, item, newlen, &found);
		if (!found)
			elog(ERROR, "fractam: a prune dropped the item being transformed");
		ref->item = ft_page_item(page, ref->off, &ref->len);
		pfree(item);
		item = ft_item_transformed(id, ref->item, ref->len, &newlen);
		if (PageGetExactFreeSpace(page) + MAXALIGN(ref->len) <
			MAXALIGN(newlen))
		{
			pfree(item);
			return false;
		}
	}

	START_CRIT_SECTION();
	if (!PageIndexTupleOverwrite(page, ref->off, (Item) item, newlen))
		elog(PANIC, "fractam: could not overwrite item %u", ref->off);
	MarkBufferDirty(ref->buf);
	ftxlog_transform(tree->rel, ref->buf, ref->off, (uint16) id);
	END_CRIT_SECTION();

	pfree(item);
	ref->item = ft_page_item(page, ref->off, &ref->len);
	Assert(ref->len == newlen);
	return true;
}

void
ft_item_release(FtItemRef *ref)
{
	if (BufferIsValid(ref->buf))
	{
		if (ref->view != BufferGetPage(ref->buf))
			ft_leaf_view_unprotect(ref->view);
		if (ref->borrowed)
			LockBuffer(ref->buf, BUFFER_LOCK_UNLOCK);	/* the hint's pin */
		else
			UnlockReleaseBuffer(ref->buf);
	}
	ref->borrowed = false;
	ref->buf = InvalidBuffer;
	ref->view = NULL;
	ref->item = NULL;
}

/*
 * Share-lock every leaf of an unbuffered tree whose range meets [lo, hi),
 * left to right (the order splits and page deletion lock siblings in),
 * call check(arg, item, len) on each item in [lo, hi) and, if every item
 * passes, done(arg) while all those leaves are still locked: nothing can
 * change in the range meanwhile (writers hold a leaf exclusively while
 * they add or patch an item, and call the tree's leaf_insert_hook then).
 * Returns whether done was called.  check and done must not wait for
 * anything but short-term locks of other relations' pages.
 */
bool
ft_range_all(FtTree *tree, const char *lo, Size lolen, const char *hi,
			 Size hilen, FtItemCheckFn check, void (*done) (void *arg),
			 void *arg)
{
	Buffer	   *bufs;
	int			nbufs = 0;
	int			maxbufs = 8;
	Buffer		buf = descend_to_leaf(tree, lo, lolen, BUFFER_LOCK_SHARE);
	bool		ok = true;
	int			i;

	bufs = palloc(sizeof(Buffer) * maxbufs);
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		FtPageOpaque opaque = FtPageGetOpaque(page);
		bool		found;

		if (nbufs == maxbufs)
		{
			maxbufs *= 2;
			bufs = repalloc(bufs, sizeof(Buffer) * maxbufs);
		}
		bufs[nbufs++] = buf;
		if (!FtPageIsDeleted(opaque))
		{
			OffsetNumber off;
			OffsetNumber end;

			/* a compressed leaf's decoded page: valid until the next one */
			page = ft_leaf_view(tree, buf);
			off = ft_leaf_lower_bound(tree, page, lo, lolen, &found);
			end = ft_leaf_lower_bound(tree, page, hi, hilen, &found);

			for (; off < end; off++)
			{
				Size		len;
				const char *item = ft_page_item(page, off, &len);

				if (!check(arg, item, len))
				{
					ok = false;
					break;
				}
			}
			/* the next leaf starts at this one's high key: past hi? */
			if (!ok || FtPageIsRightmost(opaque) ||
				!ft_must_move_right(tree, page, hi, hilen, true))
				break;
		}
		else if (FtPageIsRightmost(opaque))
			break;
		buf = ft_getleaf(tree, opaque->ft_right, BUFFER_LOCK_SHARE);
	}
	if (ok)
		done(arg);
	for (i = 0; i < nbufs; i++)
		UnlockReleaseBuffer(bufs[i]);
	pfree(bufs);
	return ok;
}

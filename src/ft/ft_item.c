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
#include "miscadmin.h"
#include "wal/ft_xlog.h"

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
	FtDescent	d;
	Page		page;
	OffsetNumber off;
	bool		found;

	Assert(!tree->buffering);
	ft_descend(tree, key, keylen, false, 0, access, &d);
	if (BufferIsValid(d.parent))
		ReleaseBuffer(d.parent);
	if (BufferIsValid(d.parent2))
		ReleaseBuffer(d.parent2);
	if (d.lowkey)
		pfree(d.lowkey);

	page = BufferGetPage(d.buf);
	off = ft_leaf_lower_bound(tree, page, key, keylen, &found);
	if (!found)
	{
		UnlockReleaseBuffer(d.buf);
		ref->buf = InvalidBuffer;
		return false;
	}
	ref->buf = d.buf;
	ref->off = off;
	ref->item = PageGetItem(page, PageGetItemId(page, off));
	ref->len = ItemIdGetLength(PageGetItemId(page, off));
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

	START_CRIT_SECTION();
	memcpy(ref->item + start, bytes, len);
	MarkBufferDirty(ref->buf);
	ftxlog_patch(tree->rel, ref->buf, ref->off, (uint16) start, bytes,
				 (uint16) len);
	END_CRIT_SECTION();
}

void
ft_item_release(FtItemRef *ref)
{
	if (BufferIsValid(ref->buf))
		UnlockReleaseBuffer(ref->buf);
	ref->buf = InvalidBuffer;
	ref->item = NULL;
}

/*-------------------------------------------------------------------------
 *
 * ft_search.c
 *	  Root-to-leaf descent.
 *
 * Readers and writers descend holding one lock at a time (Lehman-Yao):
 * a page reached through a stale downlink may have split, in which case
 * the key lies beyond its high key and we move right.  Splits never move
 * keys left, so this always finds the page.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "utils/rel.h"

static void
set_lowkey(FtDescent *d, const char *key, Size len)
{
	if (d->lowkey)
		pfree(d->lowkey);
	if (len == 0)
	{
		d->lowkey = NULL;
		d->lowkeylen = 0;
	}
	else
	{
		d->lowkey = palloc(len);
		memcpy(d->lowkey, key, len);
		d->lowkeylen = len;
	}
}

/*
 * Lock buf's right siblings until key is within the page's range.
 */
static Buffer
move_right(FtTree *tree, Buffer buf, const char *key, Size len, bool strict,
		   int access, FtDescent *d)
{
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		FtPageOpaque opaque = FtPageGetOpaque(page);
		Size		hlen;
		char	   *hikey;
		BlockNumber right;

		if (FtPageIsDeleted(opaque))
		{
			/* its key range now belongs to its right sibling */
			right = opaque->ft_right;
			UnlockReleaseBuffer(buf);
			buf = ft_getbuf(tree, right, access);
			continue;
		}
		if (key == NULL ? FtPageIsRightmost(opaque) :
			!ft_must_move_right(tree, page, key, len, strict))
			return buf;
		hikey = ft_page_item(page, FT_HIKEY, &hlen);
		set_lowkey(d, hikey, hlen);
		right = opaque->ft_right;
		UnlockReleaseBuffer(buf);
		buf = ft_getbuf(tree, right, access);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Descend to the page at stoplevel (or the root, if the tree is lower)
 * whose range holds key; with strict, the page holding the largest keys
 * < key; key NULL means plus infinity (the rightmost page).  The page is
 * returned locked with access.  If bcopy is given, the
 * level-1 node passed on the way to a leaf is copied into it under its
 * share lock and stays pinned in d->parent.
 */
void
ft_descend_copy(FtTree *tree, const char *key, Size len, bool strict,
				int stoplevel, int access, FtDescent *d, char *bcopy)
{
	BlockNumber blkno;
	uint32		level;
	Buffer		buf;

	d->parent = InvalidBuffer;
	d->childidx = -1;
	d->lowkey = NULL;
	d->lowkeylen = 0;

	for (;;)
	{
		FtPageOpaque ropaque;

		if (tree->rootcache && tree->rootcache->valid)
		{
			blkno = tree->rootcache->root;
			level = tree->rootcache->level;
		}
		else
			ft_read_meta(tree, &blkno, &level);
		buf = ft_getbuf(tree, blkno,
						(int) level <= stoplevel ? access : BUFFER_LOCK_SHARE);
		ropaque = FtPageGetOpaque(BufferGetPage(buf));
		if (FtPageIsRightmost(ropaque) && !FtPageIsDeleted(ropaque) &&
			ropaque->ft_level == level &&
			!(ropaque->ft_flags & FT_PAGE_META))
			break;
		/* the cached root split: look it up again */
		UnlockReleaseBuffer(buf);
		if (!(tree->rootcache && tree->rootcache->valid))
			elog(ERROR, "fractam: metapage of index \"%s\" points to a root that is not one",
				 RelationGetRelationName(tree->rel));
		ft_forget_root(tree);
	}
	for (;;)
	{
		Page		page;
		FtPageOpaque opaque;
		int			childidx;
		BlockNumber child;
		int			curlevel;
		char	   *pkey;
		Size		pkeylen;

		buf = move_right(tree, buf, key, len, strict,
						 (int) level <= stoplevel ? access : BUFFER_LOCK_SHARE, d);
		page = BufferGetPage(buf);
		opaque = FtPageGetOpaque(page);
		curlevel = opaque->ft_level;
		if (curlevel <= stoplevel)
			break;

		childidx = key == NULL ? opaque->ft_nchildren - 1 :
			ft_child_index(tree, page, key, len, strict);
		ft_pivot(page, FtFirstDataOffset(opaque) + childidx, &pkey, &pkeylen);
		if (pkeylen > 0)
			set_lowkey(d, pkey, pkeylen);
		child = ft_child_block(page, childidx);

		if (curlevel == 1)
		{
			/* remember the buffer node above the leaf; keep it pinned */
			if (BufferIsValid(d->parent))
				ReleaseBuffer(d->parent);
			if (bcopy)
				memcpy(bcopy, page, BLCKSZ);
			d->parent = buf;
			d->childidx = childidx;
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		else
			UnlockReleaseBuffer(buf);

		level = curlevel - 1;
		buf = ft_getbuf(tree, child,
						(int) level <= stoplevel ? access : BUFFER_LOCK_SHARE);
		if (FtPageGetOpaque(BufferGetPage(buf))->ft_level != level)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has a downlink to block %u at level %u, but the page is at level %u",
							RelationGetRelationName(tree->rel), child, level,
							FtPageGetOpaque(BufferGetPage(buf))->ft_level)));
	}
	d->buf = buf;
	d->level = FtPageGetOpaque(BufferGetPage(buf))->ft_level;
}

void
ft_descend(FtTree *tree, const char *key, Size len, bool strict,
		   int stoplevel, int access, FtDescent *d)
{
	ft_descend_copy(tree, key, len, strict, stoplevel, access, d, NULL);
}

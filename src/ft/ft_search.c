/*-------------------------------------------------------------------------
 *
 * ft_search.c
 *	  Root-to-leaf descent, and the searches within one page it and the
 *	  other operations use.
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
 * A page on the way down: locked in shared buffers, or (routing pages
 * only) a backend-local copy from the routing cache, see ft_routecache.c.
 */
typedef struct DescentPage
{
	Buffer		buf;			/* InvalidBuffer for a cached copy */
	Page		page;
	BlockNumber blkno;
} DescentPage;

/*
 * Get blkno, expected at level.  With cacheable (the page is only read,
 * under a share lock) a routing page may come from the routing cache, and
 * one read from shared buffers is copied into it.
 */
static void
visit(FtTree *tree, BlockNumber blkno, uint32 level, int access,
	  bool cacheable, DescentPage *p)
{
	p->blkno = blkno;
	if (cacheable && level > FT_TOP_BUFFER_LEVEL &&
		(p->page = ft_routecache_lookup(tree, blkno, level)) != NULL)
	{
		p->buf = InvalidBuffer;
		return;
	}
	/* a leaf through the tree's ring, if it has one (FtTree.strategy) */
	p->buf = level == 0 ? ft_getleaf(tree, blkno, access) :
		ft_getbuf(tree, blkno, access);
	p->page = BufferGetPage(p->buf);
	if (cacheable && FtPageIsRouting(FtPageGetOpaque(p->page)))
		ft_routecache_store(tree, blkno, p->page);
}

static void
leave(DescentPage *p)
{
	if (BufferIsValid(p->buf))
		UnlockReleaseBuffer(p->buf);
	p->buf = InvalidBuffer;
	p->page = NULL;
}

/*
 * Step right from p until key is within the page's range.  If we had to,
 * the cached copy we descended from (from_copy) missed a downlink: drop
 * it, so that the next descent reads the current page.  Returns whether a
 * deleted page was passed.
 */
static bool
move_right(FtTree *tree, DescentPage *p, const char *key, Size len,
		   bool strict, int access, bool cacheable, BlockNumber from_copy,
		   FtDescent *d)
{
	bool		moved = false;
	bool		passed_deleted = false;

	for (;;)
	{
		FtPageOpaque opaque = FtPageGetOpaque(p->page);
		uint32		level = opaque->ft_level;
		Size		hlen;
		char	   *hikey;
		BlockNumber right;

		if (FtPageIsDeleted(opaque))
		{
			/* its key range now belongs to its right sibling */
			right = opaque->ft_right;
			leave(p);
			visit(tree, right, level, access, cacheable, p);
			passed_deleted = true;
			continue;
		}
		if (key == NULL ? FtPageIsRightmost(opaque) :
			!ft_must_move_right(tree, p->page, key, len, strict))
			break;
		hikey = ft_page_item(p->page, FT_HIKEY, &hlen);
		set_lowkey(d, hikey, hlen);
		right = opaque->ft_right;
		leave(p);
		visit(tree, right, level, access, cacheable, p);
		moved = true;
		CHECK_FOR_INTERRUPTS();
	}
	if (moved && from_copy != InvalidBlockNumber)
		ft_routecache_forget(tree, from_copy);
	return passed_deleted;
}

/*
 * Descend to the page at stoplevel (or the root, if the tree is lower)
 * whose range holds key; with strict, the page holding the largest keys
 * < key; key NULL means plus infinity (the rightmost page).  The page is
 * returned locked with access.  If bcopy is given, the
 * level-1 node passed on the way to a leaf is copied into it under its
 * share lock and stays pinned in d->parent; likewise the level-2 buffer
 * node into b2copy, pinned in d->parent2 (copied first: see ft_scan.c).
 * Without pivots, the copies only need to hold the nodes' messages and high
 * keys (ft_copy_node_messages), which for a node without messages saves
 * copying its pivots.
 */
void
ft_descend_copy(FtTree *tree, const char *key, Size len, bool strict,
				int stoplevel, int access, FtDescent *d, char *bcopy,
				char *b2copy, bool pivots)
{
	BlockNumber blkno;
	uint32		level;
	DescentPage p;
	BlockNumber from_copy = InvalidBlockNumber;

	d->parent = InvalidBuffer;
	d->parent2 = InvalidBuffer;
	d->childidx = -1;
	d->lowkey = NULL;
	d->lowkeylen = 0;
	d->parentlow_known = false;
	d->parentlow = NULL;
	d->parentlowlen = 0;

restart:
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
		visit(tree, blkno, level,
			  (int) level <= stoplevel ? access : BUFFER_LOCK_SHARE,
			  (int) level > stoplevel, &p);
		ropaque = FtPageGetOpaque(p.page);
		if (FtPageIsRightmost(ropaque) && !FtPageIsDeleted(ropaque) &&
			ropaque->ft_level == level &&
			!(ropaque->ft_flags & FT_PAGE_META))
			break;
		if (!BufferIsValid(p.buf))
		{
			/* a copy from before the root split: read the page itself */
			ft_routecache_forget(tree, blkno);
			continue;
		}
		/* the cached root split: look it up again */
		leave(&p);
		if (!(tree->rootcache && tree->rootcache->valid))
			elog(ERROR, "fractam: metapage of %s \"%s\" points to a root that is not one",
				 ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel));
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

		if (move_right(tree, &p, key, len, strict,
					   (int) level <= stoplevel ? access : BUFFER_LOCK_SHARE,
					   (int) level > stoplevel, from_copy, d) &&
			((level == 0 && bcopy) || (level <= 1 && b2copy)))
		{
			/*
			 * The page we were sent to was deleted, and the one that took
			 * over its range may sit under another node than the one copied
			 * above it (VACUUM's delete_empty_node and delete_empty_upper),
			 * whose messages the copy lacks: start again from the top.
			 */
			leave(&p);
			if (BufferIsValid(d->parent))
				ReleaseBuffer(d->parent);
			if (BufferIsValid(d->parent2))
				ReleaseBuffer(d->parent2);
			d->parent = InvalidBuffer;
			d->parent2 = InvalidBuffer;
			d->childidx = -1;
			set_lowkey(d, NULL, 0);
			from_copy = InvalidBlockNumber;
			CHECK_FOR_INTERRUPTS();
			goto restart;
		}
		page = p.page;
		opaque = FtPageGetOpaque(page);
		curlevel = opaque->ft_level;
		if (curlevel <= stoplevel)
			break;

		if (curlevel == 1 && bcopy && tree->leaf_range_hook)
		{
			/* the node's own range starts at the lower bound so far */
			if (d->parentlow)
				pfree(d->parentlow);
			d->parentlow = NULL;
			d->parentlowlen = 0;
			if (d->lowkey)
			{
				d->parentlow = palloc(d->lowkeylen);
				memcpy(d->parentlow, d->lowkey, d->lowkeylen);
				d->parentlowlen = d->lowkeylen;
			}
			d->parentlow_known = true;
		}
		childidx = key == NULL ? opaque->ft_nchildren - 1 :
			ft_child_index(tree, page, key, len, strict);
		ft_pivot(page, FtFirstDataOffset(opaque) + childidx, &pkey, &pkeylen);
		if (pkeylen > 0)
			set_lowkey(d, pkey, pkeylen);
		child = ft_child_block(page, childidx);

		if (curlevel == 2 && b2copy)
		{
			/* the upper buffer node: copy it, keep it pinned */
			Assert(BufferIsValid(p.buf));
			if (BufferIsValid(d->parent2))
				ReleaseBuffer(d->parent2);
			if (pivots)
				ft_copy_page(b2copy, page);
			else
				ft_copy_node_messages(b2copy, page);
			d->parent2 = p.buf;
			LockBuffer(p.buf, BUFFER_LOCK_UNLOCK);
			p.buf = InvalidBuffer;
			from_copy = InvalidBlockNumber;
		}
		else if (curlevel == 1)
		{
			/* remember the buffer node above the leaf; keep it pinned */
			Assert(BufferIsValid(p.buf));
			if (BufferIsValid(d->parent))
				ReleaseBuffer(d->parent);
			if (bcopy && pivots)
				ft_copy_page(bcopy, page);
			else if (bcopy)
				ft_copy_node_messages(bcopy, page);
			d->parent = p.buf;
			d->childidx = childidx;
			LockBuffer(p.buf, BUFFER_LOCK_UNLOCK);
			p.buf = InvalidBuffer;
			from_copy = InvalidBlockNumber;
		}
		else
		{
			from_copy = BufferIsValid(p.buf) ? InvalidBlockNumber : p.blkno;
			leave(&p);
		}

		level = curlevel - 1;
		visit(tree, child, level,
			  (int) level <= stoplevel ? access : BUFFER_LOCK_SHARE,
			  (int) level > stoplevel, &p);
		if (FtPageGetOpaque(p.page)->ft_level != level)
			ereport(ERROR,
					(errcode(ft_corrupted_errcode(tree->rel)),
					 errmsg("%s \"%s\" has a downlink to block %u at level %u, but the page is at level %u",
							ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel), child, level,
							FtPageGetOpaque(p.page)->ft_level)));
	}
	Assert(BufferIsValid(p.buf));
	d->buf = p.buf;
	d->level = FtPageGetOpaque(p.page)->ft_level;
}

void
ft_descend(FtTree *tree, const char *key, Size len, bool strict,
		   int stoplevel, int access, FtDescent *d)
{
	ft_descend_copy(tree, key, len, strict, stoplevel, access, d, NULL, NULL,
					false);
}

/*
 * The leaf whose range holds key, locked with access, and nothing else
 * held (what is buffered above it for key is not looked at).
 */
Buffer
ft_descend_to_leaf(FtTree *tree, const char *key, Size len, int access)
{
	return ft_descend_to_level(tree, key, len, 0, access);
}

/*
 * The page at level (or the root, if the tree is lower) whose range holds
 * key, locked with access, and nothing else held.
 */
Buffer
ft_descend_to_level(FtTree *tree, const char *key, Size len, int level,
					int access)
{
	FtDescent	d;

	ft_descend(tree, key, len, false, level, access, &d);
	if (BufferIsValid(d.parent))
		ReleaseBuffer(d.parent);
	if (BufferIsValid(d.parent2))
		ReleaseBuffer(d.parent2);
	if (d.lowkey)
		pfree(d.lowkey);
	return d.buf;
}

/*
 * Compare two keys; an empty key is minus infinity.
 */
int
ft_cmp(FtTree *tree, const char *a, Size alen, const char *b, Size blen)
{
	if (alen == 0)
		return blen == 0 ? 0 : -1;
	if (blen == 0)
		return 1;
	return tree->cmp(tree->cmp_arg, a, alen, b, blen);
}

/*
 * A binary search probing mid of [lo, hi) next probes the middle of
 * [lo, mid) or of [mid + 1, hi): start fetching both items (see
 * ft_prefetch_item).
 */
static inline void
prefetch_next_probes(Page page, OffsetNumber lo, OffsetNumber mid,
					 OffsetNumber hi, Size skip)
{
	if (mid > lo)
		ft_prefetch_item(page, lo + (mid - lo) / 2, skip);
	if (mid + 1 < hi)
		ft_prefetch_item(page, mid + 1 + (hi - mid - 1) / 2, skip);
}

/*
 * On a leaf: the first data offset whose item is >= key (maxoff+1 if
 * none).  *found tells whether that item compares equal.
 */
OffsetNumber
ft_leaf_lower_bound(FtTree *tree, Page page, const char *key, Size len,
					bool *found)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber lo = FtFirstDataOffset(opaque);
	OffsetNumber hi = PageGetMaxOffsetNumber(page) + 1;

	*found = false;
	while (lo < hi)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;
		Size		ilen;
		char	   *item;
		int			c;

		prefetch_next_probes(page, lo, mid, hi, 0);
		item = ft_page_item(page, mid, &ilen);
		c = ft_cmp(tree, item, ilen, key, len);

		if (c < 0)
			lo = mid + 1;
		else
		{
			if (c == 0)
				*found = true;
			hi = mid;
		}
	}
	if (*found)
	{
		Size		ilen;
		char	   *item;

		/* found was set by some probe >= lo; confirm it is lo itself */
		if (lo > PageGetMaxOffsetNumber(page))
			*found = false;
		else
		{
			item = ft_page_item(page, lo, &ilen);
			*found = (ft_cmp(tree, item, ilen, key, len) == 0);
		}
	}
	return lo;
}

/*
 * ft_leaf_lower_bound for an item a direct insert puts into the leaf: its
 * last item is compared first.  Inserts that append (ascending keys, or
 * the end of a group of entries, such as one sensor's (sensor, time)
 * entries in the leaf that holds its newest) then cost one comparison
 * instead of a binary search's ten or so, each a cache miss on the page;
 * others pay one more.
 */
OffsetNumber
ft_leaf_insert_position(FtTree *tree, Page page, const char *key, Size len,
						bool *found)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	if (maxoff >= FtFirstDataOffset(FtPageGetOpaque(page)))
	{
		Size		ilen;
		char	   *item = ft_page_item(page, maxoff, &ilen);

		if (ft_cmp(tree, item, ilen, key, len) < 0)
		{
			*found = false;
			return OffsetNumberNext(maxoff);
		}
	}
	return ft_leaf_lower_bound(tree, page, key, len, found);
}

/*
 * On an internal page: the index of the child whose range holds key.
 * With strict, the child holding the largest keys < key instead (used by
 * backward scans).
 */
int
ft_child_index(FtTree *tree, Page page, const char *key, Size len, bool strict)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);
	int			lo = 0;
	int			hi = opaque->ft_nchildren - 1;

	/* find the last pivot i with pivot <= key (< key if strict) */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo + 1) / 2;
		char	   *pkey;
		Size		pkeylen;
		int			c;

		/* the next probe is in [lo, mid - 1] or in [mid, hi] */
		if (mid - 1 > lo)
			ft_prefetch_item(page, first + lo + (mid - lo) / 2, FT_PIVOT_HDRSZ);
		if (hi > mid)
			ft_prefetch_item(page, first + mid + (hi - mid + 1) / 2, FT_PIVOT_HDRSZ);
		ft_pivot(page, first + mid, &pkey, &pkeylen);
		c = ft_cmp(tree, pkey, pkeylen, key, len);
		if (c < 0 || (c == 0 && !strict))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * On a buffer node: the first message offset whose key is >= key (or >
 * key with upper).  Messages are sorted by (key, MSN).
 */
OffsetNumber
ft_msg_bound(FtTree *tree, Page page, const char *key, Size len, bool upper)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber lo = FtFirstMsgOffset(opaque);
	OffsetNumber hi = PageGetMaxOffsetNumber(page) + 1;

	while (lo < hi)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;
		char	   *mkey;
		Size		mkeylen;
		int			c;

		prefetch_next_probes(page, lo, mid, hi, FT_MSG_HDRSZ);
		ft_msg(page, mid, &mkey, &mkeylen);
		c = ft_cmp(tree, mkey, mkeylen, key, len);
		if (c < 0 || (c == 0 && upper))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The offset where the messages of child childidx begin in a buffer node;
 * childidx == ft_nchildren gives the end of the last child's messages.  A
 * child's slice ends where the next one's begins, so loops over all
 * children need one search per child, not two.
 */
OffsetNumber
ft_slice_start(FtTree *tree, Page page, int childidx)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	char	   *pkey;
	Size		pkeylen;

	Assert(FtPageIsBuffer(opaque));
	Assert(childidx >= 0 && childidx <= opaque->ft_nchildren);
	if (childidx == 0)
		return FtFirstMsgOffset(opaque);
	if (childidx == opaque->ft_nchildren)
		return PageGetMaxOffsetNumber(page) + 1;
	ft_pivot(page, FtFirstDataOffset(opaque) + childidx, &pkey, &pkeylen);
	return ft_msg_bound(tree, page, pkey, pkeylen, false);
}

/*
 * The messages of child childidx occupy offsets [*first, *end).
 */
void
ft_slice_range(FtTree *tree, Page page, int childidx,
			   OffsetNumber *first, OffsetNumber *end)
{
	*first = ft_slice_start(tree, page, childidx);
	*end = ft_slice_start(tree, page, childidx + 1);
}

/*
 * Lehman-Yao: does key lie beyond this page's high key?  With strict
 * (searching for keys < key) only a key strictly above the high key does.
 */
bool
ft_must_move_right(FtTree *tree, Page page, const char *key, Size len,
				   bool strict)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	Size		hlen;
	char	   *hikey;
	int			c;

	if (FtPageIsRightmost(opaque))
		return false;
	hikey = ft_page_item(page, FT_HIKEY, &hlen);
	c = ft_cmp(tree, key, len, hikey, hlen);
	return strict ? c > 0 : c >= 0;
}

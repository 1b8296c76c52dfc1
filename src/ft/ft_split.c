/*-------------------------------------------------------------------------
 *
 * ft_split.c
 *	  Pre-emptive, top-down splits of internal pages and root growth.
 *
 * Nothing ever locks upward.  An operation that needs room in an internal
 * page (a buffer node that must take new pivots, or the root leaf that is
 * full) calls ft_make_room, which walks from the root to the target with
 * exclusive locks, coupling parent and child, and splits every page on the
 * way that could not take one more pivot.  The parent of each split was
 * made roomy the same way one step earlier, so a new pivot always fits.
 * Each split is one WAL record with whole images of the pages involved.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "wal/ft_xlog.h"

static Size
pivot_bytes(Page page)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);
	Size		bytes = 0;
	int			i;

	for (i = 0; i < opaque->ft_nchildren; i++)
		bytes += ft_item_space(ItemIdGetLength(PageGetItemId(page, first + i)));
	return bytes;
}

/*
 * Must this page be split before an operation below it may add a pivot to
 * it?  force: the caller found a buffer node unable to take pivots.
 */
static bool
needs_split(Page page, bool force, Size itemlen)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);

	if (FtPageIsLeaf(opaque))
		return force || PageGetExactFreeSpace(page) < ft_item_space(itemlen);
	if (FtPageIsBuffer(opaque))
		return opaque->ft_nchildren >= 2 &&
			(force || pivot_bytes(page) > FT_BUFFER_PIVOT_LIMIT);
	/* one pivot and a high key always leave room for another pivot */
	return opaque->ft_nchildren >= 2 &&
		PageGetExactFreeSpace(page) < FT_PIVOT_RESERVE;
}

/* buffer-node split also due to fanout; needs the tree's settings */
static bool
node_needs_split(FtTree *tree, Page page, bool force, Size itemlen)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);

	if (FtPageIsBuffer(opaque) &&
		opaque->ft_nchildren >= ft_node_child_limit(tree, opaque->ft_level,
													ft_node_has_messages(page)) &&
		opaque->ft_nchildren >= 2)
		return true;
	return needs_split(page, force, itemlen);
}

/*
 * Build the two halves of an internal page split at child index m into
 * left and right (scratch pages).  The separator is pivot m's key; the
 * right page's first pivot loses its key (minus infinity of that page).
 */
static void
build_internal_halves(FtTree *tree, Page src, int m, BlockNumber rightblk,
					  Page left, Page right, char **sep, Size *seplen)
{
	FtPageOpaque sop = FtPageGetOpaque(src);
	FtPageOpaque lop;
	FtPageOpaque rop;
	OffsetNumber first = FtFirstDataOffset(sop);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(src);
	OffsetNumber msgsplit = InvalidOffsetNumber;
	OffsetNumber off;
	OffsetNumber loff = FirstOffsetNumber;
	OffsetNumber roff = FirstOffsetNumber;
	char	   *key;
	Size		keylen;
	FtPivotHeader *ph;
	int			i;

	ph = ft_pivot(src, first + m, &key, &keylen);
	Assert(keylen > 0);
	*sep = key;
	*seplen = keylen;

	ft_page_init(left, sop->ft_flags, sop->ft_level);
	ft_page_init(right, sop->ft_flags, sop->ft_level);
	lop = FtPageGetOpaque(left);
	rop = FtPageGetOpaque(right);
	lop->ft_msn = rop->ft_msn = sop->ft_msn;
	lop->ft_nflushes = sop->ft_nflushes;
	lop->ft_nflushed = sop->ft_nflushed;
	lop->ft_nsplits = sop->ft_nsplits + 1;
	lop->ft_right = rightblk;
	rop->ft_right = sop->ft_right;

	/* high keys */
	ft_page_add_item(left, key, keylen, loff++);
	if (!FtPageIsRightmost(sop))
	{
		Size		hlen;
		char	   *hikey = ft_page_item(src, FT_HIKEY, &hlen);

		ft_page_add_item(right, hikey, hlen, roff++);
	}

	/* pivots */
	for (i = 0; i < sop->ft_nchildren; i++)
	{
		Size		len;
		char	   *item = ft_page_item(src, first + i, &len);

		if (i < m)
			ft_page_add_item(left, item, len, loff++);
		else if (i == m)
		{
			FtPivotHeader h = *ph;

			/* key becomes the right page's implicit lower bound */
			ft_page_add_item(right, (char *) &h, FT_PIVOT_HDRSZ, roff++);
		}
		else
			ft_page_add_item(right, item, len, roff++);
	}
	lop->ft_nchildren = m;
	rop->ft_nchildren = sop->ft_nchildren - m;

	/* messages: those with key >= separator go right */
	if (FtPageIsBuffer(sop))
	{
		msgsplit = ft_msg_bound(tree, src, key, keylen, false);
		for (off = FtFirstMsgOffset(sop); off <= maxoff; off++)
		{
			Size		len;
			char	   *item = ft_page_item(src, off, &len);

			if (off < msgsplit)
				ft_page_add_item(left, item, len, loff++);
			else
				ft_page_add_item(right, item, len, roff++);
		}
	}
}

/*
 * Choose the child index m at which to split an internal page (children
 * 0..m-1 stay left): the one that leaves the larger half smallest, in
 * bytes of pivots and their message slices.  Pivot m's key moves: it
 * becomes the left half's high key and the right half's first pivot keeps
 * only its header, so each candidate is weighed with that.  Counting the
 * key only once (or counting the first pivot, which has no key, like the
 * others) would put most of a page of long keys on the left and leave a
 * right half with one child; such halves stack up into chains of
 * one-child nodes that add levels without adding fanout.  Ties go to the
 * most even split by children.
 */
static int
choose_split_child(FtTree *tree, Page page)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = FtFirstDataOffset(opaque);
	int			n = opaque->ft_nchildren;
	Size	   *bytes = palloc0(sizeof(Size) * n);
	Size		total = 0;
	Size		acc = 0;
	Size		best_cost = 0;
	int			best = -1;
	int			i;

	Assert(n >= 2);
	for (i = 0; i < n; i++)
	{
		bytes[i] = ft_item_space(ItemIdGetLength(PageGetItemId(page, first + i)));
		if (FtPageIsBuffer(opaque))
		{
			OffsetNumber s;
			OffsetNumber e;
			OffsetNumber off;

			ft_slice_range(tree, page, i, &s, &e);
			for (off = s; off < e; off++)
				bytes[i] += ft_item_space(ItemIdGetLength(PageGetItemId(page, off)));
		}
		total += bytes[i];
	}
	for (i = 1; i < n; i++)
	{
		char	   *key;
		Size		keylen;
		Size		left;
		Size		right;
		Size		cost;

		acc += bytes[i - 1];
		ft_pivot(page, first + i, &key, &keylen);
		left = acc + ft_item_space(keylen);
		right = total - acc - (ft_item_space(FT_PIVOT_HDRSZ + keylen) -
							   ft_item_space(FT_PIVOT_HDRSZ));
		cost = Max(left, right);
		if (best < 0 || cost < best_cost ||
			(cost == best_cost && abs(2 * i - n) < abs(2 * best - n)))
		{
			best = i;
			best_cost = cost;
		}
	}
	pfree(bytes);
	return best;
}

/*
 * Split internal page cbuf, child childidx of parent pbuf (both exclusive).
 * Returns the half whose range holds key, still exclusively locked; the
 * other half is released.
 */
static Buffer
split_internal(FtTree *tree, Buffer pbuf, int childidx, Buffer cbuf,
			   const char *key, Size len)
{
	Page		ppage = BufferGetPage(pbuf);
	Page		cpage = BufferGetPage(cbuf);
	PGAlignedBlock src;
	PGAlignedBlock left;
	PGAlignedBlock right;
	PGAlignedBlock pivot;
	Buffer		rbuf;
	char	   *sep;
	Size		seplen;
	int			m;
	FtPivotHeader *ph = (FtPivotHeader *) pivot.data;
	Buffer		bufs[3];

	memcpy(src.data, cpage, BLCKSZ);
	m = choose_split_child(tree, src.data);
	{
		char	   *k;
		Size		klen;

		ft_pivot(src.data, FtFirstDataOffset(FtPageGetOpaque(src.data)) + m, &k, &klen);
		if (PageGetExactFreeSpace(ppage) < ft_item_space(FT_PIVOT_HDRSZ + klen))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("fractam: no room for a new pivot in block %u of %s \"%s\"",
							BufferGetBlockNumber(pbuf), ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel)),
					 ft_relation_is_index(tree->rel) ?
					 errhint("This can happen with very long keys; try again, or REINDEX.") : 0));
	}
	rbuf = ft_newbuf(tree);
	build_internal_halves(tree, src.data, m, BufferGetBlockNumber(rbuf),
						  left.data, right.data, &sep, &seplen);
	memset(ph, 0, FT_PIVOT_HDRSZ);
	ph->child = BufferGetBlockNumber(rbuf);
	memcpy(pivot.data + FT_PIVOT_HDRSZ, sep, seplen);

	START_CRIT_SECTION();
	memcpy(cpage, left.data, BLCKSZ);
	memcpy(BufferGetPage(rbuf), right.data, BLCKSZ);
	ft_page_add_item(ppage, pivot.data, FT_PIVOT_HDRSZ + seplen,
					 FtFirstDataOffset(FtPageGetOpaque(ppage)) + childidx + 1);
	FtPageGetOpaque(ppage)->ft_nchildren++;
	MarkBufferDirty(pbuf);
	MarkBufferDirty(cbuf);
	MarkBufferDirty(rbuf);
	bufs[0] = pbuf;
	bufs[1] = cbuf;
	bufs[2] = rbuf;
	ftxlog_images(tree->rel, bufs, 3, FT_IMAGES_SPLIT);
	END_CRIT_SECTION();

	if (ft_cmp(tree, key, len, sep, seplen) >= 0)
	{
		UnlockReleaseBuffer(cbuf);
		return rbuf;
	}
	UnlockReleaseBuffer(rbuf);
	return cbuf;
}

/*
 * Split the root (exclusively locked, with the metapage) and put a new
 * root above the two halves.  Works for a root leaf (the new root is a
 * buffer node) and for internal roots (the new root is a buffer node at
 * level 2, a routing node above).
 */
static void
split_root(FtTree *tree, Buffer metabuf, Buffer rootbuf, const char *key,
		   Size keylen)
{
	Page		rpage = BufferGetPage(rootbuf);
	FtPageOpaque ropaque = FtPageGetOpaque(rpage);
	uint16		level = ropaque->ft_level;
	PGAlignedBlock src;
	PGAlignedBlock left;
	PGAlignedBlock right;
	PGAlignedBlock pivot;
	PGAlignedBlock newroot;
	Buffer		rightbuf;
	Buffer		newrootbuf;
	char	   *sep;
	Size		seplen;
	FtPivotHeader *ph = (FtPivotHeader *) pivot.data;
	FtPageOpaque nop;
	Buffer		bufs[4];

	memcpy(src.data, rpage, BLCKSZ);
	rightbuf = ft_newbuf(tree);
	newrootbuf = ft_newbuf(tree);

	if (level == 0)
	{
		/* split a root leaf in half by bytes */
		OffsetNumber maxoff = PageGetMaxOffsetNumber(src.data);
		OffsetNumber off;
		Size		total = 0;
		Size		acc = 0;
		OffsetNumber splitoff;
		char	  **items = palloc(sizeof(char *) * maxoff);
		Size	   *lens = palloc(sizeof(Size) * maxoff);
		int			n = 0;
		FtPageOpaqueData t = *FtPageGetOpaque(src.data);

		Assert(FtPageIsRightmost(&t));
		for (off = FirstOffsetNumber; off <= maxoff; off++)
		{
			items[n] = ft_page_item(src.data, off, &lens[n]);
			total += ft_item_space(lens[n]);
			n++;
		}
		if (n == 1 && key != NULL && keylen > 0 && ft_tree_max_item_size(tree) > FT_MAX_ITEM_SIZE)
		{
			/*
			 * One item too large to share the page with the one to insert
			 * (trees with large items only): the item on one side, the new
			 * one's side empty, the larger key separating them.
			 */
			if (ft_cmp(tree, key, keylen, items[0], lens[0]) > 0)
			{
				splitoff = 1;
				sep = (char *) ft_separator(tree, items[0], lens[0],
											key, keylen, &seplen);
			}
			else
			{
				splitoff = 0;
				sep = (char *) ft_separator(tree, key, keylen,
											items[0], lens[0], &seplen);
			}
		}
		else
		{
			if (n < 2)
				elog(ERROR, "fractam: cannot split a root leaf with %d items", n);
			for (splitoff = 0; splitoff < n - 1; splitoff++)
			{
				acc += ft_item_space(lens[splitoff]);
				if (acc >= total * tree->fillfactor / 100 ||
					acc >= total / 2)
					break;
			}
			splitoff = Max(1, Min(splitoff + 1, n - 1));
			sep = (char *) ft_separator(tree, items[splitoff - 1],
										lens[splitoff - 1], items[splitoff],
										lens[splitoff], &seplen);
		}

		t.ft_right = BufferGetBlockNumber(rightbuf);
		t.ft_nsplits++;
		ft_rewrite_leaf_page(left.data, &t, items, lens, splitoff, sep, seplen);
		t.ft_right = InvalidBlockNumber;
		t.ft_nsplits = 0;
		t.ft_nflushes = 0;
		ft_rewrite_leaf_page(right.data, &t, items + splitoff, lens + splitoff,
							 n - splitoff, NULL, 0);
		/* the new root is the tree's first buffer node */
		ft_page_init(newroot.data, FT_PAGE_BUFFER, 1);
		FtPageGetOpaque(newroot.data)->ft_msn = t.ft_msn;
	}
	else
	{
		int			m = choose_split_child(tree, src.data);

		build_internal_halves(tree, src.data, m, BufferGetBlockNumber(rightbuf),
							  left.data, right.data, &sep, &seplen);
		if (FtLevelIsBuffer(level + 1))
		{
			/*
			 * The tree gets its second buffer level.  Its messages must be
			 * newer than every message and leaf below, so its sequence
			 * continues the old root's.
			 */
			ft_page_init(newroot.data, FT_PAGE_BUFFER, level + 1);
			FtPageGetOpaque(newroot.data)->ft_msn = FtPageGetOpaque(src.data)->ft_msn;
		}
		else
			ft_page_init(newroot.data, FT_PAGE_ROUTING, level + 1);
	}

	/* the new root: (-inf -> left), (sep -> right) */
	nop = FtPageGetOpaque(newroot.data);
	memset(ph, 0, FT_PIVOT_HDRSZ);
	ph->child = BufferGetBlockNumber(rootbuf);
	ft_page_add_item(newroot.data, pivot.data, FT_PIVOT_HDRSZ, FirstOffsetNumber);
	ph->child = BufferGetBlockNumber(rightbuf);
	memcpy(pivot.data + FT_PIVOT_HDRSZ, sep, seplen);
	ft_page_add_item(newroot.data, pivot.data, FT_PIVOT_HDRSZ + seplen,
					 OffsetNumberNext(FirstOffsetNumber));
	nop->ft_nchildren = 2;

	START_CRIT_SECTION();
	memcpy(rpage, left.data, BLCKSZ);
	memcpy(BufferGetPage(rightbuf), right.data, BLCKSZ);
	memcpy(BufferGetPage(newrootbuf), newroot.data, BLCKSZ);
	FtPageGetMeta(BufferGetPage(metabuf))->root = BufferGetBlockNumber(newrootbuf);
	FtPageGetMeta(BufferGetPage(metabuf))->root_level = level + 1;
	MarkBufferDirty(metabuf);
	MarkBufferDirty(rootbuf);
	MarkBufferDirty(rightbuf);
	MarkBufferDirty(newrootbuf);
	bufs[0] = metabuf;
	bufs[1] = newrootbuf;
	bufs[2] = rootbuf;
	bufs[3] = rightbuf;
	ftxlog_images(tree->rel, bufs, 4, FT_IMAGES_NEWROOT);
	END_CRIT_SECTION();

	UnlockReleaseBuffer(rightbuf);
	UnlockReleaseBuffer(newrootbuf);
}

/*
 * A level-2 buffer node must take a pivot when one of its children
 * splits, but it is normally full of messages.  Inserts into it keep
 * FT_PIVOT_ROOM free (buffer_insert); a split below may have used that
 * room since, so make it again by moving messages down (the slices of its
 * heaviest children).  Returns false if that did not work.
 *
 * The leaf flushes that make room in a child for those messages may take
 * the child past its fanout.  They must: the child is often the very node
 * the caller is about to split (a level-1 node that routed many leaves
 * while it buffered nothing, and got messages since, see
 * ft_node_child_limit), and its split needs the pivot room this makes.
 * Refusing would leave a node that cannot split (one child) or whose
 * split leaves one dominant child's slice in one half without room for
 * the pivot of the child's split: "no room for a new pivot".  The child is
 * split right after, on the same path.
 */
static bool
make_pivot_room(FtTree *tree, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	int			tries;

	for (tries = 0; tries < 8; tries++)
	{
		char	   *splitkey = NULL;
		Size		splitkeylen;

		if (PageGetExactFreeSpace(page) >= FT_PIVOT_ROOM(tree))
			return true;
		if (PageGetMaxOffsetNumber(page) < FtFirstMsgOffset(FtPageGetOpaque(page)))
			return false;		/* no messages left to move */
		if (ft_flush_to_node(tree, buf, ft_heaviest_child(tree, page),
							 &splitkey, &splitkeylen, true) == FT_FLUSH_NEED_SPLIT)
		{
			pfree(splitkey);
			return false;
		}
	}
	return PageGetExactFreeSpace(page) >= FT_PIVOT_ROOM(tree);
}

/* Does force ask for the node in buf, at the given level, to split? */
static bool
forced(const FtSplitRequest *force, Buffer buf, bool isroot)
{
	FtPageOpaque opaque = FtPageGetOpaque(BufferGetPage(buf));

	if (force == NULL ||
		(isroot ? (int) opaque->ft_level > force->level :
		 (int) opaque->ft_level != force->level))
		return false;
	return force->blkno == InvalidBlockNumber ||
		(BufferGetBlockNumber(buf) == force->blkno &&
		 opaque->ft_nsplits == force->nsplits);
}

/* Must the root in buf (at level, locked exclusively) split? */
static bool
root_needs_split(FtTree *tree, Buffer buf, uint32 level,
				 const FtSplitRequest *force, Size len)
{
	return node_needs_split(tree, BufferGetPage(buf), forced(force, buf, true),
							len) ||
		(level == 2 && FtPageGetOpaque(BufferGetPage(buf))->ft_nchildren >= 2 &&
		 !make_pivot_room(tree, buf));
}

/*
 * The common case of a forced split: the level-1 node on key's path, below
 * a parent with room for one more pivot.  Descend with share locks (and
 * the routing copies) to that parent, lock it and the node exclusively,
 * and split the node if it still is the one asked for, as nbtree locks
 * only the parent to insert a downlink.  Going from the root with
 * exclusive locks, as ft_make_room must when a parent is full too, would
 * make every concurrent descent wait, once per split: when one level-1
 * node above many appenders fills, each of them asks for its split.
 * Returns false, having changed nothing, where ft_make_room must do it
 * from the root.
 */
static bool
split_under_parent(FtTree *tree, const char *key, Size len,
				   const FtSplitRequest *force)
{
	int			plevel = force->level + 1;
	FtDescent	d;
	Page		ppage;
	int			childidx;
	Buffer		cbuf;

	ft_descend(tree, key, len, false, plevel, BUFFER_LOCK_EXCLUSIVE, &d);
	if (BufferIsValid(d.parent))
		ReleaseBuffer(d.parent);
	if (d.lowkey)
		pfree(d.lowkey);
	ppage = BufferGetPage(d.buf);

	/* the root is the node itself, or the parent has no room */
	if (d.level != plevel ||
		node_needs_split(tree, ppage, false, len) ||
		(plevel == 2 && PageGetExactFreeSpace(ppage) < FT_PIVOT_ROOM(tree)))
	{
		UnlockReleaseBuffer(d.buf);
		return false;
	}
	childidx = ft_child_index(tree, ppage, key, len, false);
	cbuf = ft_getbuf(tree, ft_child_block(ppage, childidx),
					 BUFFER_LOCK_EXCLUSIVE);
	if (node_needs_split(tree, BufferGetPage(cbuf), forced(force, cbuf, false),
						 len))
		cbuf = split_internal(tree, d.buf, childidx, cbuf, key, len);
	UnlockReleaseBuffer(cbuf);
	UnlockReleaseBuffer(d.buf);
	return true;
}

/*
 * Make room on the path to key (see the file header).  force, if not NULL,
 * asks for a node on the path to be split even if it does not look full
 * (see FtSplitRequest): its caller could not fit new pivots, an item or a
 * message in it.
 */
void
ft_make_room(FtTree *tree, const char *key, Size len,
			 const FtSplitRequest *force)
{
	Buffer		metabuf;
	Buffer		buf;
	FtMetaData *meta;
	BlockNumber root;
	uint32		level;

	if (force && force->level == 1 && force->blkno != InvalidBlockNumber &&
		split_under_parent(tree, key, len, force))
		return;

	/*
	 * Only a root split changes the metapage.  Look at the root without
	 * locking the metapage first: holding it exclusively while waiting for
	 * the root's exclusive lock (every descent holds the root shared for a
	 * moment) would stall everything else that needs the metapage, such as
	 * a table's row-id allocation, behind this one insert.
	 */
	for (;;)
	{
		FtPageOpaque opaque;

		ft_read_meta(tree, &root, &level);
		buf = ft_getbuf(tree, root, BUFFER_LOCK_EXCLUSIVE);
		opaque = FtPageGetOpaque(BufferGetPage(buf));

		/*
		 * The root splits into itself (the left half, no longer rightmost)
		 * and a new page, under a new root: so the page is still the root
		 * if it is still the rightmost page of the root's level.
		 */
		if (FtPageIsRightmost(opaque) && opaque->ft_level == level)
			break;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	if (root_needs_split(tree, buf, level, force, len))
	{
		UnlockReleaseBuffer(buf);
		metabuf = ft_getbuf(tree, FT_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE);
		meta = FtPageGetMeta(BufferGetPage(metabuf));
		buf = ft_getbuf(tree, meta->root, BUFFER_LOCK_EXCLUSIVE);

		/*
		 * Whoever split the root meanwhile made room; the caller's retry
		 * comes back if it needs more.
		 */
		if (root_needs_split(tree, buf, meta->root_level, force, len))
			split_root(tree, metabuf, buf, key, len);
		UnlockReleaseBuffer(buf);
		UnlockReleaseBuffer(metabuf);
		return;
	}

	while (level > 1)
	{
		Page		page = BufferGetPage(buf);
		int			childidx = ft_child_index(tree, page, key, len, false);
		Buffer		cbuf = ft_getbuf(tree, ft_child_block(page, childidx),
									 BUFFER_LOCK_EXCLUSIVE);

		CHECK_FOR_INTERRUPTS();
		if (level - 1 == 2)
		{
			/* a level-2 buffer node: it also needs room for a pivot */
			if (node_needs_split(tree, BufferGetPage(cbuf),
								 forced(force, cbuf, false), len) ||
				(!make_pivot_room(tree, cbuf) &&
				 FtPageGetOpaque(BufferGetPage(cbuf))->ft_nchildren >= 2))
			{
				cbuf = split_internal(tree, buf, childidx, cbuf, key, len);
				(void) make_pivot_room(tree, cbuf);
			}
		}
		else if (node_needs_split(tree, BufferGetPage(cbuf),
								  forced(force, cbuf, false), len))
			cbuf = split_internal(tree, buf, childidx, cbuf, key, len);
		UnlockReleaseBuffer(buf);
		buf = cbuf;
		level--;
	}
	UnlockReleaseBuffer(buf);
}

/*-------------------------------------------------------------------------
 *
 * ft_verify.c
 *	  Checking every tree invariant (fractam_verify) and statistics.
 *
 * The caller holds a lock that excludes writers (ShareLock on the index),
 * so the tree is walked top-down with share locks and every key range is
 * known exactly: each page's items must lie in the range its parent's
 * pivots give it, high keys must equal those bounds, sibling links must
 * chain each level left to right, and every buffered message must have an
 * MSN above its target leaf's ft_msn and not above its node's ft_msn.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "utils/rel.h"

#define FT_MAX_LEVELS 32

typedef struct VerifyState
{
	FtTree	   *tree;
	BlockNumber expected[FT_MAX_LEVELS];	/* next page expected per level */
	bool		seen[FT_MAX_LEVELS];
	char	   *view;			/* FT_WIDE_VIEW_MAX: a decoded compressed leaf */
} VerifyState;

static void
corrupt(FtTree *tree, BlockNumber blkno, const char *what)
{
	ereport(ERROR,
			(errcode(ft_corrupted_errcode(tree->rel)),
			 errmsg("fractam_verify: %s \"%s\" block %u: %s",
					ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel), blkno, what)));
}

static int
cmp_bound(FtTree *tree, const char *a, Size alen, const char *b, Size blen)
{
	return ft_cmp(tree, a, alen, b, blen);
}

/*
 * Verify the subtree at blkno whose key range is [low, high) (NULL: open).
 * Returns the page's ft_msn.
 */
static uint64
verify_node(VerifyState *vs, BlockNumber blkno, int level,
			const char *low, Size lowlen, const char *high, Size highlen)
{
	FtTree	   *tree = vs->tree;
	Buffer		buf;
	Page		page;
	FtPageOpaque opaque;
	OffsetNumber first;
	OffsetNumber maxoff;
	OffsetNumber off;
	uint64		msn;
	PGAlignedBlock copy;

	CHECK_FOR_INTERRUPTS();
	if (level >= FT_MAX_LEVELS)
		corrupt(tree, blkno, "tree is too tall");
	buf = ft_getbuf(tree, blkno, BUFFER_LOCK_SHARE);
	page = copy.data;
	if (ft_leaf_is_compressed(BufferGetPage(buf)))
	{
		/* its decoded entries: decoding checks the frame on the way */
		page = vs->view;
		ft_leaf_copy(tree, buf, page);
	}
	else
		memcpy(copy.data, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
	opaque = FtPageGetOpaque(page);
	first = FtFirstDataOffset(opaque);
	maxoff = PageGetMaxOffsetNumber(page);
	msn = opaque->ft_msn;

	if (opaque->ft_level != level)
		corrupt(tree, blkno, psprintf("page is at level %u, its parent expects %d",
									  opaque->ft_level, level));
	/* a wide view's entries go upwards from its special space (ft_page.h) */
	if (FtViewIsWide(page) ?
		((PageHeader) page)->pd_lower > FT_WIDE_SPECIAL ||
		ft_view_bytes(page) < FT_WIDE_ITEMS ||
		ft_view_bytes(page) > FT_WIDE_VIEW_MAX :
		((PageHeader) page)->pd_lower > ((PageHeader) page)->pd_upper)
		corrupt(tree, blkno, "pd_lower is above pd_upper");

	/* sibling chain */
	if (vs->seen[level] && vs->expected[level] != blkno)
		corrupt(tree, blkno,
				psprintf("left sibling links to block %u instead", vs->expected[level]));
	vs->seen[level] = true;
	vs->expected[level] = opaque->ft_right;

	/* high key equals the upper bound the parent gives */
	if (high == NULL)
	{
		if (!FtPageIsRightmost(opaque))
			corrupt(tree, blkno, "page has a right sibling but its parent says it is the last one");
	}
	else
	{
		Size		hlen;
		char	   *hikey;

		if (FtPageIsRightmost(opaque))
			corrupt(tree, blkno, "rightmost page below a bounded parent range");
		hikey = ft_page_item(page, FT_HIKEY, &hlen);
		if (cmp_bound(tree, hikey, hlen, high, highlen) != 0)
			corrupt(tree, blkno, "high key differs from the parent's pivot");
	}

	if (level == 0)
	{
		char	   *prev = NULL;
		Size		prevlen = 0;

		for (off = first; off <= maxoff; off++)
		{
			Size		len;
			char	   *item = ft_page_item(page, off, &len);

			if (len == 0)
				corrupt(tree, blkno, "empty leaf item");
			if (prev && cmp_bound(tree, prev, prevlen, item, len) >= 0)
				corrupt(tree, blkno, psprintf("leaf items out of order at offset %u", off));
			if (low && cmp_bound(tree, item, len, low, lowlen) < 0)
				corrupt(tree, blkno, psprintf("leaf item at offset %u is below the page's lower bound", off));
			if (high && cmp_bound(tree, item, len, high, highlen) >= 0)
				corrupt(tree, blkno, psprintf("leaf item at offset %u is not below the high key", off));
			prev = item;
			prevlen = len;
		}
		return msn;
	}

	/* internal page */
	{
		int			n = opaque->ft_nchildren;
		int			i;
		OffsetNumber msgfirst = first + n;
		char	  **pk = palloc(sizeof(char *) * (n + 1));
		Size	   *pl = palloc(sizeof(Size) * (n + 1));
		BlockNumber *child = palloc(sizeof(BlockNumber) * n);
		uint64	   *childmsn = palloc(sizeof(uint64) * n);

		if (n < 1 || msgfirst - 1 > maxoff)
			corrupt(tree, blkno, "internal page has no children");
		if (!FtLevelIsBuffer(level) && msgfirst <= maxoff)
			corrupt(tree, blkno, "routing page holds messages");
		if (FtLevelIsBuffer(level) != FtPageIsBuffer(opaque))
			corrupt(tree, blkno, psprintf("level-%d page is %sa buffer node",
										  level, FtPageIsBuffer(opaque) ? "" : "not "));

		for (i = 0; i < n; i++)
		{
			FtPivotHeader *ph = ft_pivot(page, first + i, &pk[i], &pl[i]);

			child[i] = ph->child;
			if (i == 0)
			{
				if (pl[0] != 0)
					corrupt(tree, blkno, "first pivot has a key");
				pk[0] = (char *) low;
				pl[0] = lowlen;
				continue;
			}
			if (pl[i] == 0)
				corrupt(tree, blkno, psprintf("pivot %d has no key", i));
			if (i > 1 && cmp_bound(tree, pk[i - 1], pl[i - 1], pk[i], pl[i]) >= 0)
				corrupt(tree, blkno, psprintf("pivots out of order at %d", i));
			if (low && cmp_bound(tree, pk[i], pl[i], low, lowlen) <= 0)
				corrupt(tree, blkno, psprintf("pivot %d is not above the lower bound", i));
			if (high && cmp_bound(tree, pk[i], pl[i], high, highlen) >= 0)
				corrupt(tree, blkno, psprintf("pivot %d is not below the high key", i));
		}
		pk[n] = (char *) high;
		pl[n] = highlen;

		for (i = 0; i < n; i++)
			childmsn[i] = verify_node(vs, child[i], level - 1,
									  pk[i], pl[i], pk[n == i + 1 ? n : i + 1],
									  pl[n == i + 1 ? n : i + 1]);

		/*
		 * messages: sorted by (key, msn), in range, newer than their child
		 * (a leaf's ft_msn is the newest message it absorbed; a level-1
		 * node's the newest message it holds or passed on)
		 */
		if (FtLevelIsBuffer(level))
		{
			char	   *prev = NULL;
			Size		prevlen = 0;
			uint64		prevmsn = 0;
			int			c = 0;

			for (off = msgfirst; off <= maxoff; off++)
			{
				char	   *key;
				Size		keylen;
				FtMsgHeader *hdr = ft_msg(page, off, &key, &keylen);

				if (FtMsgType(hdr) != FT_MSG_INSERT && FtMsgType(hdr) != FT_MSG_DELETE)
					corrupt(tree, blkno, psprintf("message at offset %u has unknown type %u", off, FtMsgType(hdr)));
				if (keylen == 0)
					corrupt(tree, blkno, psprintf("message at offset %u has no key", off));
				if (FtMsgMsn(hdr) > msn)
					corrupt(tree, blkno, psprintf("message at offset %u has MSN " UINT64_FORMAT " above the node's " UINT64_FORMAT,
												  off, FtMsgMsn(hdr), msn));
				if (prev)
				{
					int			k = cmp_bound(tree, prev, prevlen, key, keylen);

					if (k > 0 || (k == 0 && prevmsn >= FtMsgMsn(hdr)))
						corrupt(tree, blkno, psprintf("messages out of (key, MSN) order at offset %u", off));
				}
				if (low && cmp_bound(tree, key, keylen, low, lowlen) < 0)
					corrupt(tree, blkno, psprintf("message at offset %u is below the node's range", off));
				if (high && cmp_bound(tree, key, keylen, high, highlen) >= 0)
					corrupt(tree, blkno, psprintf("message at offset %u is beyond the node's range", off));
				/* which child: advance while key >= next pivot */
				while (c + 1 < n && cmp_bound(tree, key, keylen, pk[c + 1], pl[c + 1]) >= 0)
					c++;
				if (FtMsgMsn(hdr) <= childmsn[c])
					corrupt(tree, blkno,
							psprintf("message at offset %u (MSN " UINT64_FORMAT ") is not newer than its child %u (MSN " UINT64_FORMAT ")",
									 off, FtMsgMsn(hdr), child[c], childmsn[c]));
				prev = key;
				prevlen = keylen;
				prevmsn = FtMsgMsn(hdr);
			}
		}
		pfree(pk);
		pfree(pl);
		pfree(child);
		pfree(childmsn);
	}
	return msn;
}

void
ft_verify(FtTree *tree)
{
	VerifyState vs;
	BlockNumber root;
	uint32		level;
	int			i;

	memset(&vs, 0, sizeof(vs));
	vs.tree = tree;
	vs.view = palloc(FT_WIDE_VIEW_MAX);
	ft_read_meta(tree, &root, &level);
	if (level >= FT_MAX_LEVELS)
		corrupt(tree, FT_METAPAGE_BLKNO, "metapage root level is impossible");
	verify_node(&vs, root, level, NULL, 0, NULL, 0);
	for (i = 0; i <= (int) level; i++)
	{
		if (vs.seen[i] && vs.expected[i] != InvalidBlockNumber)
			corrupt(tree, vs.expected[i],
					psprintf("last page of level %d links to a right sibling", i));
	}
}

void
ft_collect_stats(FtTree *tree, FtStats *stats)
{
	BlockNumber nblocks = ft_nblocks(tree);
	BlockNumber blkno;
	BlockNumber root;
	uint32		level;

	memset(stats, 0, sizeof(FtStats));
	ft_read_meta(tree, &root, &level);
	stats->height = level + 1;
	for (blkno = 0; blkno < nblocks; blkno++)
	{
		Buffer		buf = ReadBuffer(tree->rel, blkno);
		Page		page;
		FtPageOpaque opaque;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (PageIsNew(page))
		{
			stats->free_pages++;
			UnlockReleaseBuffer(buf);
			continue;
		}
		ft_checkpage(tree->rel, buf);
		opaque = FtPageGetOpaque(page);
		stats->splits += opaque->ft_nsplits;
		if (opaque->ft_flags & FT_PAGE_META)
			stats->meta_pages++;
		else if (FtPageIsDeleted(opaque))
			stats->free_pages++;
		else if (FtPageIsLeaf(opaque))
		{
			stats->leaf_pages++;
			if (FtPageIsCompressed(opaque))
			{
				Page		view = ft_leaf_view(tree, buf);
				ItemId		iid = PageGetItemId(page, FtFirstDataOffset(opaque));
				FtFrameHeader *hdr = (FtFrameHeader *) PageGetItem(page, iid);

				stats->compressed_leaf_pages++;
				stats->compressed_leaf_bytes += ItemIdGetLength(iid);
				stats->compressed_leaf_raw_bytes += hdr->rawlen;
				stats->leaf_items += PageGetMaxOffsetNumber(view) -
					FtFirstDataOffset(opaque) + 1;
			}
			else
				stats->leaf_items += PageGetMaxOffsetNumber(page) -
					FtFirstDataOffset(opaque) + 1;
		}
		else if (FtPageIsBuffer(opaque))
		{
			OffsetNumber off;

			int64		nmsgs = 0;

			stats->buffer_pages++;
			for (off = FtFirstMsgOffset(opaque); off <= PageGetMaxOffsetNumber(page); off++)
			{
				nmsgs++;
				stats->buffered_bytes += ItemIdGetLength(PageGetItemId(page, off));
			}
			stats->buffered_messages += nmsgs;
			if (opaque->ft_level >= 2)
			{
				stats->upper_buffer_pages++;
				stats->upper_buffered_messages += nmsgs;
				stats->moves += opaque->ft_nflushes;
				stats->moved_messages += opaque->ft_nflushed;
			}
			else
			{
				stats->flushes += opaque->ft_nflushes;
				stats->flushed_messages += opaque->ft_nflushed;
			}
		}
		else
			stats->routing_pages++;
		UnlockReleaseBuffer(buf);
	}
}

/*-------------------------------------------------------------------------
 *
 * ft_flush.c
 *	  Moving a buffer node's messages into a leaf, or into the buffer node
 *	  one level down.
 *
 * A flush moves ALL pending messages of one child (its "slice") into the
 * leaf in one atomic operation and one WAL record: the leaf is rewritten
 * (and split into as many pages as needed), the buffer node loses the
 * slice and gains the new leaves' pivots, and the leaf's ft_msn becomes
 * the highest MSN it has absorbed.  Because whole slices move, every
 * message still buffered for a leaf has an MSN above the leaf's ft_msn,
 * which is what lets readers merge buffered messages with the leaf and
 * drop those the leaf already contains.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "wal/ft_xlog.h"

/* Most leaves one flush can produce (leaf + slice + one item fit in 3) */
#define FT_MAX_FLUSH_LEAVES 8

/* Most leaves read ahead for one move (see ft_prefetch_move_leaves) */
#define FT_MAX_PREFETCH_LEAVES 4


/*
 * The bytes of each child's slice of messages (bytes[ft_nchildren]).  It
 * walks the slice boundaries once (ft_slice_start: a slice ends where the
 * next begins) instead of searching both ends of every slice: this runs
 * several times per move or flush.
 */
static void
slice_weights(FtTree *tree, Page page, Size *bytes)
{
	FtPageOpaque opaque = FtPageGetOpaque(page);
	OffsetNumber first = ft_slice_start(tree, page, 0);
	int			i;

	for (i = 0; i < opaque->ft_nchildren; i++)
	{
		OffsetNumber end = ft_slice_start(tree, page, i + 1);
		OffsetNumber off;

		Assert(end >= first);
		bytes[i] = 0;
		for (off = first; off < end; off++)
			bytes[i] += ItemIdGetLength(PageGetItemId(page, off));
		first = end;
	}
}

/* the index of the largest of bytes[0 .. n) (the first, on ties) */
static int
heaviest_of(const Size *bytes, int n)
{
	int			best = 0;
	int			i;

	for (i = 1; i < n; i++)
		if (bytes[i] > bytes[best])
			best = i;
	return best;
}

/*
 * The child whose slice of messages takes the most bytes, and (if
 * slicebytes is given) how many.
 */
int
ft_heaviest_slice(FtTree *tree, Page page, Size *slicebytes)
{
	Size		bytes[MaxOffsetNumber];
	int			best;

	slice_weights(tree, page, bytes);
	best = heaviest_of(bytes, FtPageGetOpaque(page)->ft_nchildren);
	if (slicebytes)
		*slicebytes = bytes[best];
	return best;
}

int
ft_heaviest_child(FtTree *tree, Page page)
{
	return ft_heaviest_slice(tree, page, NULL);
}

/*
 * A level-2 node is nearly full: its next move goes to its heaviest child,
 * level-1 node xblk, and if that node has less free space than the move
 * brings (need: the messages' bytes, a little less than the space they
 * take, which is close enough here), it first flushes its heaviest leaves
 * (ft_flush_to_node).  Start reading those leaves now, so that the move,
 * some inserts later, finds them in memory instead of waiting for each in
 * turn.  The caller holds no lock (the level-2 node is not held while we
 * wait for xblk); xblk was prefetched a message or two ago
 * (FT_PREFETCH_MOVE_MSGS), so reading it rarely waits.  If the tree has
 * changed meanwhile, we merely prefetch the wrong pages.
 */
void
ft_prefetch_move_leaves(FtTree *tree, BlockNumber xblk, Size need)
{
	Size		bytes[MaxOffsetNumber];
	Buffer		xbuf = ft_getbuf(tree, xblk, BUFFER_LOCK_SHARE);
	Page		xpage = BufferGetPage(xbuf);
	FtPageOpaque xop = FtPageGetOpaque(xpage);
	Size		avail;
	int			n;

	if (xop->ft_level != 1 || !FtPageIsBuffer(xop) || FtPageIsDeleted(xop))
	{
		/* ft_flush_to_node reports this; here, just do nothing */
		UnlockReleaseBuffer(xbuf);
		return;
	}
	avail = PageGetExactFreeSpace(xpage);
	slice_weights(tree, xpage, bytes);

	/* the leaves the flushes will pick, heaviest first, until there is room */
	for (n = 0; avail < need && n < FT_MAX_PREFETCH_LEAVES; n++)
	{
		int			heavy = heaviest_of(bytes, xop->ft_nchildren);

		if (bytes[heavy] == 0)
			break;
		(void) PrefetchBuffer(tree->rel, MAIN_FORKNUM,
							  ft_child_block(xpage, heavy));
		avail += bytes[heavy];
		bytes[heavy] = 0;
	}
	UnlockReleaseBuffer(xbuf);
}

/* Shortest run of one group before a new item that marks an append point */
#define FT_APPEND_RUN	8

/*
 * Where to cut a leaf that one new item (items[newidx], inserted directly,
 * with no buffered messages) overfills, if the insert looks like one of many
 * appends at this point: -1 for "balanced", 0 for "fill the pages to
 * fillfactor" (as on the rightmost leaf), or the index of the first item of
 * the right page.
 *
 * Keys that grow at many points at once, such as (sensor, time) or (price,
 * time, customer), are appended to the end of their group: the items that
 * share a prefix of key columns with the new item.  A balanced split then
 * leaves the left half of every such leaf half empty for good: nothing is
 * inserted there again.  So, as nbtree's "split after new item" does, a new
 * item at the end of the leaf fills the left page to fillfactor, and a new
 * item that shares more leading columns with the item before it than with
 * the item after it, and ends a run of at least FT_APPEND_RUN items of that
 * group, is cut right after: its group's later appends fill the left page,
 * and the right page keeps the next group.  Random inserts rarely meet
 * either condition (the new item would have to be the last of its group on
 * the page, at the very split), and when they do the cost is one uneven
 * split.
 */
static int
append_cut(FtTree *tree, char **items, Size *lens, int nitems, int newidx)
{
	int			shared_right;
	int			run;

	if (newidx == nitems - 1)
		return 0;
	if (tree->sharedcols == NULL || newidx < FT_APPEND_RUN)
		return -1;
	shared_right = tree->sharedcols(tree->cmp_arg, items[newidx], lens[newidx],
									items[newidx + 1], lens[newidx + 1]);
	for (run = 1; run <= FT_APPEND_RUN; run++)
		if (tree->sharedcols(tree->cmp_arg, items[newidx - run], lens[newidx - run],
							 items[newidx], lens[newidx]) <= shared_right)
			return -1;
	return newidx + 1;
}

/*
 * Cut items into leaf pages.  starts[p] is the index of page p's first
 * item; returns the number of pages.  A rightmost leaf (ascending loads)
 * fills its pages to fillfactor, others are balanced (or cut where
 * append_cut says, cut >= 0); the last page takes whatever remains once it
 * fits, and no flush makes more than FT_MAX_FLUSH_LEAVES pages: -1 if the
 * items need more (a wide frame's, FT_FRAME_LAYOUT_WIDE_*, may).
 */
static int
cut_pages(FtTree *tree, char **items, Size *lens, int nitems,
		  Size last_hikey_space, bool rightmost, int cut, int *starts)
{
	Size		total = 0;
	Size		remaining;
	Size		budget;
	int			npages;
	int			p = 0;
	int			i;
	Size		used = 0;

	for (i = 0; i < nitems; i++)
		total += ft_item_space(lens[i]);
	starts[0] = 0;
	if (total + last_hikey_space <= FT_LEAF_CAPACITY)
		return 1;
	/* pages needed when full; a split always makes at least two */
	npages = Max(2, (total + FT_LEAF_CAPACITY - 1) / FT_LEAF_CAPACITY);
	if (cut > 0)
	{
		Size		left = 0;

		/* right after the new item, if both sides fit on a page */
		for (i = 0; i < cut; i++)
			left += ft_item_space(lens[i]);
		if (left + ft_item_space(lens[cut]) <= FT_LEAF_CAPACITY &&
			total - left + last_hikey_space <= FT_LEAF_CAPACITY)
		{
			starts[1] = cut;
			return 2;
		}
	}
	if (rightmost || cut == 0)
		budget = FT_LEAF_CAPACITY * tree->fillfactor / 100;
	else
		budget = total / npages + 1;
	budget = Max(budget, total / (FT_MAX_FLUSH_LEAVES - 1) + 1);
	budget = Min(budget, FT_LEAF_CAPACITY);

	remaining = total;
	for (i = 0; i < nitems; i++)
	{
		Size		sp = ft_item_space(lens[i]);

		/* room this page must keep for its high key (the next item) */
		Size		hk = (i + 1 < nitems) ?
			ft_item_space(ft_key_len(tree, lens[i + 1])) : last_hikey_space;
		/* once the rest fits on this page, it all goes here */
		bool		rest_fits = (used + remaining + last_hikey_space <= FT_LEAF_CAPACITY);

		if (used > 0 && !rest_fits &&
			(used + sp > budget || used + sp + hk > FT_LEAF_CAPACITY))
		{
			p++;
			if (p >= FT_MAX_FLUSH_LEAVES)
				return -1;
			starts[p] = i;
			used = 0;
		}
		used += sp;
		remaining -= sp;
	}
	return p + 1;
}

/*
 * The pages of a direct insert of items[newidx] into a compressed leaf
 * whose entries (items[0..nitems)) would take more plain leaves than one
 * flush writes (a wide frame's): the entries before it in compressed
 * leaves, those around it in plain leaves, and those after it compressed
 * again (compressed[p] says which page is which;
 * starts as cut_pages).  Later inserts next to this one then go in place,
 * as into the plain leaves a narrow frame is rewritten into; an insert
 * elsewhere in the leaf cuts more plain leaves out of a compressed one.
 * The plain run takes as many full leaves as the flush may write beside
 * one compressed leaf on each side: the fewer it takes, the more often
 * random inserts into the frame re-encode what stays compressed (with half
 * a leaf, a 104 kB frame took 26 cuts until it was all plain, each
 * re-encoding the rest); with six, the sides are small enough for the
 * next insert into either to rewrite it plain, as a narrow frame is.
 * -1 if that takes more than FT_MAX_FLUSH_LEAVES pages.
 */
static int
cut_around(FtTree *tree, char **items, Size *lens, int nitems, int newidx,
		   Size last_hikey_space, int *starts, bool *compressed)
{
	int			a = newidx;
	int			b = newidx + 1;
	Size		used = ft_item_space(lens[newidx]);
	Size		plainmax = (FT_MAX_FLUSH_LEAVES - 2) * (FT_LEAF_CAPACITY -
														FT_LEAF_CAPACITY / 8);
	int			plain[FT_MAX_FLUSH_LEAVES];
	int			np = 0;
	int			n;

	for (;;)
	{
		bool		grew = false;

		if (a > 0 && used + ft_item_space(lens[a - 1]) <= plainmax)
		{
			used += ft_item_space(lens[--a]);
			grew = true;
		}
		if (b < nitems && used + ft_item_space(lens[b]) <= plainmax)
		{
			used += ft_item_space(lens[b++]);
			grew = true;
		}
		if (!grew)
			break;
	}
	if (a > 0)
	{
		np = ft_cut_compressed(tree, items, lens, a,
							   ft_item_space(ft_key_len(tree, lens[a])),
							   starts, FT_MAX_FLUSH_LEAVES - 1, true);
		if (np < 0)
			return -1;
		for (int p = 0; p < np; p++)
			compressed[p] = true;
	}
	n = cut_pages(tree, items + a, lens + a, b - a,
				  b < nitems ? ft_item_space(ft_key_len(tree, lens[b])) :
				  last_hikey_space, false, -1, plain);
	if (n < 0 || np + n > FT_MAX_FLUSH_LEAVES)
		return -1;
	for (int p = 0; p < n; p++)
	{
		starts[np + p] = plain[p] + a;
		compressed[np + p] = false;
	}
	np += n;
	if (b < nitems)
	{
		int			rest[FT_MAX_FLUSH_LEAVES];

		n = ft_cut_compressed(tree, items + b, lens + b, nitems - b,
							  last_hikey_space, rest,
							  FT_MAX_FLUSH_LEAVES - np, true);
		if (n < 0)
			return -1;
		for (int p = 0; p < n; p++)
		{
			starts[np + p] = rest[p] + b;
			compressed[np + p] = true;
		}
		np += n;
	}
	return np;
}

/*
 * A load into a compressed table (FtTree.append_batch): the full rightmost
 * leaf splits with the batch's next items (items[0..nitems) are the leaf's
 * and, last, the one being inserted), so that the pages it leaves behind
 * are compressed, each as full as fill to fit makes it, and only the last,
 * the new append point, is not.  Alone, the leaf would seal uncompressed:
 * compressed, its rows would take a page as they did.
 *
 * Only a run of adjacent items (FtTree.adjacent: consecutive row ids) is
 * sealed, since no insert can land inside it; the items before the last
 * gap stay uncompressed in the first page (*dense_from: the run's first
 * item), where the rows another backend has still to add to its own
 * pseudo-block, in front of ours, go.  Sealed, they would each rewrite a
 * compressed page uncompressed.
 *
 * The items taken are added to items and lens (room for them allocated by
 * the caller from the batch's size); returns their number, 0 if the batch
 * is not for this split or the run brings too little to fill compressed
 * pages (less than two leaves' worth: such a page is two thirds full at
 * least).  At most two frames' worth in all, which an uncompressed cut
 * also takes in one flush, should the compressed one not fit.
 */
static int
take_append_batch(FtTree *tree, char **items, Size *lens, int nitems,
				  const char *extra, int *dense_from)
{
	FtAppendBatch *b = tree->append_batch;
	Size		total = 0;
	Size		run = 0;
	Size		cap = Min(2 * FtFrameCapacity(tree),
						  (FT_MAX_FLUSH_LEAVES - 1) * FT_LEAF_CAPACITY);
	int			from = 0;
	int			m = 0;

	if (b == NULL || b->n < 2 || b->items[0] != extra || tree->adjacent == NULL ||
		nitems == 0 || items[nitems - 1] != extra)
		return 0;
	for (int i = 0; i < nitems; i++)
	{
		if (i > 0 && !tree->adjacent(tree->cmp_arg, items[i - 1], lens[i - 1],
									 items[i], lens[i]))
		{
			from = i;
			run = 0;
		}
		total += ft_item_space(lens[i]);
		run += ft_item_space(lens[i]);
	}
	while (1 + m < b->n && total + ft_item_space(b->lens[1 + m]) <= cap &&
		   tree->adjacent(tree->cmp_arg, b->items[m], b->lens[m],
						  b->items[1 + m], b->lens[1 + m]))
	{
		total += ft_item_space(b->lens[1 + m]);
		run += ft_item_space(b->lens[1 + m]);
		m++;
	}
	if (run < 2 * FT_LEAF_CAPACITY)
		return 0;
	for (int i = 0; i < m; i++)
	{
		items[nitems + i] = b->items[1 + i];
		lens[nitems + i] = b->lens[1 + i];
	}
	*dense_from = from;
	return m;
}

/*
 * The first item of the uncompressed last page when items[0..nitems) (a
 * load's, see take_append_batch) are cut into compressed pages greedily:
 * the last page of that cut if it fits an uncompressed one (it takes more
 * rows there, and is compressed with them later), else only the last item
 * (the append point must be an uncompressed leaf).  0: the cut does not
 * fit one flush.
 */
static int
append_sealed_count(FtTree *tree, char **items, Size *lens, int nitems)
{
	int			trial[FT_MAX_FLUSH_LEAVES];
	int			np = ft_cut_compressed(tree, items, lens, nitems, 0, trial,
									   FT_MAX_FLUSH_LEAVES - 1, false);
	Size		last = 0;

	if (np <= 0)
		return 0;
	for (int i = trial[np - 1]; i < nitems; i++)
		last += ft_item_space(lens[i]);
	if (np > 1 && last <= FT_LEAF_CAPACITY)
		return trial[np - 1];
	return nitems - 1;
}

/*
 * Flush child childidx of buffer node bbuf (exclusively locked) into leaf
 * lbuf (exclusively locked; released here).  extra, if given, is one more
 * item to insert, newer than every buffered message.
 *
 * Returns FT_FLUSH_NEED_SPLIT, having changed nothing, if the buffer node
 * has no room for the pivots of the leaves the flush would create, or if
 * they would take it past its fanout.  over_fanout waives the fanout (only
 * bytes count): for a caller that must move messages out of the node above
 * before this node can be split (see make_pivot_room).
 */
static FtFlushResult flush_child(FtTree *tree, Buffer bbuf, int childidx,
								 Buffer lbuf, const char *extra,
								 Size extralen, bool over_fanout);

FtFlushResult
ft_flush_child(FtTree *tree, Buffer bbuf, int childidx, Buffer lbuf,
			   const char *extra, Size extralen, bool over_fanout)
{
	Page		lpage = BufferGetPage(lbuf);
	FtCodecId	codec = tree->codec;
	int			level = tree->codec_level;
	FtFlushResult result;

	/*
	 * A wide frame of a relation compressed no more (ALTER ... RESET) may
	 * not fit the plain leaves of one flush: such a leaf stays compressed
	 * with its own method (as ft_leaf_recompress keeps VACUUM's rewrites).
	 */
	if (codec != FT_CODEC_NONE || !ft_leaf_is_wide(lpage))
		return flush_child(tree, bbuf, childidx, lbuf, extra, extralen,
						   over_fanout);
	if (!ft_codec_lookup(ft_codec_name((FtCodecId) FtPageGetOpaque(lpage)->ft_codec),
						 &tree->codec, &tree->codec_level))
		elog(ERROR, "fractam: unknown codec %u", FtPageGetOpaque(lpage)->ft_codec);
	PG_TRY();
	{
		result = flush_child(tree, bbuf, childidx, lbuf, extra, extralen,
							 over_fanout);
	}
	PG_FINALLY();
	{
		tree->codec = codec;
		tree->codec_level = level;
	}
	PG_END_TRY();
	return result;
}

static FtFlushResult
flush_child(FtTree *tree, Buffer bbuf, int childidx, Buffer lbuf,
			const char *extra, Size extralen, bool over_fanout)
{
	Page		bpage = BufferGetPage(bbuf);
	Page		lpage = BufferGetPage(lbuf);
	FtPageOpaque lopaque = FtPageGetOpaque(lpage);
	PGAlignedBlock bcopy;
	FtViewBuf	lcopybuf;
	char	   *lcopy = lcopybuf.data;
	OffsetNumber first;
	OffsetNumber end;
	int			maxitems;
	char	  **items;
	Size	   *lens;
	int			nitems;
	uint64		maxmsn;
	int			starts[FT_MAX_FLUSH_LEAVES];
	int			npages;
	char	   *hikeys[FT_MAX_FLUSH_LEAVES];
	Size		hikeylens[FT_MAX_FLUSH_LEAVES];
	char	   *pivots[FT_MAX_FLUSH_LEAVES];
	Size		pivotlens[FT_MAX_FLUSH_LEAVES];
	Buffer		bufs[FT_MAX_FLUSH_LEAVES];
	Size		freed = 0;
	Size		needed = 0;
	char	   *oldhikey = NULL;
	Size		oldhikeylen = 0;
	BlockNumber oldright = lopaque->ft_right;
	FtPageOpaqueData template;
	OffsetNumber off;
	int			p;
	int			nsealed = 0;
	int			sealed_from = 0;	/* items before it are not sealed */
	int			ntaken = 0;
	bool		append_split = false;	/* a direct insert at its group's end */
	bool		must_seal = false;	/* too many entries for plain leaves */
	bool		around = false; /* ... and a direct insert: cut_around */
	bool		page_compressed[FT_MAX_FLUSH_LEAVES];	/* if around */
	bool		images;

	Assert(ft_child_block(bpage, childidx) == BufferGetBlockNumber(lbuf));
	ft_slice_range(tree, bpage, childidx, &first, &end);

	/* work from copies: both pages are rewritten in place below */
	ft_copy_page(bcopy.data, bpage);
	if (ft_leaf_is_wide(lpage))
	{
		/* a wide frame decoded: larger than lcopybuf (flushes do not nest) */
		static char *wide_lcopy = NULL;

		if (wide_lcopy == NULL)
			wide_lcopy = MemoryContextAlloc(TopMemoryContext, FT_WIDE_VIEW_MAX);
		lcopy = wide_lcopy;
	}
	ft_leaf_copy(tree, lbuf, lcopy);
	if (!FtPageIsRightmost(lopaque))
		oldhikey = ft_page_item(lcopy, FT_HIKEY, &oldhikeylen);

	maxitems = PageGetMaxOffsetNumber(lcopy) + (end - first) + 2;
	if (tree->append_batch)
		maxitems += tree->append_batch->n;
	items = palloc(sizeof(char *) * maxitems);
	lens = palloc(sizeof(Size) * maxitems);
	{
		FtMsgRun	run = {bcopy.data, first, end};

		nitems = ft_merge_leaf(tree, lcopy, &run, 1,
							   extra, extralen, items, lens, &maxmsn);
	}

	/* a compressed table's load splits its right edge into compressed pages */
	if (tree->append_batch && tree->codec != FT_CODEC_NONE &&
		!tree->buffering && extra != NULL && first == end &&
		oldhikey == NULL && !FtPageIsCompressed(lopaque))
	{
		ntaken = take_append_batch(tree, items, lens, nitems, extra,
								   &sealed_from);
		nitems += ntaken;
	}

	{
		int			cut = -1;
		int			newidx = nitems;

		if (ntaken > 0)
		{
			nsealed = append_sealed_count(tree, items + sealed_from,
										  lens + sealed_from,
										  nitems - sealed_from);
			nsealed = nsealed > 0 ? sealed_from + nsealed : 0;
		}
		/* a direct insert into a full leaf: is it an append point? */
		else if (extra != NULL && first == end)
		{
			for (newidx = 0; newidx < nitems; newidx++)
				if (items[newidx] == extra)
					break;
			if (newidx < nitems)
				cut = append_cut(tree, items, lens, nitems, newidx);
			append_split = (cut == 0);
		}
		npages = cut_pages(tree, items, lens, nitems,
						   oldhikey ? ft_item_space(oldhikeylen) : 0,
						   oldhikey == NULL, cut, starts);

		/*
		 * A wide frame's entries (and a direct insert, or a few messages)
		 * may not fit the uncompressed leaves one flush writes: they stay
		 * compressed, in compressed halves, however they came in.
		 */
		if (npages < 0)
		{
			if (!FtPageIsCompressed(lopaque))
				elog(ERROR, "fractam: flush would produce more than %d leaves",
					 FT_MAX_FLUSH_LEAVES);
			must_seal = true;
			npages = 0;

			/*
			 * A direct insert into an index's wide leaf: not the whole
			 * frame re-encoded at this insert and at each one after it, but
			 * the entries around the new one in a plain leaf of their own,
			 * where the next inserts nearby go in place.
			 */
			if (extra != NULL && first == end && newidx < nitems &&
				tree->frame_chgcap == 0)
			{
				npages = cut_around(tree, items, lens, nitems, newidx,
									oldhikey ? ft_item_space(oldhikeylen) : 0,
									starts, page_compressed);
				around = (npages > 0);
				must_seal = !around;
				npages = Max(npages, 0);
			}
		}

		/*
		 * With compression, the items of a cold leaf (buffered messages came
		 * in, and no direct insert) go into compressed leaves when they no
		 * longer fit the uncompressed page (instead of splitting it), or
		 * when the leaf is compressed already; for the rightmost leaf all
		 * but its last page, the append point.  Until then a flush changes
		 * the uncompressed leaf in place and logs a delta, not a page image,
		 * and compresses nothing: a leaf is compressed once it is full,
		 * then takes flushes (each re-encoding it) until its frame is full
		 * and it splits into compressed halves.  A leaf that takes direct
		 * inserts stays (or becomes) uncompressed until it cools and fills.
		 * (The pages a direct append point leaves behind are not
		 * compressed here: alone, each would hold no more than the
		 * uncompressed page it came from.  The caller merges runs of them
		 * into compressed leaves, ft_seal.c; a table's load brings the rows
		 * that fill compressed pages along: take_append_batch, above.)
		 */
		if (tree->codec != FT_CODEC_NONE && nitems > 0 &&
			end > first && extra == NULL &&
			(npages > 1 || FtPageIsCompressed(lopaque)) && !must_seal)
			nsealed = (oldhikey != NULL) ? nitems : starts[npages - 1];
		if (must_seal)
			nsealed = nitems;

		/*
		 * A table's compressed leaf (never the rightmost) stays compressed
		 * when a change of one of its rows rewrites it (its change area or
		 * its decoded page is full: a bulk DELETE expands many row
		 * headers), split into compressed halves with room for more.  A new
		 * row (a row id given back and reused) makes it uncompressed, as a
		 * direct insert does an index's leaf: the next VACUUM compresses
		 * it again, rather than each such insert re-encoding it.
		 */
		if (tree->codec != FT_CODEC_NONE && tree->frame_chgcap > 0 &&
			nitems > 0 && oldhikey != NULL && FtPageIsCompressed(lopaque) &&
			extra != NULL && first == end &&
			nitems == PageGetMaxOffsetNumber(lcopy) -
			FtFirstDataOffset(FtPageGetOpaque(lcopy)) + 1)
			nsealed = nitems;
		if (nsealed > 0)
		{
			int			ncomp;
			int			plain[FT_MAX_FLUSH_LEAVES];
			int			nplain = npages;
			Size		tailhk = nsealed < nitems ?
				ft_item_space(ft_key_len(tree, lens[nsealed])) :
				(oldhikey ? ft_item_space(oldhikeylen) : 0);

			int			lead = 0;

			memcpy(plain, starts, sizeof(int) * npages);
			/* a load's items before its sealed run: uncompressed pages */
			if (sealed_from > 0)
				lead = cut_pages(tree, items, lens, sealed_from,
								 ft_item_space(ft_key_len(tree, lens[sealed_from])),
								 false, -1, starts);
			if (lead < 0)
				elog(ERROR, "fractam: flush would produce more than %d leaves",
					 FT_MAX_FLUSH_LEAVES);
			/* pages that will take more flushes share the items evenly */
			ncomp = ft_cut_compressed(tree, items + sealed_from,
									  lens + sealed_from,
									  nsealed - sealed_from, tailhk,
									  starts + lead, FT_MAX_FLUSH_LEAVES - lead,
									  oldhikey != NULL);
			if (ncomp >= 0)
			{
				for (p = lead; p < lead + ncomp; p++)
					starts[p] += sealed_from;
				ncomp += lead;
			}
			if (ncomp >= 0 && nsealed < nitems)
			{
				int			tail[FT_MAX_FLUSH_LEAVES];
				int			rest = cut_pages(tree, items + nsealed, lens + nsealed,
											 nitems - nsealed,
											 oldhikey ? ft_item_space(oldhikeylen) : 0,
											 oldhikey == NULL, -1, tail);

				if (rest < 0 || ncomp + rest > FT_MAX_FLUSH_LEAVES)
					ncomp = -1;
				else
				{
					for (p = 0; p < rest; p++)
						starts[ncomp + p] = tail[p] + nsealed;
					npages = ncomp + rest;
				}
			}
			else if (ncomp >= 0)
				npages = ncomp;

			/*
			 * Compressed pages hold at least what uncompressed ones do,
			 * unless the entries do not compress at all (the frame's own
			 * bytes then cost room): if the compressed cut needs more
			 * leaves than a flush writes, write the uncompressed cut,
			 * which fits.
			 */
			if (ncomp < 0)
			{
				if (must_seal)
					elog(ERROR, "fractam: flush would produce more than %d leaves",
						 FT_MAX_FLUSH_LEAVES);
				memcpy(starts, plain, sizeof(int) * nplain);
				npages = nplain;
				nsealed = 0;
			}
		}
	}

	/* pivots for the new right pages, and room for them in the node */
	for (off = first; off < end; off++)
		freed += ft_item_space(ItemIdGetLength(PageGetItemId(bpage, off)));
	for (p = 1; p < npages; p++)
	{
		Size		keylen;
		const char *key = ft_separator(tree, items[starts[p] - 1],
									   lens[starts[p] - 1], items[starts[p]],
									   lens[starts[p]], &keylen);
		FtPivotHeader *ph;

		pivotlens[p - 1] = FT_PIVOT_HDRSZ + keylen;
		pivots[p - 1] = palloc0(pivotlens[p - 1]);
		memcpy(pivots[p - 1] + FT_PIVOT_HDRSZ, key, keylen);
		ph = (FtPivotHeader *) pivots[p - 1];
		ph->child = InvalidBlockNumber; /* set once allocated */
		needed += ft_item_space(pivotlens[p - 1]);
		/* the left page's high key is the same key */
		hikeys[p - 1] = pivots[p - 1] + FT_PIVOT_HDRSZ;
		hikeylens[p - 1] = keylen;
		if (key != items[starts[p]])
			pfree((char *) key);
	}
	hikeys[npages - 1] = oldhikey;
	hikeylens[npages - 1] = oldhikeylen;

	/*
	 * The node must have room for the new pivots, and should not exceed its
	 * fanout (larger while it buffers nothing once this slice is gone, see
	 * ft_node_child_limit); but a node with a single child cannot be split,
	 * so it takes the pivots anyway (the next ft_make_room on its path
	 * splits it).
	 */
	if (npages > 1 &&
		(PageGetExactFreeSpace(bpage) + freed < needed ||
		 (!over_fanout && FtPageGetOpaque(bpage)->ft_nchildren >= 2 &&
		  FtPageGetOpaque(bpage)->ft_nchildren + npages - 1 >
		  ft_node_child_limit(tree, FtPageGetOpaque(bpage)->ft_level,
							  PageGetMaxOffsetNumber(bpage) + 1 -
							  FtFirstMsgOffset(FtPageGetOpaque(bpage)) >
							  end - first))))
	{
		UnlockReleaseBuffer(lbuf);
		for (p = 0; p < npages - 1; p++)
			pfree(pivots[p]);
		pfree(items);
		pfree(lens);
		return FT_FLUSH_NEED_SPLIT;
	}

	/* the leaf_insert_hook of the batch's items taken (leaf_insert ran extra's) */
	for (int i = 0; i < ntaken; i++)
		if (tree->leaf_insert_hook)
			tree->leaf_insert_hook(tree, items[nitems - ntaken + i],
								   lens[nitems - ntaken + i]);
	if (tree->append_batch)
		tree->append_batch->taken = ntaken;

	bufs[0] = lbuf;
	for (p = 1; p < npages; p++)
	{
		bufs[p] = ft_newleaf(tree);
		((FtPivotHeader *) pivots[p - 1])->child = BufferGetBlockNumber(bufs[p]);
	}
	ftxlog_reserve(tree->rel, npages + 1);

	template = *lopaque;
	if (maxmsn > template.ft_msn)
		template.ft_msn = maxmsn;
	if (end > first)
		template.ft_nflushes++;

	/*
	 * A compressed leaf, read or written, is logged as a whole image: redo
	 * never compresses, and a frame cannot be changed by a delta.
	 */
	images = nsealed > 0 || FtPageIsCompressed(lopaque);
	if (images)
	{
		char	   *imgs[FT_MAX_FLUSH_LEAVES];

		/* build every image first: nothing may fail in the critical section */
		for (p = 0; p < npages; p++)
		{
			int			nthis = (p + 1 < npages ? starts[p + 1] : nitems) - starts[p];
			FtPageOpaqueData t = template;

			t.ft_right = (p + 1 < npages) ? BufferGetBlockNumber(bufs[p + 1]) : oldright;
			if (p > 0)
			{
				t.ft_nsplits = 0;
				t.ft_nflushes = 0;
			}
			else if (npages > 1)
				t.ft_nsplits++;
			imgs[p] = palloc(BLCKSZ);
			if (around ? page_compressed[p] :
				(starts[p] >= sealed_from && starts[p] < nsealed))
			{
				if (!ft_leaf_compress(tree, imgs[p], &t, items + starts[p],
									  lens + starts[p], nthis, hikeys[p],
									  hikeylens[p]))
					elog(ERROR, "fractam: %d entries cut to fit a compressed leaf do not fit it",
						 nthis);
			}
			else
				ft_rewrite_leaf_page(imgs[p], &t, items + starts[p],
									 lens + starts[p], nthis, hikeys[p],
									 hikeylens[p]);
		}

		START_CRIT_SECTION();
		for (p = 0; p < npages; p++)
		{
			memcpy(BufferGetPage(bufs[p]), imgs[p], BLCKSZ);
			MarkBufferDirty(bufs[p]);
		}
		ft_apply_flush_to_buffer_node(bpage, first, end - first,
									  npages > 1 ?
									  FtFirstDataOffset(FtPageGetOpaque(bpage)) + childidx + 1 :
									  InvalidOffsetNumber,
									  pivots, pivotlens, npages - 1, end > first);
		MarkBufferDirty(bbuf);
		ftxlog_flush(tree->rel, bbuf, first, end - first,
					 npages > 1 ?
					 FtFirstDataOffset(FtPageGetOpaque(bpage)) + childidx + 1 :
					 InvalidOffsetNumber,
					 pivots, pivotlens, npages - 1, bufs, npages, end > first,
					 NULL, 0);
		END_CRIT_SECTION();

		for (p = 0; p < npages; p++)
		{
			UnlockReleaseBuffer(bufs[p]);
			pfree(imgs[p]);
		}
		for (p = 0; p < npages - 1; p++)
			pfree(pivots[p]);
		pfree(items);
		pfree(lens);
		return FT_FLUSH_DONE;
	}

	if (npages == 1)
	{
		/*
		 * The leaf does not split: change it in place and log only what
		 * changed (a few hundred bytes instead of a page image).
		 */
		Size		deltalen;
		char	   *delta = ft_build_leaf_delta(lcopy, items, lens,
												nitems, NULL, 0,
												InvalidBlockNumber,
												template.ft_msn, end > first,
												&deltalen);

		START_CRIT_SECTION();
		ft_apply_leaf_delta(lpage, delta);
		MarkBufferDirty(lbuf);
		ft_apply_flush_to_buffer_node(bpage, first, end - first, InvalidOffsetNumber,
									  NULL, NULL, 0, end > first);
		MarkBufferDirty(bbuf);
		ftxlog_flush(tree->rel, bbuf, first, end - first, InvalidOffsetNumber,
					 NULL, NULL, 0, bufs, 1, end > first, delta, deltalen);
		END_CRIT_SECTION();

		UnlockReleaseBuffer(lbuf);
		pfree(delta);
		pfree(items);
		pfree(lens);
		return FT_FLUSH_DONE;
	}

	/*
	 * The leaf splits.  It keeps the first part, changed in place and logged
	 * as a delta like an unsplit leaf (often much less than its image: an
	 * append point keeps nearly all of it); the new leaves are logged as
	 * whole images.
	 */
	{
		Size		deltalen;
		char	   *delta = ft_build_leaf_delta(lcopy, items, lens,
												starts[1], hikeys[0],
												hikeylens[0],
												BufferGetBlockNumber(bufs[1]),
												template.ft_msn, end > first,
												&deltalen);

		START_CRIT_SECTION();
		ft_apply_leaf_delta(lpage, delta);
		MarkBufferDirty(lbuf);
		for (p = 1; p < npages; p++)
		{
			int			nthis = (p + 1 < npages ? starts[p + 1] : nitems) - starts[p];
			FtPageOpaqueData t = template;

			t.ft_right = (p + 1 < npages) ? BufferGetBlockNumber(bufs[p + 1]) : oldright;
			t.ft_nsplits = 0;
			t.ft_nflushes = 0;
			ft_rewrite_leaf_page(BufferGetPage(bufs[p]), &t,
								 items + starts[p], lens + starts[p], nthis,
								 hikeys[p], hikeylens[p]);
			MarkBufferDirty(bufs[p]);
		}
		ft_apply_flush_to_buffer_node(bpage, first, end - first,
									  FtFirstDataOffset(FtPageGetOpaque(bpage)) + childidx + 1,
									  pivots, pivotlens, npages - 1, end > first);
		MarkBufferDirty(bbuf);
		ftxlog_flush(tree->rel, bbuf, first, end - first,
					 FtFirstDataOffset(FtPageGetOpaque(bpage)) + childidx + 1,
					 pivots, pivotlens, npages - 1, bufs, npages, end > first,
					 delta, deltalen);
		END_CRIT_SECTION();
		pfree(delta);
	}

	/*
	 * An append point split, the new item going right of the full pages it
	 * leaves behind: the caller may merge them into a compressed leaf
	 * (ft_seal.c).  A table's appends are rows of consecutive row ids; an
	 * index's, a new entry at the end of its leaf (append_cut), the end of
	 * its group of entries or of the whole tree.
	 */
	if (tree->seal_appends && tree->codec != FT_CODEC_NONE &&
		tree->append_batch == NULL && extra != NULL && first == end &&
		(tree->adjacent != NULL ? !tree->buffering : append_split))
	{
		for (int i = starts[npages - 1]; i < nitems; i++)
			if (items[i] == extra)
				tree->sealed_split = true;
	}

	for (p = 0; p < npages; p++)
		UnlockReleaseBuffer(bufs[p]);
	for (p = 0; p < npages - 1; p++)
		pfree(pivots[p]);
	pfree(items);
	pfree(lens);
	return FT_FLUSH_DONE;
}

/* a message of an upper node's slice, while choosing what to move */
typedef struct MoveCand
{
	OffsetNumber off;
	uint64		msn;
	Size		space;
	bool		chosen;
} MoveCand;

static int
cand_msn_cmp(const void *a, const void *b)
{
	const MoveCand *ca = *(MoveCand *const *) a;
	const MoveCand *cb = *(MoveCand *const *) b;

	return (ca->msn < cb->msn) ? -1 : (ca->msn > cb->msn) ? 1 : 0;
}

/*
 * Move the messages of upper node ubuf at [first, end) (one child's
 * slice) into that child, lower buffer node xbuf; both exclusively locked.
 * If not all fit, the OLDEST that fit move: the ones left behind are newer
 * than every message below them, which is all readers rely on (see
 * README).  Returns the number moved.
 */
static int
move_messages(FtTree *tree, Buffer ubuf, OffsetNumber first,
			  OffsetNumber end, Buffer xbuf)
{
	Page		upage = BufferGetPage(ubuf);
	Page		xpage = BufferGetPage(xbuf);
	FtPageOpaque xop = FtPageGetOpaque(xpage);
	int			n = end - first;
	MoveCand   *cands = palloc(sizeof(MoveCand) * n);
	MoveCand  **bymsn = palloc(sizeof(MoveCand *) * n);
	Size		room = PageGetExactFreeSpace(xpage);
	Size		total = 0;
	OffsetNumber *moved = palloc(sizeof(OffsetNumber) * n);
	int			nmoved = 0;
	char	   *payload;
	Size		payloadlen = 0;
	char	   *p;
	OffsetNumber xi = FtFirstMsgOffset(xop);
	OffsetNumber xmax = PageGetMaxOffsetNumber(xpage);
	uint64		maxmsn = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		char	   *key;
		Size		keylen;
		FtMsgHeader *hdr = ft_msg(upage, first + i, &key, &keylen);

		cands[i].off = first + i;
		cands[i].msn = FtMsgMsn(hdr);
		cands[i].space = ft_item_space(FT_MSG_HDRSZ + keylen);
		cands[i].chosen = false;
		bymsn[i] = &cands[i];
		total += cands[i].space;
	}
	if (total <= room)
	{
		for (i = 0; i < n; i++)
			cands[i].chosen = true;
	}
	else
	{
		Size		used = 0;

		qsort(bymsn, n, sizeof(MoveCand *), cand_msn_cmp);
		for (i = 0; i < n && used + bymsn[i]->space <= room; i++)
		{
			bymsn[i]->chosen = true;
			used += bymsn[i]->space;
		}
	}

	/*
	 * Target offsets: each message goes after the lower node's messages
	 * with keys <= its own (those are older), and after the moved ones
	 * before it.
	 */
	payload = palloc(BLCKSZ + n * 2 * sizeof(uint16));
	p = payload;
	for (i = 0; i < n; i++)
	{
		char	   *key;
		Size		keylen;
		char	   *item;
		Size		itemlen;
		uint16		hdr[2];

		if (!cands[i].chosen)
			continue;
		item = ft_page_item(upage, cands[i].off, &itemlen);
		ft_msg(upage, cands[i].off, &key, &keylen);
		while (xi <= xmax)
		{
			char	   *xkey;
			Size		xkeylen;

			ft_msg(xpage, xi, &xkey, &xkeylen);
			if (ft_cmp(tree, xkey, xkeylen, key, keylen) > 0)
				break;
			xi++;
		}
		hdr[0] = xi + nmoved;
		hdr[1] = (uint16) itemlen;
		memcpy(p, hdr, sizeof(hdr));
		p += sizeof(hdr);
		memcpy(p, item, itemlen);
		p += itemlen;
		moved[nmoved++] = cands[i].off;
		if (cands[i].msn > maxmsn)
			maxmsn = cands[i].msn;
	}
	payloadlen = p - payload;

	if (nmoved > 0)
	{
		START_CRIT_SECTION();
		ft_apply_move_lower(xpage, payload, nmoved, maxmsn);
		ft_apply_move_upper(upage, moved, nmoved);
		MarkBufferDirty(xbuf);
		MarkBufferDirty(ubuf);
		ftxlog_move(tree->rel, ubuf, moved, nmoved, xbuf, payload, payloadlen,
					maxmsn);
		END_CRIT_SECTION();
	}
	pfree(cands);
	pfree(bymsn);
	pfree(moved);
	pfree(payload);
	return nmoved;
}

/*
 * Flush child xidx of upper buffer node ubuf (level 2, exclusively locked)
 * into that child, a level-1 buffer node: make room there by flushing its
 * heaviest children into their leaves, then move the slice (or its oldest
 * messages, if the lower node cannot take it all even then).
 *
 * Returns FT_FLUSH_NEED_SPLIT if the lower node must be split first (a
 * leaf flush needs room for pivots it does not have); *splitkey (palloc'd)
 * then is a key on the path to it.  over_fanout lets the lower node's leaf
 * flushes take it past its fanout (ft_flush_child).
 */
FtFlushResult
ft_flush_to_node(FtTree *tree, Buffer ubuf, int xidx, char **splitkey,
				 Size *splitkeylen, bool over_fanout)
{
	Page		upage = BufferGetPage(ubuf);
	Buffer		xbuf = ft_getbuf(tree, ft_child_block(upage, xidx),
								 BUFFER_LOCK_EXCLUSIVE);
	Page		xpage = BufferGetPage(xbuf);
	OffsetNumber first;
	OffsetNumber end;
	OffsetNumber off;
	Size		need = 0;
	int			moved;

	if (FtPageGetOpaque(xpage)->ft_level != FtPageGetOpaque(upage)->ft_level - 1 ||
		!FtPageIsBuffer(FtPageGetOpaque(xpage)))
		ereport(ERROR,
				(errcode(ft_corrupted_errcode(tree->rel)),
				 errmsg("%s \"%s\" has a non-buffer page at block %u below buffer node %u",
						ft_relkind_name(tree->rel), RelationGetRelationName(tree->rel),
						BufferGetBlockNumber(xbuf), BufferGetBlockNumber(ubuf))));

	ft_slice_range(tree, upage, xidx, &first, &end);
	for (off = first; off < end; off++)
		need += ft_item_space(ItemIdGetLength(PageGetItemId(upage, off)));

	/* make room below: flush the lower node's heaviest children */
	while (PageGetExactFreeSpace(xpage) < need &&
		   PageGetMaxOffsetNumber(xpage) >= FtFirstMsgOffset(FtPageGetOpaque(xpage)))
	{
		int			heavy = ft_heaviest_child(tree, xpage);
		Buffer		lbuf = ft_getbuf(tree, ft_child_block(xpage, heavy),
									 BUFFER_LOCK_EXCLUSIVE);

		CHECK_FOR_INTERRUPTS();
		if (ft_flush_child(tree, xbuf, heavy, lbuf, NULL, 0,
						   over_fanout) == FT_FLUSH_NEED_SPLIT)
			goto need_split;
	}

	moved = (end > first) ? move_messages(tree, ubuf, first, end, xbuf) : 0;
	if (moved == 0 && end > first)
		goto need_split;		/* not even one fits next to its pivots */

	UnlockReleaseBuffer(xbuf);
	return FT_FLUSH_DONE;

need_split:
	{
		char	   *key;
		Size		keylen;

		/* a key in the lower node's range: its first slice message */
		ft_msg(upage, first, &key, &keylen);
		*splitkey = palloc(keylen);
		memcpy(*splitkey, key, keylen);
		*splitkeylen = keylen;
	}
	UnlockReleaseBuffer(xbuf);
	return FT_FLUSH_NEED_SPLIT;
}

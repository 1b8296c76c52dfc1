/*-------------------------------------------------------------------------
 *
 * ft_merge.c
 *	  Merging buffered messages into a leaf's items: used by flushes (into
 *	  the page) and by readers (into backend memory, never the shared page).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"

/*
 * Collect the messages of up to two runs (an upper buffer node's first,
 * then the lower one's) in (key, MSN) order.  A message may appear in both
 * copies when it moved down between them; it keeps its MSN, so the second
 * sighting is dropped.
 */
static int
collect_messages(FtTree *tree, const FtMsgRun *runs, int nruns, FtMsgRef *refs)
{
	int			n = 0;
	int			r;

	for (r = 0; r < nruns; r++)
	{
		const FtMsgRun *run = &runs[r];
		OffsetNumber off;
		int			prev = n;	/* refs[0 .. prev) came from earlier runs */
		int			i = 0;
		FtMsgRef   *merged;
		int			nmerged = 0;

		if (run->page == NULL || run->first >= run->end)
			continue;
		if (prev == 0)
		{
			for (off = run->first; off < run->end; off++)
			{
				FtMsgHeader *hdr = ft_msg(run->page, off, &refs[n].key,
										  &refs[n].keylen);

				refs[n].msn = FtMsgMsn(hdr);
				refs[n].type = FtMsgType(hdr);
				n++;
			}
			continue;
		}

		/* merge this run into the refs collected so far */
		merged = palloc(sizeof(FtMsgRef) * (prev + run->end - run->first));
		off = run->first;
		while (i < prev || off < run->end)
		{
			FtMsgRef	m;
			int			c;

			if (off < run->end)
			{
				FtMsgHeader *hdr = ft_msg(run->page, off, &m.key, &m.keylen);

				m.msn = FtMsgMsn(hdr);
				m.type = FtMsgType(hdr);
			}
			if (off >= run->end)
				c = -1;
			else if (i >= prev)
				c = 1;
			else
			{
				c = ft_cmp(tree, refs[i].key, refs[i].keylen, m.key, m.keylen);
				if (c == 0)
					c = (refs[i].msn < m.msn) ? -1 : (refs[i].msn > m.msn) ? 1 : 0;
			}
			if (c <= 0)
				merged[nmerged++] = refs[i++];
			if (c >= 0)
			{
				if (c > 0)
					merged[nmerged++] = m;
				off++;			/* c == 0: the same message seen twice */
			}
		}
		memcpy(refs, merged, sizeof(FtMsgRef) * nmerged);
		pfree(merged);
		n = nmerged;
	}
	return n;
}

/*
 * The newest message of the group of equal keys starting at refs[mi] that
 * the leaf has not applied yet (type 0 if none), and the index just past
 * the group.
 */
static int
msg_group(FtTree *tree, const FtMsgRef *refs, int mi, int end,
		  uint64 applied, char **key, Size *keylen, int *type)
{
	const FtMsgRef *g = &refs[mi];

	/* messages at or below the leaf's MSN are already in the leaf */
	*type = (g->msn > applied) ? g->type : 0;
	*key = g->key;
	*keylen = g->keylen;
	for (mi++; mi < end; mi++)
	{
		if (ft_cmp(tree, refs[mi].key, refs[mi].keylen, g->key, g->keylen) != 0)
			break;
		if (refs[mi].msn > applied)
		{
			*key = refs[mi].key;
			*keylen = refs[mi].keylen;
			*type = refs[mi].type;
		}
	}
	return mi;
}

/*
 * Merge the leaf's items with the messages of runs (a leaf's slice in its
 * buffer node, and in a two-level tree first the slice of the node above
 * it) and an optional extra INSERT that is newer than all of them, into
 * items/lens.  For each key the newest message decides: INSERT puts its
 * item, DELETE removes it.  Messages whose MSN is not above the leaf's
 * ft_msn are already applied and are ignored.  Items point into lpage,
 * the runs' pages or extra.
 */
int
ft_merge_leaf(FtTree *tree, Page lpage, const FtMsgRun *runs, int nruns,
			  const char *extra, Size extralen,
			  char **items, Size *lens, uint64 *maxmsn)
{
	FtPageOpaque lopaque = FtPageGetOpaque(lpage);
	OffsetNumber li = FtFirstDataOffset(lopaque);
	OffsetNumber lmax = PageGetMaxOffsetNumber(lpage);
	int			nmsgs = 0;
	FtMsgRef   *refs;
	int			mi;
	int			end;
	bool		extra_done = (extra == NULL);
	int			n = 0;
	int			r;

	for (r = 0; r < nruns; r++)
		if (runs[r].page != NULL && runs[r].end > runs[r].first)
			nmsgs += runs[r].end - runs[r].first;
	refs = palloc(sizeof(FtMsgRef) * Max(nmsgs, 1));
	end = collect_messages(tree, runs, nruns, refs);

	*maxmsn = lopaque->ft_msn;
	for (mi = 0; mi < end; mi++)
		if (refs[mi].msn > *maxmsn)
			*maxmsn = refs[mi].msn;

	mi = 0;
	for (;;)
	{
		char	   *litem = NULL;
		Size		llen = 0;
		char	   *mkey = NULL;
		Size		mlen = 0;
		int			mtype = 0;
		int			gend = mi;
		bool		use_extra = false;
		int			c;

		if (li <= lmax)
			litem = ft_page_item(lpage, li, &llen);
		while (mi < end)
		{
			gend = msg_group(tree, refs, mi, end, lopaque->ft_msn,
							 &mkey, &mlen, &mtype);
			if (mtype != 0)
				break;
			mi = gend;			/* nothing new in this group */
			mkey = NULL;
		}
		if (!extra_done &&
			(mkey == NULL || ft_cmp(tree, extra, extralen, mkey, mlen) <= 0))
		{
			/* the extra item is the newest message of its key */
			if (mkey == NULL || ft_cmp(tree, extra, extralen, mkey, mlen) != 0)
				gend = mi;		/* the group is not consumed now */
			use_extra = true;
			mkey = (char *) extra;
			mlen = extralen;
			mtype = FT_MSG_INSERT;
		}

		if (litem == NULL && mkey == NULL)
			break;
		if (mkey == NULL)
			c = -1;
		else if (litem == NULL)
			c = 1;
		else
			c = ft_cmp(tree, litem, llen, mkey, mlen);

		if (c < 0)
		{
			items[n] = litem;
			lens[n++] = llen;
			li++;
			continue;
		}
		/* consume the message (group) */
		mi = gend;
		if (use_extra)
			extra_done = true;
		if (c == 0)
			li++;				/* the message replaces or deletes the item */
		if (mtype == FT_MSG_INSERT)
		{
			items[n] = mkey;
			lens[n++] = mlen;
		}
	}
	pfree(refs);
	return n;
}

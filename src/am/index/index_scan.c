/*-------------------------------------------------------------------------
 *
 * index_scan.c
 *	  Index scans: plain, index-only, bitmap, forward and backward.
 *
 * Scan keys are preprocessed the way nbtree does it, simplified: the
 * leading columns with "=" (or IS NULL) keys, plus one bound on the next
 * column, give the position the scan seeks to; a key on one of those
 * columns whose failure means no later entry in scan direction can match
 * ("required" key) ends the scan; every key is checked on every entry.
 *
 * Entries whose rows the executor found dead to everyone (kill_prior_tuple)
 * are collected and removed from their leaves when the scan ends or moves
 * on (remove_killed), where nbtree would mark them LP_DEAD: fractam leaves
 * have no hint bits, and a removal (confirmed by the table AM, with a
 * standby conflict horizon) keeps queue-like loads, whose scans start among
 * the deleted rows, from reading them again and again until VACUUM.  Each
 * is looked for in the leaf the scan read it from, without a descent, as
 * nbtree's _bt_killitems goes back to the page it still has pinned.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/xlog.h"
#include "am/index/index_search.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* what failing a key means, per direction and null-ness of the value */
typedef struct KeyInfo
{
	bool		stop_fwd_nonnull;
	bool		stop_bwd_nonnull;
	bool		stop_fwd_null;
	bool		stop_bwd_null;
} KeyInfo;

typedef struct FractamScanOpaqueData
{
	FtTree		tree;
	FractamSearchCtx ctx;
	FractamIndexState *state;
	FtScan		fscan;
	bool		qual_ok;
	KeyInfo    *keyinfo;
	FmgrInfo   *cmpprocs;		/* per scan key, for seeking */
	FractamSearchKey fwdkey;
	FractamSearchKey bwdkey;
	FractamSearchKey repos;		/* re-positioning after a direction change */
	bool		started;
	bool		forward;
	bool		eof;
	IndexTuple	last;			/* copy of the last entry returned (in
								 * lastbuf), or NULL */
	char	   *lastbuf;		/* lastbufsize bytes in cxt, or NULL: reused
								 * for every entry and rescan, not palloc'd
								 * per entry */
	Size		lastbufsize;
	MemoryContext cxt;			/* where the scan lives */

	/* entries the executor found dead (kill_prior_tuple), to be removed */
	MemoryContext killcxt;
	char	  **killed;
	BlockNumber *killedleaves;	/* each one's leaf (ft_scan_item_leaf) */
	int			nkilled;
	BlockNumber lastleaf;		/* the leaf of last, if known */
} FractamScanOpaqueData;

typedef FractamScanOpaqueData *FractamScanOpaque;

/* the first buffer for the entry returned last */
#define FRACTAM_LASTBUF_MIN	256

/* killed entries collected before they are removed */
#define FRACTAM_MAX_KILLED	256

static void remove_killed(IndexScanDesc scan);

/*
 * Compare a search key to an entry (search key's point of view).
 */
static int
search_vs_entry(FractamSearchCtx *ctx, FractamSearchKey *key, IndexTuple itup)
{
	TupleDesc	desc = ctx->state->tupdesc;
	int			natts = fractam_key_natts(ctx->state, itup);
	FractamAttrWalk w;
	int			i;

	if (key->item)
	{
		int			c = fractam_compare_items(ctx->state, (char *) key->item,
											  IndexTupleSize(key->item),
											  (char *) itup, IndexTupleSize(itup));

		return c != 0 ? c : key->tail;
	}
	fractam_attr_walk(&w, desc, itup);
	for (i = 0; i < key->nprefix; i++)
	{
		FractamSearchColumn *col = &key->col[i];
		bool		isnull;
		Datum		v;
		int			c;

		/* a truncated key's missing columns are minus infinity */
		if (col->attno > natts)
			return 1;
		/* the key's columns are the index's first ones, in order */
		Assert(col->attno == i + 1);
		v = fractam_attr_next(&w, &isnull);
		if (col->isnull || isnull)
		{
			if (col->isnull && isnull)
				continue;
			/* exactly one side is NULL */
			if (col->isnull)
				return col->nulls_first ? -1 : 1;
			return col->nulls_first ? 1 : -1;
		}
		c = DatumGetInt32(FunctionCall2Coll(col->cmp, col->collation, v, col->arg));
		/* c is entry vs key in value order; flip to key vs entry */
		c = (c > 0) ? -1 : (c < 0) ? 1 : 0;
		if (col->desc)
			c = -c;
		if (c != 0)
			return c;
	}
	return key->tail;
}

int
fractam_search_cmp(void *arg, const char *a, Size alen,
				   const char *b, Size blen)
{
	FractamSearchCtx *ctx = (FractamSearchCtx *) arg;

	if (ctx->key && a == (const char *) ctx->key)
		return search_vs_entry(ctx, ctx->key, (IndexTuple) b);
	if (ctx->key && b == (const char *) ctx->key)
		return -search_vs_entry(ctx, ctx->key, (IndexTuple) a);
	return fractam_compare_items(ctx->state, a, alen, b, blen);
}

void
fractam_search_tree(Relation index, FtTree *tree, FractamSearchCtx *ctx)
{
	fractam_index_tree(index, tree);
	ctx->state = (FractamIndexState *) tree->cmp_arg;
	ctx->key = NULL;
	tree->cmp = fractam_search_cmp;
	tree->cmp_arg = ctx;
	tree->sharedcols = NULL;	/* these two take the index state, not ctx */
	tree->separator = NULL;
}

bool
fractam_canreturn(Relation index, int attno)
{
	return true;
}

IndexScanDesc
fractam_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	FractamScanOpaque so = palloc0(sizeof(FractamScanOpaqueData));

	so->cxt = CurrentMemoryContext;
	fractam_search_tree(index, &so->tree, &so->ctx);
	so->state = so->ctx.state;
	so->fscan = ft_scan_begin(&so->tree);
	/* most index scans are lookups: decode only what they read */
	ft_scan_set_parts(so->fscan, true);
	so->killcxt = NULL;			/* created with the first kill */
	so->killed = NULL;
	so->nkilled = 0;
	so->keyinfo = palloc0(sizeof(KeyInfo) * Max(nkeys, 1));
	so->cmpprocs = palloc0(sizeof(FmgrInfo) * Max(nkeys, 1));
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(index);
	return scan;
}

/* index order strategy: DESC columns see < as > */
static int
order_strategy(Relation index, ScanKey key)
{
	int			s = key->sk_strategy;

	if (index->rd_indoption[key->sk_attno - 1] & INDOPTION_DESC)
		s = BTCommuteStrategyNumber(s);
	return s;
}

/*
 * A 3-way comparator for column vs the key's argument, if there is one: the
 * opclass's own (cached in the relcache, as nbtree takes it) when the
 * argument has the column's type, else looked up into space.
 */
static FmgrInfo *
key_cmpproc(Relation index, ScanKey key, FmgrInfo *space)
{
	int			col = key->sk_attno - 1;
	Oid			lefttype = index->rd_opcintype[col];
	Oid			righttype = OidIsValid(key->sk_subtype) ? key->sk_subtype : lefttype;
	Oid			proc;

	if (righttype == lefttype)
		return index_getprocinfo(index, key->sk_attno, FRACTAM_CMP_PROC);
	proc = get_opfamily_proc(index->rd_opfamily[col], lefttype, righttype,
							 FRACTAM_CMP_PROC);
	if (!OidIsValid(proc))
		return NULL;
	fmgr_info(proc, space);
	return space;
}

static bool
is_eq_key(ScanKey key)
{
	if (key->sk_flags & SK_SEARCHNULL)
		return true;
	if (key->sk_flags & (SK_SEARCHNOTNULL | SK_ISNULL))
		return false;
	return key->sk_strategy == BTEqualStrategyNumber;
}

/*
 * Build the start position for one direction from the preprocessed keys.
 */
static void
build_start_key(IndexScanDesc scan, bool forward, FractamSearchKey *sk)
{
	FractamScanOpaque so = (FractamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	int			nkeyatts = so->state->nkeyatts;
	int			col;
	int			i;

	memset(sk, 0, sizeof(FractamSearchKey));
	sk->tail = forward ? -1 : 1;
	for (col = 0; col < nkeyatts; col++)
	{
		ScanKey		eq = NULL;
		ScanKey		bound = NULL;
		int			eqidx = -1;
		int			boundidx = -1;
		FractamSearchColumn *c = &sk->col[sk->nprefix];
		int16		option = index->rd_indoption[col];

		for (i = 0; i < scan->numberOfKeys; i++)
		{
			ScanKey		key = &scan->keyData[i];
			int			e;

			if (key->sk_attno != col + 1)
				continue;
			if (is_eq_key(key))
			{
				if (eq == NULL)
				{
					eq = key;
					eqidx = i;
				}
				continue;
			}
			if (key->sk_flags & (SK_SEARCHNOTNULL | SK_ISNULL))
				continue;
			e = order_strategy(index, key);
			if (forward ? (e == BTGreaterStrategyNumber || e == BTGreaterEqualStrategyNumber)
				: (e == BTLessStrategyNumber || e == BTLessEqualStrategyNumber))
			{
				if (bound == NULL)
				{
					bound = key;
					boundidx = i;
				}
			}
		}

		c->attno = col + 1;
		c->collation = index->rd_indcollation[col];
		c->desc = (option & INDOPTION_DESC) != 0;
		c->nulls_first = (option & INDOPTION_NULLS_FIRST) != 0;
		if (eq)
		{
			if (eq->sk_flags & SK_SEARCHNULL)
			{
				c->isnull = true;
				sk->nprefix++;
				continue;
			}
			c->cmp = key_cmpproc(index, eq, &so->cmpprocs[eqidx]);
			if (c->cmp == NULL)
				break;
			c->arg = eq->sk_argument;
			sk->nprefix++;
			continue;
		}
		if (bound &&
			(c->cmp = key_cmpproc(index, bound, &so->cmpprocs[boundidx])) != NULL)
		{
			int			e = order_strategy(index, bound);

			c->arg = bound->sk_argument;
			sk->nprefix++;
			/* strict bounds skip the equal entries */
			if (forward)
				sk->tail = (e == BTGreaterStrategyNumber) ? 1 : -1;
			else
				sk->tail = (e == BTLessStrategyNumber) ? -1 : 1;
		}
		break;
	}
}

void
fractam_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
			   ScanKey orderbys, int norderbys)
{
	FractamScanOpaque so = (FractamScanOpaque) scan->opaque;
	Relation	index = scan->indexRelation;
	int			neq = 0;
	int			i;

	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));

	remove_killed(scan);
	ft_scan_release(so->fscan);
	so->started = false;
	so->eof = false;
	so->qual_ok = true;
	so->last = NULL;

	/* leading columns constrained by equality */
	for (neq = 0; neq < so->state->nkeyatts; neq++)
	{
		bool		found = false;

		for (i = 0; i < scan->numberOfKeys; i++)
			if (scan->keyData[i].sk_attno == neq + 1 && is_eq_key(&scan->keyData[i]))
				found = true;
		if (!found)
			break;
	}

	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		KeyInfo    *ki = &so->keyinfo[i];
		int			col = key->sk_attno - 1;
		bool		nulls_first = (index->rd_indoption[col] & INDOPTION_NULLS_FIRST) != 0;

		memset(ki, 0, sizeof(KeyInfo));
		if ((key->sk_flags & SK_ISNULL) &&
			!(key->sk_flags & (SK_SEARCHNULL | SK_SEARCHNOTNULL)))
			so->qual_ok = false;	/* "col op NULL" is never true */
		if (col > neq)
			continue;			/* not required */
		if (key->sk_flags & SK_SEARCHNULL)
		{
			ki->stop_fwd_nonnull = nulls_first;
			ki->stop_bwd_nonnull = !nulls_first;
		}
		else if (key->sk_flags & SK_SEARCHNOTNULL)
		{
			ki->stop_fwd_null = !nulls_first;
			ki->stop_bwd_null = nulls_first;
		}
		else
		{
			int			e = order_strategy(index, key);

			ki->stop_fwd_nonnull = (e == BTLessStrategyNumber ||
									e == BTLessEqualStrategyNumber ||
									e == BTEqualStrategyNumber);
			ki->stop_bwd_nonnull = (e == BTGreaterStrategyNumber ||
									e == BTGreaterEqualStrategyNumber ||
									e == BTEqualStrategyNumber);
			ki->stop_fwd_null = !nulls_first;
			ki->stop_bwd_null = nulls_first;
		}
	}
	build_start_key(scan, true, &so->fwdkey);
	build_start_key(scan, false, &so->bwdkey);
}

typedef enum KeyCheck
{
	KEYS_MATCH,
	KEYS_SKIP,
	KEYS_STOP
} KeyCheck;

static KeyCheck
check_keys(IndexScanDesc scan, IndexTuple itup, bool forward)
{
	FractamScanOpaque so = (FractamScanOpaque) scan->opaque;
	TupleDesc	desc = so->state->tupdesc;
	int			i;

	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		KeyInfo    *ki = &so->keyinfo[i];
		bool		isnull;
		FractamUnpackedShort unpacked;
		Datum		v = index_getattr(itup, key->sk_attno, desc, &isnull);
		bool		ok;

		v = fractam_unpack_short(v, isnull,
								 TupleDescAttr(desc, key->sk_attno - 1)->attlen,
								 &unpacked);

		if (key->sk_flags & SK_SEARCHNULL)
			ok = isnull;
		else if (key->sk_flags & SK_SEARCHNOTNULL)
			ok = !isnull;
		else if (isnull)
			ok = false;
		else
			ok = DatumGetBool(FunctionCall2Coll(&key->sk_func, key->sk_collation,
												v, key->sk_argument));
		if (ok)
			continue;
		if (isnull ? (forward ? ki->stop_fwd_null : ki->stop_bwd_null)
			: (forward ? ki->stop_fwd_nonnull : ki->stop_bwd_nonnull))
			return KEYS_STOP;
		return KEYS_SKIP;
	}
	return KEYS_MATCH;
}

static void
seek(FractamScanOpaque so, FractamSearchKey *key, bool forward)
{
	bool		none = (key->item == NULL && key->nprefix == 0);

	so->ctx.key = none ? NULL : key;
	ft_scan_seek(so->fscan, none ? NULL : (const char *) key,
				 none ? 0 : sizeof(FractamSearchKey), forward);
	so->ctx.key = NULL;
}

/*
 * Next matching entry in direction dir, or NULL.
 */
static IndexTuple
next_match(IndexScanDesc scan, ScanDirection dir)
{
	FractamScanOpaque so = (FractamScanOpaque) scan->opaque;
	bool		forward = ScanDirectionIsForward(dir) || ScanDirectionIsNoMovement(dir);

	if (!so->qual_ok)
		return NULL;
	if (!so->started)
	{
		/* see ft_scan_set_keep_pins: only IOS and non-MVCC scans need pins */
		ft_scan_set_keep_pins(so->fscan,
							  scan->xs_want_itup ||
							  scan->xs_snapshot == InvalidSnapshot ||
							  !IsMVCCSnapshot(scan->xs_snapshot));
		pgstat_count_index_scan(scan->indexRelation);
		seek(so, forward ? &so->fwdkey : &so->bwdkey, forward);
		so->started = true;
		so->forward = forward;
		so->eof = false;
	}
	else if (forward != so->forward)
	{
		/* turn around at the last entry returned */
		if (so->last)
		{
			memset(&so->repos, 0, sizeof(FractamSearchKey));
			so->repos.item = so->last;
			/* past the end: include the last entry again, else skip it */
			if (!forward)
				so->repos.tail = so->eof ? 1 : -1;
			else
				so->repos.tail = so->eof ? -1 : 1;
			seek(so, &so->repos, forward);
		}
		else
			seek(so, forward ? &so->fwdkey : &so->bwdkey, forward);
		so->forward = forward;
		so->eof = false;
	}
	else if (so->eof)
		return NULL;

	for (;;)
	{
		const char *item;
		Size		len;
		IndexTuple	itup;

		CHECK_FOR_INTERRUPTS();
		if (!ft_scan_next(so->fscan, &item, &len))
		{
			so->eof = true;
			return NULL;
		}
		itup = (IndexTuple) item;
		switch (check_keys(scan, itup, forward))
		{
			case KEYS_MATCH:
				{
					Size		size = IndexTupleSize(itup);

					Assert(size <= BLCKSZ);

					/*
					 * small at first: a buffer of BLCKSZ is a malloc of its
					 * own on each scan
					 */
					if (size > so->lastbufsize)
					{
						if (so->lastbuf)
							pfree(so->lastbuf);
						so->lastbufsize = Max(size, FRACTAM_LASTBUF_MIN);
						so->lastbuf = MemoryContextAlloc(so->cxt, so->lastbufsize);
					}
					memcpy(so->lastbuf, itup, size);
					so->last = (IndexTuple) so->lastbuf;
					so->lastleaf = ft_scan_item_leaf(so->fscan, item);
					return itup;
				}
			case KEYS_SKIP:
				continue;
			case KEYS_STOP:
				so->eof = true;
				return NULL;
		}
	}
}

static int
compare_killed(const void *a, const void *b, void *arg)
{
	FtTree	   *tree = (FtTree *) arg;
	IndexTuple	ia = *(IndexTuple const *) a;
	IndexTuple	ib = *(IndexTuple const *) b;

	return tree->cmp(tree->cmp_arg, (const char *) ia, IndexTupleSize(ia),
					 (const char *) ib, IndexTupleSize(ib));
}

/*
 * Whether the killed entries are in ascending order, after turning them
 * around if they were all descending (a backward scan's)
 */
static bool
killed_sorted(FractamScanOpaque so)
{
	bool		ascending = true;
	bool		descending = true;
	int			i;

	for (i = 1; i < so->nkilled && (ascending || descending); i++)
	{
		int			c = compare_killed(&so->killed[i - 1], &so->killed[i],
									   &so->tree);

		ascending &= c <= 0;
		descending &= c >= 0;
	}
	if (ascending)
		return true;
	if (!descending)
		return false;
	for (i = 0; i < so->nkilled / 2; i++)
	{
		char	   *t = so->killed[i];
		BlockNumber b = so->killedleaves[i];

		so->killed[i] = so->killed[so->nkilled - 1 - i];
		so->killed[so->nkilled - 1 - i] = t;
		so->killedleaves[i] = so->killedleaves[so->nkilled - 1 - i];
		so->killedleaves[so->nkilled - 1 - i] = b;
	}
	return true;
}

/*
 * Remove the entries the executor reported dead (see the file header).  A
 * standby cannot write, and a scan without its table (none of PostgreSQL's
 * callers) cannot ask it.
 */
static void
remove_killed(IndexScanDesc scan)
{
	FractamScanOpaque so = (FractamScanOpaque) scan->opaque;

	if (so->nkilled > 0 && scan->heapRelation != NULL &&
		!scan->xactStartedInRecovery && !RecoveryInProgress())
	{
		FractamPruneTarget target;
		Size	   *lens = MemoryContextAlloc(so->killcxt,
											  so->nkilled * sizeof(Size));
		BlockNumber *leaves = so->killedleaves;
		int			n = 0;
		int			i;

		/*
		 * ascending and distinct; they come in scan order, so sort only if
		 * the scan turned around (and then without the leaves they were
		 * seen in, which the sort does not carry along)
		 */
		if (!killed_sorted(so))
		{
			qsort_arg(so->killed, so->nkilled, sizeof(char *), compare_killed,
					  &so->tree);
			leaves = NULL;
		}
		for (i = 0; i < so->nkilled; i++)
			if (n == 0 || compare_killed(&so->killed[n - 1], &so->killed[i],
										 &so->tree) != 0)
			{
				so->killed[n] = so->killed[i];
				so->killedleaves[n++] = so->killedleaves[i];
			}
		for (i = 0; i < n; i++)
			lens[i] = IndexTupleSize((IndexTuple) so->killed[i]);
		target.heap = scan->heapRelation;
		target.index = scan->indexRelation;
		target.freespace = 0;
		ft_prune_items(&so->tree, so->killed, lens, leaves, n,
					   fractam_prune_entries, &target);
	}
	if (so->killcxt)
		MemoryContextReset(so->killcxt);
	so->killed = NULL;
	so->nkilled = 0;
}

/* the entry returned last is dead to everyone: remember it */
static void
remember_killed(FractamScanOpaque so)
{
	if (so->killcxt == NULL)
		so->killcxt = AllocSetContextCreate(so->cxt,
											"fractam scan killed entries",
											ALLOCSET_SMALL_SIZES);
	if (so->killed == NULL)
	{
		so->killed = MemoryContextAlloc(so->killcxt,
										FRACTAM_MAX_KILLED * sizeof(char *));
		so->killedleaves = MemoryContextAlloc(so->killcxt,
											  FRACTAM_MAX_KILLED * sizeof(BlockNumber));
	}
	so->killedleaves[so->nkilled] = so->lastleaf;
	so->killed[so->nkilled++] =
		(char *) MemoryContextAlloc(so->killcxt, IndexTupleSize(so->last));
	memcpy(so->killed[so->nkilled - 1], so->last, IndexTupleSize(so->last));
}

bool
fractam_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	FractamScanOpaque so = (FractamScanOpaque) scan->opaque;
	IndexTuple	itup;

	if (scan->kill_prior_tuple && so->last)
	{
		remember_killed(so);
		if (so->nkilled == FRACTAM_MAX_KILLED)
			remove_killed(scan);
	}
	itup = next_match(scan, dir);

	if (itup == NULL)
		return false;
	scan->xs_heaptid = itup->t_tid;
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
		scan->xs_itup = ((FractamScanOpaque) scan->opaque)->last;
	return true;
}

int64
fractam_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	int64		ntids = 0;
	IndexTuple	itup;

	/* a bitmap scan reads its whole range at once */
	ft_scan_set_parts(((FractamScanOpaque) scan->opaque)->fscan, false);
	while ((itup = next_match(scan, ForwardScanDirection)) != NULL)
	{
		tbm_add_tuples(tbm, &itup->t_tid, 1, false);
		ntids++;
	}
	return ntids;
}

void
fractam_endscan(IndexScanDesc scan)
{
	FractamScanOpaque so = (FractamScanOpaque) scan->opaque;

	/* last-returned entry's verdict arrives with no further call: none */
	remove_killed(scan);
	ft_scan_end(so->fscan);
	if (so->killcxt)
		MemoryContextDelete(so->killcxt);
	if (so->lastbuf)
		pfree(so->lastbuf);
	pfree(so->keyinfo);
	pfree(so->cmpprocs);
	pfree(so);
}

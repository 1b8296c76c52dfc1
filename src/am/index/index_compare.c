/*-------------------------------------------------------------------------
 *
 * index_compare.c
 *	  Ordering of index entries, and the FtTree of an index relation.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/hash.h"
#include "access/nbtree.h"
#include "access/reloptions.h"
#include "am/index/fractam_index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_opclass.h"
#include "commands/defrem.h"
#include "nodes/memnodes.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

/*
 * Is there a hash function that agrees with this column's equality?  It
 * lets unique checks lock only the inserters of the same key.
 */
static bool
find_hash_proc(Relation index, int col, FmgrInfo *finfo)
{
	Oid			opfamily = index->rd_opfamily[col];
	Oid			opcintype = index->rd_opcintype[col];
	Oid			eqop = get_opfamily_member(opfamily, opcintype, opcintype,
										   BTEqualStrategyNumber);
	Oid			hashopclass;
	Oid			hashfamily;
	Oid			hashproc;

	if (!OidIsValid(eqop))
		return false;
	hashopclass = GetDefaultOpClass(opcintype, HASH_AM_OID);
	if (!OidIsValid(hashopclass))
		return false;
	hashfamily = get_opclass_family(hashopclass);
	if (get_opfamily_member(hashfamily, opcintype, opcintype,
							HTEqualStrategyNumber) != eqop)
		return false;
	hashproc = get_opfamily_proc(hashfamily, opcintype, opcintype,
								 HASHSTANDARD_PROC);
	if (!OidIsValid(hashproc))
		return false;
	fmgr_info_cxt(hashproc, finfo, index->rd_indexcxt);
	return true;
}

/*
 * Does this column's opclass promise that equal values have identical
 * images (its equalimage support function, as for btree deduplication)?
 */
static bool
equal_is_image(Relation index, int col)
{
	RegProcedure proc = index_getprocid(index, col + 1, FRACTAM_EQUALIMAGE_PROC);

	if (!OidIsValid(proc))
		return false;
	return DatumGetBool(OidFunctionCall1Coll(proc, index->rd_indcollation[col],
											 ObjectIdGetDatum(index->rd_opcintype[col])));
}

/*
 * The longest index tuple the index can produce: bounded when every column
 * (key and INCLUDE) has a fixed width, else the tree's general limit.
 */
static Size
max_index_tuple_size(TupleDesc tupdesc)
{
	Size		size = MAXALIGN(sizeof(IndexTupleData) + sizeof(IndexAttributeBitMapData));
	int			i;

	for (i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (att->attlen <= 0)
			return ft_max_item_size();
		size = att_align_nominal(size, att->attalign) + att->attlen;
	}
	return Min(MAXALIGN(size), ft_max_item_size());
}

/*
 * The index's state lives in rd_indexcxt, not in rd_amcache: the relcache
 * frees rd_amcache on every invalidation of the index (VACUUM updating its
 * pg_class row is one), also while the index is open, and scans and inserts
 * keep pointers to the state across statements (a cursor) and across waits
 * for other transactions (which accept invalidations).  An open index keeps
 * its rd_indexcxt and its tuple descriptor through invalidations, and the
 * context is deleted only with the relcache entry, so the state is valid as
 * long as the Relation is.  It is found again through the reset callback
 * that marks it, the context's only one (PostgreSQL registers none there).
 */
static void
state_context_gone(void *arg)
{
	/* the state goes with its memory context: nothing to release */
}

static FractamIndexState *
find_state(Relation index)
{
	MemoryContextCallback *cb;

	for (cb = index->rd_indexcxt->reset_cbs; cb != NULL; cb = cb->next)
		if (cb->func == state_context_gone)
			return (FractamIndexState *) cb->arg;
	return NULL;
}

FractamIndexState *
fractam_index_state(Relation index)
{
	FractamIndexState *state;
	int			i;

	Assert(index->rd_indexcxt != NULL);
	state = find_state(index);
	if (state)
	{
		/* a new relfilenode (REINDEX, TRUNCATE) has its own root */
		if (unlikely(!RelFileNodeEquals(state->node, index->rd_node)))
		{
			memset(&state->rootcache, 0, sizeof(FtRootCache));
			state->node = index->rd_node;
		}
		return state;
	}

	state = MemoryContextAllocZero(index->rd_indexcxt, sizeof(FractamIndexState));
	state->node = index->rd_node;
	state->tupdesc = RelationGetDescr(index);
	state->nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	state->max_item_size = max_index_tuple_size(state->tupdesc);
	for (i = 0; i < state->nkeyatts; i++)
		if (TupleDescAttr(state->tupdesc, i)->attlen < 0)
			state->key_varlena = true;
	for (i = 0; i < state->nkeyatts; i++)
	{
		SortSupport ssup = &state->ssup[i];
		int16		option = index->rd_indoption[i];
		RegProcedure sortproc;

		ssup->ssup_cxt = index->rd_indexcxt;
		ssup->ssup_collation = index->rd_indcollation[i];
		ssup->ssup_nulls_first = (option & INDOPTION_NULLS_FIRST) != 0;
		ssup->ssup_reverse = (option & INDOPTION_DESC) != 0;
		ssup->ssup_attno = i + 1;
		ssup->abbreviate = false;
		state->collation[i] = index->rd_indcollation[i];

		sortproc = index_getprocid(index, i + 1, FRACTAM_SORTSUPPORT_PROC);
		if (OidIsValid(sortproc))
			OidFunctionCall1(sortproc, PointerGetDatum(ssup));
		if (ssup->comparator == NULL)
		{
			RegProcedure cmpproc = index_getprocid(index, i + 1, FRACTAM_CMP_PROC);

			if (!OidIsValid(cmpproc))
				elog(ERROR, "missing support function %d for attribute %d of index \"%s\"",
					 FRACTAM_CMP_PROC, i + 1, RelationGetRelationName(index));
			PrepareSortSupportComparisonShim(cmpproc, ssup);
		}
	}
	state->context_cb.func = state_context_gone;
	state->context_cb.arg = state;
	MemoryContextRegisterResetCallback(index->rd_indexcxt, &state->context_cb);
	return state;
}

/*
 * Fill in how the unique checks of state's index hash a key
 * (state->hashable, hashproc, hash_image), once per state: only unique
 * inserts need it, and finding a column's hash opclass scans pg_opclass
 * (GetDefaultOpClass has no cache), which cost every new session's first
 * read through a fractam index dozens of catalog pages per column.
 */
void
fractam_index_state_hash(Relation index, FractamIndexState *state)
{
	int			i;

	if (state->hash_known)
		return;
	state->hashable = true;
	for (i = 0; i < state->nkeyatts && state->hashable; i++)
	{
		if (find_hash_proc(index, i, &state->hashproc[i]))
		{
			state->hash_image[i] = false;
			continue;
		}

		/*
		 * Without a hash opclass, equal values can still be hashed by their
		 * bytes if the opclass says equal means identical.
		 */
		state->hash_image[i] = equal_is_image(index, i);
		state->hashable = state->hash_image[i];
	}
	state->hash_known = true;
}

/* fractam.direct_apply (set in index_handler.c) */
bool		fractam_direct_apply = true;

/* Fill an FtTree for an index, with its reloptions */
void
fractam_index_tree(Relation index, FtTree *tree)
{
	FractamOptions *opts = (FractamOptions *) index->rd_options;

	/* every field not set here (keyprefix, ...) is off */
	memset(tree, 0, sizeof(FtTree));
	tree->rel = index;
	tree->cmp = fractam_compare_items;
	tree->cmp_arg = fractam_index_state(index);
	tree->fanout = opts ? opts->fanout : FRACTAM_DEFAULT_FANOUT;
	tree->fillfactor = opts ? opts->fillfactor : FRACTAM_DEFAULT_FILLFACTOR;
	tree->buffering = opts ? opts->buffering : true;
	tree->direct_apply = fractam_direct_apply;
	tree->unique_retry_delay = fractam_debug_unique_delay;
	tree->sharedcols = fractam_shared_key_columns;
	tree->separator = fractam_separator;
	tree->seal_appends = true;	/* used only if the index is compressed */
	tree->rootcache = &((FractamIndexState *) tree->cmp_arg)->rootcache;
	tree->max_item_size = ((FractamIndexState *) tree->cmp_arg)->max_item_size;
	fractam_index_codec(index, &tree->codec, &tree->codec_level);
}

/*
 * Compare the key columns of two index tuples, either of which may be a
 * truncated key (its missing columns are minus infinity).
 */
/*
 * Key columns 0 .. n-1 of a and b, when every key column has a fixed width:
 * index_getattr finds each at its cached offset (in a tuple without
 * nulls), and this frame needs no buffer for unpacked values (a local
 * array costs the hottest function of inserts a stack-protector check)
 */
static int
compare_fixed_keys(FractamIndexState *state, IndexTuple a, IndexTuple b, int n)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		bool		anull;
		bool		bnull;
		Datum		ad = index_getattr(a, i + 1, state->tupdesc, &anull);
		Datum		bd = index_getattr(b, i + 1, state->tupdesc, &bnull);
		int			c = ApplySortComparator(ad, anull, bd, bnull, &state->ssup[i]);

		if (c != 0)
			return c;
	}
	return 0;
}

/*
 * Walk the first n key columns of a and b side by side (see index_attrs.h):
 * how many leading ones are equal, and in *cmp the comparison of the first
 * that is not (0 if all n are).  With use_probe, a side that is the probe
 * takes its columns as fractam_set_probe deformed them.
 */
static pg_attribute_always_inline int
walk_equal_columns(FractamIndexState *state, IndexTuple a, IndexTuple b,
				   int n, bool use_probe, int *cmp)
{
	FractamAttrWalk aw;
	FractamAttrWalk bw;
	int			i;

	fractam_attr_walk(&aw, state->tupdesc, a);
	fractam_attr_walk(&bw, state->tupdesc, b);
	for (i = 0; i < n; i++)
	{
		bool		anull;
		bool		bnull;
		Datum		ad = fractam_attr_next(&aw, &anull);
		Datum		bd = fractam_attr_next(&bw, &bnull);
		int			c;

		if (use_probe && a == state->probe)
		{
			ad = state->probe_values[i];
			anull = state->probe_isnull[i];
		}
		if (use_probe && b == state->probe)
		{
			bd = state->probe_values[i];
			bnull = state->probe_isnull[i];
		}
		c = ApplySortComparator(ad, anull, bd, bnull, &state->ssup[i]);
		if (c != 0)
		{
			*cmp = c;
			return i;
		}
	}
	*cmp = 0;
	return n;
}

/* compare_fixed_keys for keys with a variable-length column */
static pg_noinline int
compare_walked_keys(FractamIndexState *state, IndexTuple a, IndexTuple b, int n)
{
	int			c;

	(void) walk_equal_columns(state, a, b, n, false, &c);
	return c;
}

int
fractam_compare_keys(FractamIndexState *state, IndexTuple a, IndexTuple b)
{
	int			anatts = fractam_key_natts(state, a);
	int			bnatts = fractam_key_natts(state, b);
	int			n = Min(anatts, bnatts);
	int			c = state->key_varlena ? compare_walked_keys(state, a, b, n) :
		compare_fixed_keys(state, a, b, n);

	if (c != 0)
		return c;
	return (anatts == bnatts) ? 0 : (anatts < bnatts) ? -1 : 1;
}

/* heap TIDs of two tuples whose key columns are equal */
static int
compare_tids(IndexTuple a, IndexTuple b)
{
	BlockNumber ablk;
	BlockNumber bblk;

	/* a truncated key with every key column has a minus-infinity TID */
	if (unlikely(fractam_key_is_truncated(a) || fractam_key_is_truncated(b)))
		return (int) fractam_key_is_truncated(b) - (int) fractam_key_is_truncated(a);
	ablk = ItemPointerGetBlockNumberNoCheck(&a->t_tid);
	bblk = ItemPointerGetBlockNumberNoCheck(&b->t_tid);

	if (ablk != bblk)
		return ablk < bblk ? -1 : 1;
	return (int) ItemPointerGetOffsetNumberNoCheck(&a->t_tid) -
		(int) ItemPointerGetOffsetNumberNoCheck(&b->t_tid);
}

/*
 * the probe's (deformed) key columns against another entry's, or a key's
 * (the probe, an entry, has every column)
 */
static pg_noinline int
compare_probe_walked(FractamIndexState *state, IndexTuple other, int natts)
{
	FractamAttrWalk w;
	int			i;

	fractam_attr_walk(&w, state->tupdesc, other);
	for (i = 0; i < natts; i++)
	{
		bool		isnull;
		Datum		d = fractam_attr_next(&w, &isnull);
		int			c = ApplySortComparator(state->probe_values[i],
											state->probe_isnull[i],
											d, isnull, &state->ssup[i]);

		if (c != 0)
			return c;
	}
	return 0;
}

static int
compare_probe_keys(FractamIndexState *state, IndexTuple other)
{
	int			natts = fractam_key_natts(state, other);
	int			c = 0;
	int			i;

	/* as in fractam_compare_keys */
	if (state->key_varlena)
		c = compare_probe_walked(state, other, natts);
	else
		for (i = 0; i < natts && c == 0; i++)
		{
			bool		isnull;
			Datum		d = index_getattr(other, i + 1, state->tupdesc, &isnull);

			c = ApplySortComparator(state->probe_values[i],
									state->probe_isnull[i],
									d, isnull, &state->ssup[i]);
		}
	if (c != 0)
		return c;
	/* other's missing columns are minus infinity */
	return natts < state->nkeyatts ? 1 : 0;
}

void
fractam_set_probe(FractamIndexState *state, IndexTuple itup)
{
	FractamAttrWalk w;
	int			i;

	state->probe = itup;
	if (itup == NULL)
		return;
	fractam_attr_walk(&w, state->tupdesc, itup);
	for (i = 0; i < state->nkeyatts; i++)
	{
		Datum		v = fractam_attr_next_raw(&w, &state->probe_isnull[i]);

		state->probe_values[i] =
			fractam_unpack_short(v, state->probe_isnull[i],
								 TupleDescAttr(state->tupdesc, i)->attlen,
								 &state->probe_unpacked[i]);
	}
}

/*
 * Key columns only (the comparator unique inserts pass to the tree, see
 * ft_insert_unique).  The entry being inserted (the probe) is recognized by
 * its address and compared through its deformed values.
 */
int
fractam_compare_item_keys(void *arg, const char *a, Size alen,
						  const char *b, Size blen)
{
	FractamIndexState *state = (FractamIndexState *) arg;
	IndexTuple	ta = (IndexTuple) a;
	IndexTuple	tb = (IndexTuple) b;

	if (state->probe)
	{
		if (ta == state->probe)
			return compare_probe_keys(state, tb);
		if (tb == state->probe)
			return -compare_probe_keys(state, ta);
	}
	return fractam_compare_keys(state, ta, tb);
}

/*
 * How many leading key columns two entries share (FtTree.sharedcols, for
 * placing leaf splits).  Uses the probe when one side is it.
 */
int
fractam_shared_key_columns(void *arg, const char *a, Size alen,
						   const char *b, Size blen)
{
	FractamIndexState *state = (FractamIndexState *) arg;
	IndexTuple	ta = (IndexTuple) a;
	IndexTuple	tb = (IndexTuple) b;
	int			natts = Min(fractam_key_natts(state, ta),
							fractam_key_natts(state, tb));
	int			c;

	return walk_equal_columns(state, ta, tb, natts, true, &c);
}

/*
 * The tree's separator (FtTree.separator): right's leading key columns up
 * to the first that differs from left's, as a truncated key (see
 * FRACTAM_TRUNCATED_KEY); NULL (right whole) when their key columns are
 * equal, so that only the heap TID separates them, or when truncating saves
 * no byte.  LinkBench's id1_type index, with a long INCLUDE-like tail of
 * key columns, keeps mostly 1-column keys where it kept 140-byte entries;
 * nodes whose pivot bytes bound them (level-1 nodes that buffer nothing,
 * routing pages) then hold several times as many children.
 */
char *
fractam_separator(void *arg, const char *left, Size leftlen,
				  const char *right, Size rightlen, Size *seplen)
{
	FractamIndexState *state = (FractamIndexState *) arg;
	IndexTuple	tr = (IndexTuple) right;
	/* the first key column that differs, counted from 1 */
	int			keep = fractam_shared_key_columns(arg, left, leftlen,
												  right, rightlen) + 1;
	IndexTuple	sep;

	if (keep > fractam_key_natts(state, tr))
		return NULL;
	sep = index_truncate_tuple(state->tupdesc, tr, keep);
	if (IndexTupleSize(sep) >= rightlen)
	{
		/* nothing saved (no INCLUDE column, the last key column differs) */
		pfree(sep);
		return NULL;
	}
	sep->t_info |= FRACTAM_TRUNCATED_KEY;
	ItemPointerSetBlockNumber(&sep->t_tid, InvalidBlockNumber);
	ItemPointerSetOffsetNumber(&sep->t_tid, keep);
	*seplen = IndexTupleSize(sep);
	return (char *) sep;
}

/* The tree's comparator: key columns, then heap TID */
int
fractam_compare_items(void *arg, const char *a, Size alen,
					  const char *b, Size blen)
{
	int			c = fractam_compare_item_keys(arg, a, alen, b, blen);

	if (c != 0)
		return c;
	return compare_tids((IndexTuple) a, (IndexTuple) b);
}

/* "(col, ...)=(val, ...)" for error messages, or NULL if not permitted */
char *
fractam_key_description(Relation index, IndexTuple itup)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	index_deform_tuple(itup, RelationGetDescr(index), values, isnull);
	return BuildIndexValueDescription(index, values, isnull);
}

/*-------------------------------------------------------------------------
 *
 * fractam_index.h
 *	  PostgreSQL glue for the fractam index access method.
 *
 * Index entries are ordinary IndexTuples (key columns, INCLUDE columns and
 * the heap TID in t_tid) stored as items of a fractam tree (src/ft).  They
 * are ordered by the key columns under the index's operator classes,
 * honouring DESC and NULLS FIRST/LAST, and then by heap TID, so every item
 * is unique and the tree can locate the exact entry VACUUM removes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FRACTAM_INDEX_H
#define FRACTAM_INDEX_H

#include "access/amapi.h"
#include "access/genam.h"
#include "access/itup.h"
#include "access/reloptions.h"
#include "storage/lwlock.h"
#include "fmgr.h"
#include "am/index/index_attrs.h"
#include "ft/ft.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "utils/relcache.h"
#include "utils/sortsupport.h"

/* catalog name of the index access method; USING fractam maps to it */
#define FRACTAM_INDEX_AM_NAME	"fractam_index"

/* operator class support functions (btree-compatible numbering) */
#define FRACTAM_CMP_PROC		1
#define FRACTAM_SORTSUPPORT_PROC 2
#define FRACTAM_INRANGE_PROC	3
#define FRACTAM_EQUALIMAGE_PROC 4
#define FRACTAM_NPROC			4

/* reloptions */
typedef struct FractamOptions
{
	int32		vl_len_;
	int			fanout;
	int			fillfactor;
	bool		buffering;
	int			compression;	/* offset of the method's name, 0: unset
								 * (fractam.default_compression decides) */
	int			compression_level;	/* 0: the method's default */
} FractamOptions;

#define FRACTAM_DEFAULT_FANOUT		16
#define FRACTAM_DEFAULT_FILLFACTOR	90

/*
 * Per-index comparison state of a backend, in the index's rd_indexcxt (see
 * fractam_index_state: not rd_amcache, which invalidations free)
 */
typedef struct FractamIndexState
{
	MemoryContextCallback context_cb;	/* marks it in rd_indexcxt */
	RelFileNode node;			/* the relfilenode rootcache is about */
	TupleDesc	tupdesc;
	int			nkeyatts;
	bool		key_varlena;	/* a key column has variable width */
	SortSupportData ssup[INDEX_MAX_KEYS];
	bool		hash_known;		/* the next three are set (only unique
								 * inserts need them, see
								 * fractam_index_state_hash) */
	bool		hashable;		/* can the key be hashed for unique locks? */
	FmgrInfo	hashproc[INDEX_MAX_KEYS];	/* a hash opclass's function, */
	bool		hash_image[INDEX_MAX_KEYS];	/* or hash the datum's image */
	Oid			collation[INDEX_MAX_KEYS];
	FtRootCache rootcache;		/* where the root was last seen */
	Size		max_item_size;	/* longest possible index tuple */

	/*
	 * The entry being inserted, deformed once: an insert compares it with
	 * dozens of pivots, messages and items.  Recognized by address; set
	 * only for the duration of one ft_insert.
	 */
	IndexTuple	probe;
	Datum		probe_values[INDEX_MAX_KEYS];
	bool		probe_isnull[INDEX_MAX_KEYS];
	/* where probe_values of short varlenas point (see index_attrs.h) */
	FractamUnpackedShort probe_unpacked[INDEX_MAX_KEYS];
} FractamIndexState;

/*
 * High keys and pivots between leaves keep only the leading key columns
 * needed to separate the two entries they fall between (suffix truncation,
 * see fractam_separator): a truncated key has INDEX_AM_RESERVED_BIT set in
 * t_info (index_form_tuple never sets it, so entries and the whole-entry
 * keys of indexes written before this never have it), its attribute count
 * in t_tid's offset (t_tid's block is InvalidBlockNumber, which no heap TID
 * has), and only that many attributes.  The key columns it lacks and its
 * heap TID compare as minus infinity, as in nbtree's pivot tuples.
 */
#define FRACTAM_TRUNCATED_KEY	INDEX_AM_RESERVED_BIT

static inline bool
fractam_key_is_truncated(IndexTuple itup)
{
	return (itup->t_info & FRACTAM_TRUNCATED_KEY) != 0;
}

/* key columns an entry or a key has (a truncated key fewer than nkeyatts) */
static inline int
fractam_key_natts(FractamIndexState *state, IndexTuple itup)
{
	if (fractam_key_is_truncated(itup))
		return ItemPointerGetOffsetNumberNoCheck(&itup->t_tid);
	return state->nkeyatts;
}

/* index_insert.c: striped locks of the unique check */
#define FRACTAM_UNIQUE_LOCKS 4096
extern void fractam_unique_locks_init(void);

/* index_compare.c */
extern bool fractam_direct_apply;
extern int	fractam_debug_unique_delay;
extern void fractam_index_codec(Relation index, FtCodecId *codec, int *level);

/* index_compare.c */
extern FractamIndexState *fractam_index_state(Relation index);
extern void fractam_index_state_hash(Relation index,
									 FractamIndexState *state);
extern void fractam_index_tree(Relation index, FtTree *tree);
extern int	fractam_compare_items(void *arg, const char *a, Size alen,
								  const char *b, Size blen);
extern int	fractam_compare_keys(FractamIndexState *state, IndexTuple a,
								 IndexTuple b);
extern int	fractam_compare_item_keys(void *arg, const char *a, Size alen,
									  const char *b, Size blen);
extern int	fractam_shared_key_columns(void *arg, const char *a, Size alen,
									   const char *b, Size blen);
extern char *fractam_separator(void *arg, const char *left, Size leftlen,
							   const char *right, Size rightlen,
							   Size *seplen);
extern char *fractam_key_description(Relation index, IndexTuple itup);
extern void fractam_set_probe(FractamIndexState *state, IndexTuple itup);

/* index_handler.c */
extern Datum fractam_index_handler(PG_FUNCTION_ARGS);
extern void fractam_index_init(void);
extern bytea *fractam_options(Datum reloptions, bool validate);

/* index_build.c */
extern IndexBuildResult *fractam_build(Relation heap, Relation index,
									   IndexInfo *indexInfo);
extern void fractam_buildempty(Relation index);

/* index_insert.c */
typedef struct FractamUniqueStats
{
	int64		in_descent;		/* unique inserts decided by the insert's
								 * own descent */
	int64		searched;		/* unique checks that searched the tree */
	int64		waited;			/* waits for a conflicting transaction */
} FractamUniqueStats;

extern void fractam_get_unique_stats(FractamUniqueStats *stats);

/* index_vacuum.c: entries found dead outside VACUUM */
typedef struct FractamPruneTarget
{
	Relation	heap;
	Relation	index;
	Size		freespace;		/* bytes worth freeing; 0: as much as the
								 * table AM will check */
} FractamPruneTarget;

extern FullTransactionId fractam_prune_entries(void *arg, const char **items,
											   const Size *lens, int n,
											   bool *remove);
/* index_prune.c */
extern bool fractam_index_leaf_prune(FtTree *tree, char **items, Size *lens,
									 int nitems, bool rightmost,
									 FtLeafPrune *prune);

extern bool fractam_insert(Relation index, Datum *values, bool *isnull,
						   ItemPointer ht_ctid, Relation heapRel,
						   IndexUniqueCheck checkUnique,
						   bool indexUnchanged,
						   struct IndexInfo *indexInfo);

/* index_scan.c */
extern IndexScanDesc fractam_beginscan(Relation index, int nkeys, int norderbys);
extern void fractam_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
						   ScanKey orderbys, int norderbys);
extern bool fractam_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 fractam_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void fractam_endscan(IndexScanDesc scan);
extern bool fractam_canreturn(Relation index, int attno);

/* index_vacuum.c */
extern IndexBulkDeleteResult *fractam_bulkdelete(IndexVacuumInfo *info,
												 IndexBulkDeleteResult *stats,
												 IndexBulkDeleteCallback callback,
												 void *callback_state);
extern IndexBulkDeleteResult *fractam_vacuumcleanup(IndexVacuumInfo *info,
													IndexBulkDeleteResult *stats);

/* index_cost.c */
extern void fractam_costestimate(PlannerInfo *root, IndexPath *path,
								 double loop_count, Cost *indexStartupCost,
								 Cost *indexTotalCost,
								 Selectivity *indexSelectivity,
								 double *indexCorrelation, double *indexPages);

/* index_validate.c */
extern bool fractam_validate(Oid opclassoid);

/* speculative.c */
struct QueryDesc;
extern void fractam_speculative_prepare(struct QueryDesc *queryDesc);

/* open an index and check it is a fractam index */
extern Oid	fractam_index_am_oid(void);

#endif							/* FRACTAM_INDEX_H */

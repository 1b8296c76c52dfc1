/*-------------------------------------------------------------------------
 *
 * index_search.h
 *	  Search keys: positions between index entries, used to seek scans.
 *
 * A search key compares to entries either by a prefix of key columns
 * (possibly against values of another type of the same operator family)
 * followed by minus or plus infinity, or by one whole entry followed by
 * minus or plus infinity.  It therefore never equals an entry, and seeking
 * to it means "first entry after it" forward or "last entry before it"
 * backward.  The tree's comparator recognizes the search key by its
 * address (see fractam_search_cmp).
 *
 *-------------------------------------------------------------------------
 */
#ifndef INDEX_SEARCH_H
#define INDEX_SEARCH_H

#include "am/index/fractam_index.h"

typedef struct FractamSearchColumn
{
	int			attno;
	FmgrInfo   *cmp;			/* 3-way comparator (column type, arg type) */
	Oid			collation;
	Datum		arg;
	bool		isnull;			/* IS NULL: the key is NULL */
	bool		desc;
	bool		nulls_first;
} FractamSearchColumn;

typedef struct FractamSearchKey
{
	int			nprefix;		/* columns compared; 0 with item == NULL: none */
	FractamSearchColumn col[INDEX_MAX_KEYS];
	IndexTuple	item;			/* or: compare to this whole entry */
	int			tail;			/* -1: minus infinity after, +1: plus */
} FractamSearchKey;

typedef struct FractamSearchCtx
{
	FractamIndexState *state;
	FractamSearchKey *key;		/* the key being sought, or NULL */
} FractamSearchCtx;

extern int	fractam_search_cmp(void *arg, const char *a, Size alen,
							   const char *b, Size blen);
extern void fractam_search_tree(Relation index, FtTree *tree,
								FractamSearchCtx *ctx);

#endif							/* INDEX_SEARCH_H */

/*-------------------------------------------------------------------------
 *
 * index_cost.c
 *	  Planner cost estimates.
 *
 * fractam indexes answer the same qualifications as btree indexes with
 * about the same page accesses (one cached buffer node more per descent),
 * so they are costed with btree's estimator: the planner then uses a
 * fractam index wherever it would use a btree.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/index/fractam_index.h"
#include "utils/index_selfuncs.h"

void
fractam_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					 Cost *indexStartupCost, Cost *indexTotalCost,
					 Selectivity *indexSelectivity, double *indexCorrelation,
					 double *indexPages)
{
	btcostestimate(root, path, loop_count, indexStartupCost, indexTotalCost,
				   indexSelectivity, indexCorrelation, indexPages);
}

/*-------------------------------------------------------------------------
 *
 * executor_hook.c
 *	  Adjust a query's executor state right after ExecutorStart.
 *
 * Both access methods need a word in before a query runs: the index AM
 * opens fractam unique indexes for INSERT ... ON CONFLICT itself
 * (src/am/index/speculative.c), and the table AM turns off bitmap heap
 * scan prefetching of fractam tables (src/am/table/table_executor.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/fractam.h"
#include "am/index/fractam_index.h"
#include "am/table/fractam_table.h"
#include "executor/executor.h"

static ExecutorStart_hook_type prev_executor_start = NULL;

static void
fractam_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	fractam_speculative_prepare(queryDesc);
	fractam_table_prepare_plan(queryDesc);
}

void
fractam_install_executor_hook(void)
{
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = fractam_executor_start;
}

/*-------------------------------------------------------------------------
 *
 * fractam_module.c
 *	  Library initialization: the preload check, then each layer's and
 *	  each access method's own init.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/fractam.h"
#include "am/index/fractam_index.h"
#include "am/table/fractam_table.h"
#include "fmgr.h"
#include "ft/ft.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "wal/ft_xlog.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	/*
	 * WAL records of a custom resource manager can only be replayed if the
	 * library is loaded before recovery starts, so fractam refuses to run
	 * any other way.
	 */
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fractam must be loaded via shared_preload_libraries"),
				 errhint("Add fractam to shared_preload_libraries in postgresql.conf and restart the server.")));

	ft_register_rmgr();
	ft_init();
	fractam_index_init();
	fractam_table_init();
	fractam_install_utility_hook();
	fractam_install_executor_hook();
	MarkGUCPrefixReserved("fractam");
}

/*-------------------------------------------------------------------------
 *
 * utility_hook.c
 *	  Make "USING fractam" work in CREATE INDEX and on partitioned tables.
 *
 * pg_am names are unique, and "fractam" is reserved for the table access
 * method, so the index access method is cataloged as fractam_index.  This
 * hook rewrites the access method name "fractam" to fractam_index in
 * CREATE INDEX, in EXCLUDE constraints and in operator class / family
 * commands, before standard processing.  It also lets a partitioned table
 * pass fractam on to its new partitions (src/am/table/table_partition.c),
 * and keeps fractam's storage parameters of tables (fanout) away from
 * heap's validation (src/am/table/table_options.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/fractam.h"
#include "am/index/fractam_index.h"
#include "am/table/fractam_table.h"
#include "catalog/namespace.h"
#include "commands/tablecmds.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"

static ProcessUtility_hook_type prev_utility_hook = NULL;

static bool
map_name(char **name)
{
	if (*name && strcmp(*name, "fractam") == 0)
	{
		*name = pstrdup(FRACTAM_INDEX_AM_NAME);
		return true;
	}
	return false;
}

static bool
needs_mapping(Node *stmt)
{
	ListCell   *lc;

	switch (nodeTag(stmt))
	{
		case T_IndexStmt:
			return ((IndexStmt *) stmt)->accessMethod &&
				strcmp(((IndexStmt *) stmt)->accessMethod, "fractam") == 0;
		case T_CreateOpClassStmt:
			return strcmp(((CreateOpClassStmt *) stmt)->amname, "fractam") == 0;
		case T_CreateOpFamilyStmt:
			return strcmp(((CreateOpFamilyStmt *) stmt)->amname, "fractam") == 0;
		case T_AlterOpFamilyStmt:
			return strcmp(((AlterOpFamilyStmt *) stmt)->amname, "fractam") == 0;
		case T_CreateStmt:
			foreach(lc, ((CreateStmt *) stmt)->constraints)
			{
				Constraint *c = lfirst(lc);

				if (c->access_method && strcmp(c->access_method, "fractam") == 0)
					return true;
			}
			foreach(lc, ((CreateStmt *) stmt)->tableElts)
			{
				Node	   *n = lfirst(lc);

				if (IsA(n, Constraint) && ((Constraint *) n)->access_method &&
					strcmp(((Constraint *) n)->access_method, "fractam") == 0)
					return true;
			}
			return false;
		case T_AlterTableStmt:
			foreach(lc, ((AlterTableStmt *) stmt)->cmds)
			{
				AlterTableCmd *cmd = lfirst(lc);

				if (cmd->def && IsA(cmd->def, Constraint) &&
					((Constraint *) cmd->def)->access_method &&
					strcmp(((Constraint *) cmd->def)->access_method, "fractam") == 0)
					return true;
			}
			return false;
		default:
			return false;
	}
}

/*
 * An index created without the compression option takes
 * fractam.default_compression's, written into its options so that it
 * stays that way and pg_dump shows it (nothing is added for "none", the
 * meaning of no option).
 */
static void
add_default_compression(IndexStmt *stmt)
{
	ListCell   *lc;

	if (fractam_default_compression == FT_CODEC_NONE)
		return;
	foreach(lc, stmt->options)
	{
		DefElem    *def = lfirst(lc);

		if (def->defnamespace == NULL &&
			strcmp(def->defname, "compression") == 0)
			return;
	}
	stmt->options = lappend(stmt->options,
							makeDefElem("compression",
										(Node *) makeString(pstrdup(ft_codec_name(fractam_default_compression))),
										-1));
}

static void
apply_mapping(Node *stmt)
{
	ListCell   *lc;

	switch (nodeTag(stmt))
	{
		case T_IndexStmt:
			map_name(&((IndexStmt *) stmt)->accessMethod);
			add_default_compression((IndexStmt *) stmt);
			break;
		case T_CreateOpClassStmt:
			map_name(&((CreateOpClassStmt *) stmt)->amname);
			break;
		case T_CreateOpFamilyStmt:
			map_name(&((CreateOpFamilyStmt *) stmt)->amname);
			break;
		case T_AlterOpFamilyStmt:
			map_name(&((AlterOpFamilyStmt *) stmt)->amname);
			break;
		case T_CreateStmt:
			foreach(lc, ((CreateStmt *) stmt)->constraints)
				map_name(&((Constraint *) lfirst(lc))->access_method);
			foreach(lc, ((CreateStmt *) stmt)->tableElts)
			{
				if (IsA(lfirst(lc), Constraint))
					map_name(&((Constraint *) lfirst(lc))->access_method);
			}
			break;
		case T_AlterTableStmt:
			foreach(lc, ((AlterTableStmt *) stmt)->cmds)
			{
				AlterTableCmd *cmd = lfirst(lc);

				if (cmd->def && IsA(cmd->def, Constraint))
					map_name(&((Constraint *) cmd->def)->access_method);
			}
			break;
		default:
			break;
	}
}

/* how many statements this hook is running standard processing for */
static int	utility_depth = 0;

int
fractam_utility_depth(void)
{
	return utility_depth;
}

static void
run_standard(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			 ProcessUtilityContext context, ParamListInfo params,
			 QueryEnvironment *queryEnv, DestReceiver *dest,
			 QueryCompletion *qc)
{
	utility_depth++;
	PG_TRY();
	{
		if (prev_utility_hook)
			prev_utility_hook(pstmt, queryString, readOnlyTree, context,
							  params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);

		/*
		 * A load's kept rows are stored by its end (finish_bulk_insert),
		 * except a COPY's that inserted row by row, which has none: by the
		 * end of the statement, then (table_modify.c, KeptRows).
		 */
		fractam_flush_kept_rows();
	}
	PG_FINALLY();
	{
		utility_depth--;
	}
	PG_END_TRY();
}

static void
fractam_utility(PlannedStmt *pstmt, const char *queryString,
				bool readOnlyTree, ProcessUtilityContext context,
				ParamListInfo params, QueryEnvironment *queryEnv,
				DestReceiver *dest, QueryCompletion *qc)
{
	RangeVar   *mark = NULL;
	bool		mark_on = false;
	FractamTableOptionsWork *options = NULL;
	Oid			mark_relid = InvalidOid;

	if (needs_mapping(pstmt->utilityStmt))
	{
		if (readOnlyTree)
			pstmt = copyObject(pstmt);
		readOnlyTree = false;
		apply_mapping(pstmt->utilityStmt);
	}
	if (fractam_partition_needs_rewrite(pstmt->utilityStmt))
	{
		if (readOnlyTree)
			pstmt = copyObject(pstmt);
		readOnlyTree = false;
		fractam_partition_rewrite(pstmt->utilityStmt, &mark, &mark_on);
	}
	if (mark && IsA(pstmt->utilityStmt, AlterTableStmt))
	{
		/* the mark needs the lock SET ACCESS METHOD takes: no upgrade later */
		PreventCommandIfReadOnly("ALTER TABLE");
		PreventCommandDuringRecovery("ALTER TABLE");
		mark_relid = RangeVarGetRelidExtended(mark, AccessExclusiveLock,
											  ((AlterTableStmt *) pstmt->utilityStmt)->missing_ok ?
											  RVR_MISSING_OK : 0,
											  RangeVarCallbackOwnsRelation, NULL);
	}
	if (fractam_table_options_needs_rewrite(pstmt->utilityStmt))
	{
		if (readOnlyTree)
			pstmt = copyObject(pstmt);
		readOnlyTree = false;
		options = fractam_table_options_rewrite(pstmt->utilityStmt);
	}
	else if (mark && IsA(pstmt->utilityStmt, CreateStmt))
		options = fractam_table_options_capture();	/* which table is made */

	if (options)
	{
		/* the statement's relations take its options while it runs */
		fractam_table_options_push(options);
		PG_TRY();
		{
			run_standard(pstmt, queryString, readOnlyTree, context, params,
						 queryEnv, dest, qc);
		}
		PG_FINALLY();
		{
			fractam_table_options_pop(options);
		}
		PG_END_TRY();
	}
	else
		run_standard(pstmt, queryString, readOnlyTree, context, params,
					 queryEnv, dest, qc);

	if (mark && IsA(pstmt->utilityStmt, CreateStmt))
	{
		/* the table the CREATE made, by OID (IF NOT EXISTS: none) */
		Oid			relid = fractam_table_options_relid(options);

		if (OidIsValid(relid))
			fractam_partition_mark(relid, mark_on);
	}
	else if (OidIsValid(mark_relid))
		fractam_partition_mark(mark_relid, mark_on);
	if (options)
		fractam_table_options_apply(options);
}

void
fractam_install_utility_hook(void)
{
	prev_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = fractam_utility;
}

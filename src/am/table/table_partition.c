/*-------------------------------------------------------------------------
 *
 * table_partition.c
 *	  Partitioned tables whose new partitions are fractam tables.
 *
 * PostgreSQL 15 refuses "USING" on a partitioned table and creates each
 * new partition with default_table_access_method, so daily partitions of
 * a table meant for fractam would silently become heap.  The utility hook
 * (src/am/utility_hook.c) fills that gap the way PostgreSQL 17 does:
 *
 * - CREATE TABLE ... PARTITION BY ... USING fractam creates the
 *   partitioned table without the clause and marks it with the reloption
 *   fractam_partitions = true, written into pg_class.reloptions after
 *   creation (PostgreSQL would refuse it as a storage parameter of a
 *   partitioned table), so pg_dump dumps it ("WITH (fractam_partitions=
 *   'true')", which this hook accepts again on restore) and ROLLBACK
 *   undoes it;
 * - CREATE TABLE ... PARTITION OF a marked table without USING creates a
 *   fractam partition (a partitioned partition is marked in turn);
 * - ALTER TABLE ... SET ACCESS METHOD fractam | heap on a partitioned table
 *   sets or clears the mark: it changes only partitions created later.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "am/table/fractam_table.h"
#include "catalog/catalog.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#define PARTITIONS_OPTION	"fractam_partitions"

/* Does the partitioned table relid pass fractam on to new partitions? */
static bool
passes_fractam(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		result = false;

	if (!HeapTupleIsValid(tup))
		return false;
	if (((Form_pg_class) GETSTRUCT(tup))->relkind == RELKIND_PARTITIONED_TABLE)
	{
		bool		isnull;
		Datum		datum = SysCacheGetAttr(RELOID, tup,
											Anum_pg_class_reloptions, &isnull);
		ListCell   *lc;

		if (!isnull)
			foreach(lc, untransformRelOptions(datum))
			{
				DefElem    *def = lfirst(lc);

				if (strcmp(def->defname, PARTITIONS_OPTION) == 0)
					result = defGetBoolean(def);
			}
	}
	ReleaseSysCache(tup);
	return result;
}

static bool
is_partitioned_table(RangeVar *rv)
{
	Oid			relid = RangeVarGetRelid(rv, NoLock, true);

	return OidIsValid(relid) &&
		get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE;
}

/* Is the statement one fractam_partition_rewrite changes? */
bool
fractam_partition_needs_rewrite(Node *stmt)
{
	ListCell   *lc;

	if (IsA(stmt, CreateStmt))
	{
		CreateStmt *cs = (CreateStmt *) stmt;

		if (cs->partspec &&
			((cs->accessMethod && strcmp(cs->accessMethod, "fractam") == 0) ||
			 cs->options != NIL))
			return true;
		return cs->partbound && cs->accessMethod == NULL &&
			list_length(cs->inhRelations) == 1;
	}
	if (IsA(stmt, AlterTableStmt))
	{
		AlterTableStmt *as = (AlterTableStmt *) stmt;

		if (as->objtype != OBJECT_TABLE)
			return false;
		foreach(lc, as->cmds)
		{
			AlterTableCmd *cmd = lfirst(lc);

			if (cmd->subtype == AT_SetAccessMethod)
				return is_partitioned_table(as->relation);
		}
	}
	return false;
}

/*
 * Rewrite the statement before standard processing (a copy the caller
 * owns).  Sets *mark to the partitioned table whose mark is to be set
 * (*mark_on) or cleared once the statement ran, or leaves it NULL.
 */
void
fractam_partition_rewrite(Node *stmt, RangeVar **mark, bool *mark_on)
{
	*mark = NULL;
	if (IsA(stmt, CreateStmt))
	{
		CreateStmt *cs = (CreateStmt *) stmt;

		/* a new partition of a marked table is a fractam table */
		if (cs->partbound && cs->accessMethod == NULL &&
			list_length(cs->inhRelations) == 1)
		{
			Oid			parent = RangeVarGetRelid(linitial(cs->inhRelations),
												  NoLock, true);

			if (OidIsValid(parent) && passes_fractam(parent))
				cs->accessMethod = pstrdup("fractam");
		}
		if (cs->partspec)
		{
			List	   *options = NIL;
			ListCell   *lc;

			if (cs->accessMethod && strcmp(cs->accessMethod, "fractam") == 0)
			{
				cs->accessMethod = NULL;
				*mark = cs->relation;
				*mark_on = true;
			}
			/* the mark itself, as pg_dump writes it */
			foreach(lc, cs->options)
			{
				DefElem    *def = lfirst(lc);

				if (def->defnamespace == NULL &&
					strcmp(def->defname, PARTITIONS_OPTION) == 0)
				{
					*mark = cs->relation;
					*mark_on = defGetBoolean(def);
				}
				else
					options = lappend(options, def);
			}
			/*
			 * (The hook marks the table this statement makes, known by its
			 * OID: none if IF NOT EXISTS finds one.)
			 */
			cs->options = options;
		}
		return;
	}
	if (IsA(stmt, AlterTableStmt))
	{
		AlterTableStmt *as = (AlterTableStmt *) stmt;
		List	   *cmds = NIL;
		ListCell   *lc;

		foreach(lc, as->cmds)
		{
			AlterTableCmd *cmd = lfirst(lc);

			if (cmd->subtype != AT_SetAccessMethod)
			{
				cmds = lappend(cmds, cmd);
				continue;
			}
			if (strcmp(cmd->name, "fractam") != 0 &&
				strcmp(cmd->name, "heap") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("access method \"%s\" cannot be set on a partitioned table",
								cmd->name),
						 errdetail("fractam lets a partitioned table pass \"fractam\" or \"heap\" on to the partitions created later.")));
			*mark = as->relation;
			*mark_on = strcmp(cmd->name, "fractam") == 0;
		}
		if (cmds == NIL)
		{
			/* an empty SET: PostgreSQL checks the statement, does nothing */
			AlterTableCmd *cmd = makeNode(AlterTableCmd);

			cmd->subtype = AT_SetRelOptions;
			cmds = list_make1(cmd);
		}
		as->cmds = cmds;
		return;
	}
}

/*
 * Set or clear the mark of a partitioned table (the statement that
 * created or altered it has run): pg_class.reloptions, transactional.
 */
void
fractam_partition_mark(Oid relid, bool on)
{
	List	   *def;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a partitioned table", get_rel_name(relid))));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));

	/* (a RESET names the option without a value) */
	def = list_make1(makeDefElem(pstrdup(PARTITIONS_OPTION),
								 on ? (Node *) makeString(pstrdup("true")) : NULL,
								 -1));
	fractam_reloptions_update(relid, on ? def : NIL, on ? NIL : def);
	CommandCounterIncrement();
}

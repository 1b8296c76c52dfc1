/*-------------------------------------------------------------------------
 *
 * ft_decode.c
 *	  rm_decode for fractam's WAL records: logical decoding of fractam
 *	  tables.
 *
 * Tree records (page changes of tables and indexes) carry nothing to
 * decode: a row may reach its page in a leaf insert, a flush, a split image
 * or a build, and a delete is an in-place patch of a header.  Instead, with
 * wal_level = logical the table AM writes one XLOG_FT_LOGICAL record per
 * row change (src/am/table/table_logical.c), and this turns it into the
 * change heap's decoder would queue for the same statement: an INSERT,
 * UPDATE or DELETE with heap-format tuples, which the reorder buffer
 * replays at commit in WAL order with the transaction's other changes,
 * reassembles TOAST values for (the TOAST table is a heap), and hands to
 * the output plugin.
 *
 * An error in decoding stops every slot of the database at this record for
 * good, so the only one raised is for a record whose lengths do not add up:
 * it was built by this module and passed the WAL CRC, so that is
 * corruption, which must not be skipped silently (heap's decoder fails on
 * a bad record too).
 *
 * INSERT ... ON CONFLICT follows heap's protocol: a speculative insertion
 * with its row, then a confirmation (the reorder buffer then applies it as
 * an INSERT) or an abort (it drops the row and the TOAST chunks gathered
 * for it; without that, the next change of the transaction would look for
 * them).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/reorderbuffer.h"
#include "replication/snapbuild.h"
#include "wal/ft_xlog.h"

/* A tuple of the record as the reorder buffer's own copy */
static ReorderBufferTupleBuf *
decode_tuple(ReorderBuffer *rb, const char *data, uint32 len)
{
	ReorderBufferTupleBuf *tuple;

	if (len < SizeofHeapTupleHeader)
		elog(ERROR, "fractam decode: row of %u bytes is shorter than its header",
			 len);
	tuple = ReorderBufferGetTupleBuf(rb, len - SizeofHeapTupleHeader);
	memcpy(tuple->tuple.t_data, data, len);
	tuple->tuple.t_len = len;
	ItemPointerSetInvalid(&tuple->tuple.t_self);
	tuple->tuple.t_tableOid = InvalidOid;
	return tuple;
}

static void
decode_row_change(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	char	   *data = XLogRecGetData(r);
	Size		datalen = XLogRecGetDataLen(r);
	xl_ft_logical xlrec;
	ReorderBufferChange *change;

	if (datalen < sizeof(xlrec))
		elog(ERROR, "fractam decode: row change record of %zu bytes at %X/%X is too short",
			 datalen, LSN_FORMAT_ARGS(buf->origptr));
	memcpy(&xlrec, data, sizeof(xlrec));
	if (sizeof(xlrec) + (Size) xlrec.newlen + xlrec.oldlen != datalen ||
		xlrec.action < FT_LOGICAL_INSERT ||
		xlrec.action > FT_LOGICAL_SPEC_ABORT ||
		(xlrec.newlen > 0) != (xlrec.action == FT_LOGICAL_INSERT ||
							   xlrec.action == FT_LOGICAL_UPDATE ||
							   xlrec.action == FT_LOGICAL_SPEC_INSERT) ||
		(xlrec.oldlen > 0 && xlrec.action != FT_LOGICAL_UPDATE &&
		 xlrec.action != FT_LOGICAL_DELETE))
		elog(ERROR, "fractam decode: malformed row change record at %X/%X",
			 LSN_FORMAT_ARGS(buf->origptr));

	/* only this slot's database, and origins the plugin wants */
	if (xlrec.node.dbNode != ctx->slot->data.database)
		return;
	if (ctx->callbacks.filter_by_origin_cb &&
		filter_by_origin_cb_wrapper(ctx, XLogRecGetOrigin(r)))
		return;

	change = ReorderBufferGetChange(ctx->reorder);
	switch (xlrec.action)
	{
		case FT_LOGICAL_INSERT:
			change->action = REORDER_BUFFER_CHANGE_INSERT;
			break;
		case FT_LOGICAL_UPDATE:
			change->action = REORDER_BUFFER_CHANGE_UPDATE;
			break;
		case FT_LOGICAL_DELETE:
			change->action = REORDER_BUFFER_CHANGE_DELETE;
			break;
		case FT_LOGICAL_SPEC_INSERT:
			change->action = REORDER_BUFFER_CHANGE_INTERNAL_SPEC_INSERT;
			break;
		case FT_LOGICAL_SPEC_CONFIRM:
			change->action = REORDER_BUFFER_CHANGE_INTERNAL_SPEC_CONFIRM;
			break;
		default:
			change->action = REORDER_BUFFER_CHANGE_INTERNAL_SPEC_ABORT;
			break;
	}
	change->origin_id = XLogRecGetOrigin(r);
	change->data.tp.relnode = xlrec.node;
	data += sizeof(xlrec);
	if (xlrec.newlen > 0)
		change->data.tp.newtuple = decode_tuple(ctx->reorder, data,
												xlrec.newlen);
	if (xlrec.oldlen > 0)
		change->data.tp.oldtuple = decode_tuple(ctx->reorder,
												data + xlrec.newlen,
												xlrec.oldlen);
	/* TOAST chunks gathered for this row are not needed after it */
	change->data.tp.clear_toast_afterwards = true;
	ReorderBufferQueueChange(ctx->reorder, XLogRecGetXid(r), buf->origptr,
							 change, false);
}

void
ft_decode(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	TransactionId xid = XLogRecGetXid(r);
	uint8		info = XLogRecGetInfo(r) & ~XLR_INFO_MASK;

	/* every record: the reorder buffer learns of the transaction */
	ReorderBufferProcessXid(ctx->reorder, xid, buf->origptr);

	if (info != XLOG_FT_LOGICAL)
		return;
	/* as heap's decoder: no changes before a consistent snapshot */
	if (SnapBuildCurrentState(ctx->snapshot_builder) < SNAPBUILD_FULL_SNAPSHOT ||
		ctx->fast_forward)
		return;
	if (!SnapBuildProcessChange(ctx->snapshot_builder, xid, buf->origptr))
		return;
	decode_row_change(ctx, buf);
}

/*-------------------------------------------------------------------------
 *
 * ft_desc.c
 *	  rm_desc and rm_identify for fractam's WAL records.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_page.h"
#include "wal/ft_xlog.h"

void
ft_desc(StringInfo buf, XLogReaderState *record)
{
	char	   *rec = XLogRecGetData(record);
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	switch (info)
	{
		case XLOG_FT_APPEND:
			{
				xl_ft_append xlrec;

				memcpy(&xlrec, rec, sizeof(xlrec));
				appendStringInfo(buf, "first %u, items %u", xlrec.first,
								 xlrec.nitems);
			}
			break;
		case XLOG_FT_INSERT:
		case XLOG_FT_INSERT_MSG:
			{
				OffsetNumber off;

				memcpy(&off, rec, sizeof(OffsetNumber));
				appendStringInfo(buf, "off %u", off);
				if (info == XLOG_FT_INSERT_MSG &&
					XLogRecGetDataLen(record) == SizeOfFtInsertMsgOld)
				{
					uint64		msn;

					memcpy(&msn, rec + SizeOfFtInsert, sizeof(msn));
					appendStringInfo(buf, ", msn " UINT64_FORMAT, msn);
				}
				else if (info == XLOG_FT_INSERT_MSG &&
						 XLogRecHasBlockRef(record, 0))
				{
					Size		len = 0;
					char	   *item = XLogRecGetBlockData(record, 0, &len);
					FtMsgHeader hdr;

					if (item != NULL && len >= sizeof(hdr))
					{
						memcpy(&hdr, item, sizeof(hdr));
						appendStringInfo(buf, ", msn " UINT64_FORMAT,
										 (uint64) FtMsgMsn(&hdr));
					}
				}
				break;
			}
		case XLOG_FT_FLUSH:
			{
				xl_ft_flush *xlrec = (xl_ft_flush *) rec;

				appendStringInfo(buf, "slice off %u n %u, pivots at %u n %u, leaves %u%s%s",
								 xlrec->slice_first, xlrec->nslice,
								 xlrec->pivot_off, xlrec->npivots,
								 xlrec->nleaves,
								 (xlrec->flags & FT_XL_LEAF_DELTA) ?
								 (xlrec->nleaves > 1 ? " (first in place, others new)" : " (in place)") : "",
								 (xlrec->flags & FT_XL_COUNT_FLUSH) ? "" : " (direct split)");
				break;
			}
		case XLOG_FT_IMAGES:
			{
				xl_ft_images *xlrec = (xl_ft_images *) rec;
				const char *reason;

				switch (xlrec->reason)
				{
					case FT_IMAGES_BUILD:
						reason = "build";
						break;
					case FT_IMAGES_SPLIT:
						reason = "split";
						break;
					case FT_IMAGES_NEWROOT:
						reason = "new root";
						break;
					case FT_IMAGES_DELETE:
						reason = "delete page";
						break;
					case FT_IMAGES_DELETE_UPPER:
						reason = "delete level-2 node";
						break;
					case FT_IMAGES_EMPTIED:
						reason = "compressed leaf emptied";
						break;
					case FT_IMAGES_RECOMPRESSED:
						reason = "compressed leaf rewritten";
						break;
					case FT_IMAGES_MERGED:
						reason = "leaves merged into a compressed leaf";
						break;
					case FT_IMAGES_MERGED_RELINK:
						reason = "leaves merged into a compressed leaf (left sibling relinked)";
						break;
					case FT_IMAGES_DELETE_RELINK:
						reason = "delete page (left sibling relinked)";
						break;
					case FT_IMAGES_MERGED_PIVOTS:
						reason = "leaves merged into a compressed leaf (node's pivots dropped, left sibling relinked)";
						break;
					default:
						reason = "unknown";
						break;
				}
				appendStringInfo(buf, "%s, %u blocks", reason, xlrec->nblocks);
				break;
			}
		case XLOG_FT_VACUUM:
			{
				xl_ft_vacuum *xlrec = (xl_ft_vacuum *) rec;

				appendStringInfo(buf, "ndeleted %u", xlrec->ndeleted);
				break;
			}
		case XLOG_FT_FRAME_DEAD:
			if (XLogRecGetDataLen(record) == sizeof(xl_ft_frame_change))
			{
				xl_ft_frame_change xlrec;

				memcpy(&xlrec, rec, sizeof(xlrec));
				appendStringInfo(buf, "change, stamp " UINT64_FORMAT,
								 xlrec.stamp);
			}
			else
			{
				xl_ft_frame_dead xlrec;

				memcpy(&xlrec, rec, sizeof(xlrec));
				appendStringInfo(buf, "ndead %u, stamp " UINT64_FORMAT,
								 xlrec.ndead, xlrec.stamp);
			}
			break;
		case XLOG_FT_PRUNE:
			{
				xl_ft_prune xlrec;

				memcpy(&xlrec, rec, sizeof(xlrec));
				appendStringInfo(buf, "ndeleted %u, ninserted %u",
								 xlrec.ndeleted, xlrec.ninserted);
				break;
			}
		case XLOG_FT_MOVE:
			{
				xl_ft_move *xlrec = (xl_ft_move *) rec;

				appendStringInfo(buf, "nmoved %u, lower msn " UINT64_FORMAT,
								 xlrec->nmoved, xlrec->lower_msn);
				break;
			}
		case XLOG_FT_PATCH:
			if (XLogRecGetDataLen(record) == sizeof(xl_ft_transform))
			{
				xl_ft_transform xlrec;

				memcpy(&xlrec, rec, sizeof(xlrec));
				appendStringInfo(buf, "off %u, transform %u", xlrec.off,
								 xlrec.transform);
				break;
			}
			{
				xl_ft_patch xlrec;

				memcpy(&xlrec, rec, sizeof(xlrec));
				appendStringInfo(buf, "off %u, bytes %u..%u",
								 xlrec.off, xlrec.start,
								 xlrec.start + xlrec.len);
				break;
			}
		case XLOG_FT_PATCHES:
			{
				uint16		npatches;

				memcpy(&npatches, rec, sizeof(npatches));
				appendStringInfo(buf, "npatches %u", npatches);
				break;
			}
		case XLOG_FT_META_SEQ:
			{
				uint64		seq;

				memcpy(&seq, rec, sizeof(seq));
				appendStringInfo(buf, "seq " UINT64_FORMAT, seq);
				if (XLogRecGetDataLen(record) >= sizeof(uint64) + sizeof(uint32))
				{
					uint32		nfree;

					memcpy(&nfree, rec + sizeof(uint64), sizeof(nfree));
					appendStringInfo(buf, "; %u ranges given back", nfree);
				}
				break;
			}
		case XLOG_FT_VM_SET:
		case XLOG_FT_VM_CLEAR:
			{
				xl_ft_vm	xlrec;

				memcpy(&xlrec, rec, sizeof(xlrec));
				appendStringInfo(buf, "tid block %u, flags 0x%02X, cutoff xid %u",
								 xlrec.heapblk, xlrec.flags, xlrec.cutoff_xid);
				break;
			}
		case XLOG_FT_LOGICAL:
			{
				xl_ft_logical xlrec;

				memcpy(&xlrec, rec, sizeof(xlrec));
				appendStringInfo(buf, "rel %u/%u/%u %s, new %u bytes, old %u bytes",
								 xlrec.node.spcNode, xlrec.node.dbNode,
								 xlrec.node.relNode,
								 xlrec.action == FT_LOGICAL_INSERT ? "insert" :
								 xlrec.action == FT_LOGICAL_UPDATE ? "update" :
								 xlrec.action == FT_LOGICAL_DELETE ? "delete" :
								 xlrec.action == FT_LOGICAL_SPEC_INSERT ? "speculative insert" :
								 xlrec.action == FT_LOGICAL_SPEC_CONFIRM ? "speculative confirm" :
								 xlrec.action == FT_LOGICAL_SPEC_ABORT ? "speculative abort" :
								 "unknown action",
								 xlrec.newlen, xlrec.oldlen);
				break;
			}
		case XLOG_FT_REUSE:
			{
				xl_ft_reuse *xlrec = (xl_ft_reuse *) rec;

				if (xlrec->block == InvalidBlockNumber)
					appendStringInfo(buf, "rel %u/%u/%u removal horizon %u:%u",
									 xlrec->node.spcNode, xlrec->node.dbNode,
									 xlrec->node.relNode,
									 EpochFromFullTransactionId(xlrec->safexid),
									 XidFromFullTransactionId(xlrec->safexid));
				else
					appendStringInfo(buf, "rel %u/%u/%u blk %u safexid %u:%u",
									 xlrec->node.spcNode, xlrec->node.dbNode,
									 xlrec->node.relNode, xlrec->block,
									 EpochFromFullTransactionId(xlrec->safexid),
									 XidFromFullTransactionId(xlrec->safexid));
				break;
			}
	}
}

const char *
ft_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_FT_INSERT:
			return "INSERT";
		case XLOG_FT_APPEND:
			return "APPEND";
		case XLOG_FT_INSERT_MSG:
			return "INSERT_MSG";
		case XLOG_FT_FLUSH:
			return "FLUSH";
		case XLOG_FT_IMAGES:
			return "IMAGES";
		case XLOG_FT_VACUUM:
			return "VACUUM";
		case XLOG_FT_PRUNE:
			return "PRUNE";
		case XLOG_FT_FRAME_DEAD:
			return "FRAME_DEAD";
		case XLOG_FT_REUSE:
			return "REUSE";
		case XLOG_FT_MOVE:
			return "MOVE";
		case XLOG_FT_PATCH:
			return "PATCH";
		case XLOG_FT_PATCHES:
			return "PATCHES";
		case XLOG_FT_META_SEQ:
			return "META_SEQ";
		case XLOG_FT_VM_SET:
			return "VM_SET";
		case XLOG_FT_VM_CLEAR:
			return "VM_CLEAR";
		case XLOG_FT_LOGICAL:
			return "LOGICAL";
	}
	return NULL;
}

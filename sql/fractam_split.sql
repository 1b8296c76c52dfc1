--
-- fractam_split: leaf splits must be balanced.  Random inserts into a
-- bulk-built index split full leaves; if a split left one page full and
-- moved only the new entry right, every later insert into the full page
-- would split again and the index would fill with nearly empty leaves.
--
CREATE TABLE sp (a int);
INSERT INTO sp SELECT (i * 7919) % 200003 FROM generate_series(1, 100000) i;
CREATE INDEX sp_a ON sp USING fractam (a) WITH (fillfactor = 100);
-- direct apply (cached leaves) and buffered flushes both split leaves
INSERT INTO sp SELECT (i * 104729) % 200003 FROM generate_series(1, 20000) i;
SET fractam.direct_apply = off;
INSERT INTO sp SELECT (i::int8 * 15485863 % 200003)::int FROM generate_series(1, 20000) i;
RESET fractam.direct_apply;
SELECT fractam_verify('sp_a');
-- an int4 entry takes 20 bytes, so a full leaf holds ~400: after splits
-- the average must stay well above a third of that
SELECT leaf_items + buffered_messages = 140000 AS all_entries,
       leaf_items::float8 / leaf_pages > 150 AS leaves_not_sparse
FROM fractam_stats('sp_a');
-- an insert into a just-split leaf must not split it again
SELECT splits AS before FROM fractam_stats('sp_a') \gset
INSERT INTO sp VALUES (1), (3), (5);
SELECT splits - :before <= 1 AS at_most_one_split FROM fractam_stats('sp_a');
DROP TABLE sp;

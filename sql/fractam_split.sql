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

-- keys that grow at the end of many ranges at once, like (price, time) or
-- (sensor, timestamp): every category appends at its own right end.  The
-- leaves left behind get nothing more, so they must be cut full (to
-- fillfactor), not in the middle, or the index ends up half empty.
CREATE TABLE ap (c int, t int);
CREATE INDEX ap_ct ON ap USING fractam (c, t);
INSERT INTO ap SELECT 0, 0;
-- buffered: flushes bring batches that all fall at one place of a leaf
SET fractam.direct_apply = off;
INSERT INTO ap SELECT i % 50, i FROM generate_series(1, 100000) i;
-- an (int4, int4) entry takes 24 bytes, ~340 fit a leaf; cut in the
-- middle, the leaves keep ~250
SELECT leaf_items + buffered_messages = 100001 AS all_entries,
       leaf_items::float8 / leaf_pages > 290 AS leaves_filled
FROM fractam_stats('ap_ct');
RESET fractam.direct_apply;
INSERT INTO ap SELECT i % 50, i FROM generate_series(100001, 200000) i;
SELECT fractam_verify('ap_ct');
SELECT leaf_items + buffered_messages = 200001 AS all_entries FROM fractam_stats('ap_ct');
DROP TABLE ap;

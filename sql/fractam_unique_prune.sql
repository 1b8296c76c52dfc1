--
-- fractam_unique_prune: a unique insert removes the entries of its key whose
-- rows are dead to every transaction (the table AM's index_delete_tuples
-- confirms them, as for nbtree's simple deletion).  A fractam table keeps no
-- update chain behind one index entry, so every UPDATE adds an entry with the
-- row's key; without the pruning each key's run grows until VACUUM and every
-- later UPDATE of the row checks all of it.  The runs must stay short, the
-- entries of rows some snapshot still sees must stay
-- (specs/fractam_unique_prune_snapshot.spec), and the answers must not change.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

-- no autovacuum: only the pruning can keep the index small
CREATE TABLE up_f (k int, v int) USING fractam WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX up_f_k ON up_f USING fractam (k);
-- a heap table whose updates are not HOT (v is indexed): the same for
-- heap's index_delete_tuples
CREATE TABLE up_h (k int, v int) USING heap WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX up_h_k ON up_h USING fractam (k);
CREATE INDEX up_h_v ON up_h (v);
INSERT INTO up_f SELECT g, 0 FROM generate_series(1, 5) g;
INSERT INTO up_h SELECT g, 0 FROM generate_series(1, 5) g;

-- 600 updates, each its own transaction (COMMIT inside the DO block), 120
-- per row, plus some rolled back
DO $$
BEGIN
	FOR i IN 1 .. 600 LOOP
		UPDATE up_f SET v = v + 1 WHERE k = 1 + i % 5;
		UPDATE up_h SET v = v + 1 WHERE k = 1 + i % 5;
		IF i % 50 = 0 THEN
			ROLLBACK;
		ELSE
			COMMIT;
		END IF;
	END LOOP;
END $$;

-- 600 row versions died, yet each index holds a few entries per key
SELECT (SELECT leaf_items + buffered_messages FROM fractam_stats('up_f_k')) < 30
	AS f_index_small,
	   (SELECT leaf_items + buffered_messages FROM fractam_stats('up_h_k')) < 30
	AS h_index_small;
SELECT fractam_verify('up_f_k'), fractam_verify('up_h_k'), fractam_verify('up_f');

-- the answers through the index, with every row and value right
SELECT ft_check('index', 'SELECT k, v FROM up_f WHERE k BETWEEN 1 AND 5');
SELECT ft_check('index', 'SELECT k, v FROM up_h WHERE k BETWEEN 1 AND 5');
SELECT k, v FROM up_f ORDER BY k;
SELECT k, v FROM up_h ORDER BY k;
-- the unique constraint still holds, and VACUUM finds the rest
INSERT INTO up_f VALUES (3, 0);
INSERT INTO up_h VALUES (3, 0);
VACUUM up_f, up_h;
SELECT leaf_items + buffered_messages AS entries FROM fractam_stats('up_f_k');
SELECT leaf_items + buffered_messages AS entries FROM fractam_stats('up_h_k');
SELECT fractam_verify('up_f_k'), fractam_verify('up_h_k');

DROP TABLE up_f, up_h;

-- a run longer than a leaf (wide entries; 300 versions made by one
-- transaction, dead once it commits): the insert's descent cannot decide,
-- the key is searched, and the search's dead entries are removed too
CREATE TABLE up_w (k int, v int, pad text) USING fractam
  WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX up_w_k ON up_w USING fractam (k) INCLUDE (pad);
-- (md5 strings: an index compresses longer values that repeat)
INSERT INTO up_w SELECT k, 0, (SELECT string_agg(md5((k * 100 + g)::text), '')
							  FROM generate_series(1, 28) g)
FROM generate_series(1, 2) k;
BEGIN;
DO $$
BEGIN
	FOR i IN 1 .. 300 LOOP
		UPDATE up_w SET v = v + 1 WHERE k = 1;
	END LOOP;
END $$;
COMMIT;
SELECT leaf_pages > 10 AS long_run, leaf_items > 300 AS all_there
FROM fractam_stats('up_w_k');
SELECT searched AS searched_0 FROM fractam_unique_stats() \gset
UPDATE up_w SET v = v + 1 WHERE k = 1;
SELECT searched - :searched_0 AS searched FROM fractam_unique_stats();
SELECT leaf_items + buffered_messages < 5 AS pruned FROM fractam_stats('up_w_k');
SELECT fractam_verify('up_w_k');
SET enable_seqscan = off;
SELECT k, v, length(pad) FROM up_w WHERE k IN (1, 2) ORDER BY k;
RESET enable_seqscan;
INSERT INTO up_w VALUES (1, 0, '');
DROP TABLE up_w;

--
-- fractam_index_prune: an UPDATE that leaves an index's key alone still adds
-- an entry to it when the table keeps no update chain behind one entry (a
-- fractam table; heap when the update is not HOT).  A full leaf drops the
-- entries of rows dead to everyone before such an insert splits it
-- (index_prune.c, nbtree's bottom-up deletion), so the index of a row
-- updated over and over stays small without VACUUM; an index whose key
-- the updates change keeps its entries until VACUUM, as with btree.
-- Results through the indexes agree with sequential scans.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
CREATE TABLE ip (id int, grp int, v int, pad text) USING fractam
	WITH (autovacuum_enabled = off);
CREATE INDEX ip_id ON ip USING fractam (id);
CREATE INDEX ip_grp ON ip USING fractam (grp, id);
INSERT INTO ip SELECT i, i % 3, 0, repeat('p', 50) FROM generate_series(1, 20) i;

-- heap table, updates that change an indexed column (never HOT)
CREATE TABLE ih (id int, w int) WITH (autovacuum_enabled = off);
CREATE INDEX ih_id ON ih USING fractam (id);
CREATE INDEX ih_w ON ih USING fractam (w);
INSERT INTO ih SELECT i, 0 FROM generate_series(1, 20) i;

CREATE PROCEDURE ip_updates(n int) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. n LOOP
		UPDATE ip SET v = v + 1 WHERE id = i % 20 + 1;
		UPDATE ih SET w = w + 1 WHERE id = i % 20 + 1;
		COMMIT;
	END LOOP;
END $$;
CALL ip_updates(4000);

-- without pruning, 4020 entries each; the unchanged keys stay near 20
SELECT leaf_items < 400 AS ip_id_small FROM fractam_stats('ip_id');
SELECT leaf_items < 400 AS ip_grp_small FROM fractam_stats('ip_grp');
SELECT leaf_items < 400 AS ih_id_small FROM fractam_stats('ih_id');
-- the key the updates change: an entry per version until VACUUM
SELECT leaf_items + buffered_messages >= 4000 AS ih_w_keeps_entries
FROM fractam_stats('ih_w');

SELECT count(*), sum(v) FROM ip;
SELECT count(*), sum(w) FROM ih;
SELECT ft_check('index', 'SELECT id, v FROM ip WHERE id BETWEEN 5 AND 15');
SELECT ft_check('index', 'SELECT id, grp, v FROM ip WHERE grp = 1');
SELECT ft_check('ios', 'SELECT grp, id FROM ip WHERE grp = 2');
SELECT ft_check('bitmap', 'SELECT id, w FROM ih WHERE id > 10');
SELECT ft_check('index', 'SELECT id, w FROM ih WHERE w >= 200');
SELECT ft_verify_all('ip'), ft_verify_all('ih');

VACUUM ip;
VACUUM ih;
SELECT ft_check('index', 'SELECT id, v FROM ip WHERE id > 0');
SELECT ft_verify_all('ip'), ft_verify_all('ih');
DROP PROCEDURE ip_updates(int);
DROP TABLE ip;
DROP TABLE ih;

--
-- fractam_index_planes: a compressed index leaf's parts whose entries all
-- take one length are stored as byte planes of differences
-- (FT_PART_FILTER_PLANES): sorted fixed-width keys pack several times
-- smaller.  Parts of entries of different lengths are stored as they are,
-- pages written without planes (fractam.debug_index_planes off, as earlier
-- builds wrote them) are read beside those with, and every index path
-- answers as the sequential scan does.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

CREATE TABLE ph (id int, s int, ts int, name text);
INSERT INTO ph
SELECT g, g % 100, g / 100,
       CASE WHEN g % 3 = 0 THEN repeat('x', g % 40) ELSE 'name' || (g % 1000) END
FROM generate_series(1, 100000) g;

-- the same key with and without planes, zstd and lz4
SET fractam.debug_index_planes = off;
CREATE INDEX ph_flat ON ph USING fractam (s, ts) WITH (compression = 'zstd');
CREATE INDEX ph_flat_lz4 ON ph USING fractam (s, ts) WITH (compression = 'lz4');
RESET fractam.debug_index_planes;
CREATE INDEX ph_planes ON ph USING fractam (s, ts) WITH (compression = 'zstd');
CREATE INDEX ph_planes_lz4 ON ph USING fractam (s, ts) WITH (compression = 'lz4');
-- entries of many lengths, and a unique key
CREATE INDEX ph_name ON ph USING fractam (name) WITH (compression = 'zstd');
CREATE UNIQUE INDEX ph_id ON ph USING fractam (id) WITH (compression = 'zstd');

-- planes take less than half the leaves (each entry: 16 bytes decoded)
SELECT p.leaf_pages * 2 < f.leaf_pages AS zstd_half,
       pl.leaf_pages * 2 < fl.leaf_pages AS lz4_half,
       p.leaf_items = f.leaf_items AS same_entries
FROM fractam_stats('ph_planes') p, fractam_stats('ph_flat') f,
     fractam_stats('ph_planes_lz4') pl, fractam_stats('ph_flat_lz4') fl;
SELECT ft_verify_all('ph');

-- every path, both directions, through each
SELECT ft_check('ios', 'SELECT s, ts FROM ph WHERE s = 42 ORDER BY s, ts', true);
SELECT ft_check('ios', 'SELECT s, ts FROM ph WHERE s BETWEEN 10 AND 12 ORDER BY s DESC, ts DESC', true);
SELECT ft_check('index', 'SELECT * FROM ph WHERE s = 7 AND ts BETWEEN 100 AND 200');
SELECT ft_check('bitmap', 'SELECT * FROM ph WHERE s = 99 AND ts > 900');
SELECT ft_check('index', 'SELECT * FROM ph WHERE id = 31337');
SELECT ft_check('ios', 'SELECT id FROM ph WHERE id > 99000 ORDER BY id DESC', true);
SELECT ft_check('index', 'SELECT * FROM ph WHERE name = ''name77''');
SELECT ft_check('ios', 'SELECT name FROM ph WHERE name > ''x'' ORDER BY name DESC', true);
DROP INDEX ph_planes, ph_planes_lz4;
SELECT ft_check('ios', 'SELECT s, ts FROM ph WHERE s = 42 ORDER BY s, ts', true);
DROP INDEX ph_flat_lz4;
SELECT ft_check('ios', 'SELECT s, ts FROM ph WHERE s = 42 ORDER BY s, ts', true);
CREATE INDEX ph_planes ON ph USING fractam (s, ts) WITH (compression = 'zstd');
DROP INDEX ph_flat;

-- inserts among compressed leaves, a unique violation, deletes, VACUUM
INSERT INTO ph SELECT 100000 + g, g % 100, 500, 'new' FROM generate_series(1, 3000) g;
-- (each insert into a wide leaf cut plain leaves out of it around the new
-- entry, and left the rest compressed)
SELECT compressed_leaf_pages > 0 AS compressed_left,
       leaf_pages > compressed_leaf_pages AS plain_cut
FROM fractam_stats('ph_planes');
INSERT INTO ph VALUES (31337, 1, 1, 'dup');
DELETE FROM ph WHERE id % 11 = 0;
SELECT ft_wait_for_old_snapshots();
VACUUM ph;
SELECT ft_verify_all('ph');
SELECT ft_check('ios', 'SELECT s, ts FROM ph WHERE s = 42 ORDER BY s, ts', true);
SELECT ft_check('ios', 'SELECT s, ts FROM ph WHERE s BETWEEN 40 AND 60 AND ts BETWEEN 490 AND 510 ORDER BY s DESC, ts DESC', true);
SELECT ft_check('index', 'SELECT * FROM ph WHERE id BETWEEN 99990 AND 100020');
SELECT ft_check('bitmap', 'SELECT * FROM ph WHERE name = ''new''');

-- leaves written without planes in the same index, then with them again
SET fractam.debug_index_planes = off;
INSERT INTO ph SELECT 200000 + g, g % 100, 2000 + g / 100, 'off' FROM generate_series(1, 20000) g;
SELECT ft_verify_all('ph');
SELECT ft_check('ios', 'SELECT s, ts FROM ph WHERE s = 42 AND ts > 1500 ORDER BY s, ts', true);
RESET fractam.debug_index_planes;
INSERT INTO ph SELECT 300000 + g, g % 100, 4000 + g / 100, 'on' FROM generate_series(1, 20000) g;
SELECT ft_verify_all('ph');
SELECT ft_check('ios', 'SELECT s, ts FROM ph WHERE s = 42 AND ts > 1500 ORDER BY s DESC, ts DESC', true);
SELECT compressed_leaf_pages > 0 AS compressed FROM fractam_stats('ph_planes');
SET fractam.decoded_leaf_cache = 0;
SELECT ft_check('index', 'SELECT * FROM ph WHERE s = 17 AND ts > 1990');
RESET fractam.decoded_leaf_cache;
REINDEX INDEX ph_planes;
SELECT ft_verify_all('ph');
SELECT ft_check('ios', 'SELECT s, ts FROM ph WHERE s = 3 ORDER BY s, ts', true);

DROP TABLE ph;

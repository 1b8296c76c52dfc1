--
-- fractam_vm_frozen: VACUUM marks the pseudo-blocks whose row versions are
-- all frozen ALL_FROZEN in the visibility map, and later VACUUMs, aggressive
-- ones too, do not read their leaves: an anti-wraparound VACUUM of a frozen
-- table reads a few pages, not the table.  A row lock clears its
-- pseudo-block's ALL_FROZEN bit (its xmax is an xid), as heap's does, so
-- the next VACUUM reads those leaves again and relfrozenxid waits for the
-- locker; fractam_verify checks that an all-frozen pseudo-block holds only
-- frozen versions.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
CREATE EXTENSION pg_visibility;

CREATE TABLE vf (id int PRIMARY KEY, pad text) USING fractam
  WITH (autovacuum_enabled = off);
INSERT INTO vf SELECT g, repeat('x', 100) FROM generate_series(1, 60000) g;

-- blocks of the table read or found in shared buffers, flushed stats
CREATE FUNCTION vf_blocks() RETURNS bigint LANGUAGE sql AS $$
  SELECT heap_blks_read + heap_blks_hit FROM pg_statio_user_tables
  WHERE relname = 'vf' $$;
CREATE TABLE vf_reads (what text, blocks bigint) WITH (autovacuum_enabled = off);

SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
INSERT INTO vf_reads VALUES ('start', vf_blocks());
VACUUM (FREEZE) vf;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
INSERT INTO vf_reads VALUES ('first freeze', vf_blocks());
-- every pseudo-block holding versions is all-visible and all-frozen
SELECT all_visible = all_frozen AS all_frozen, all_frozen >= 200 AS many
FROM pg_visibility_map_summary('vf');
SELECT all_frozen AS total FROM pg_visibility_map_summary('vf') \gset
SELECT fractam_verify('vf');

-- an aggressive VACUUM of the frozen table skips the frozen leaves
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
INSERT INTO vf_reads VALUES ('before second', vf_blocks());
VACUUM (FREEZE) vf;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
INSERT INTO vf_reads VALUES ('second freeze', vf_blocks());
SELECT (SELECT s.blocks - f.blocks FROM vf_reads s, vf_reads f
        WHERE s.what = 'second freeze' AND f.what = 'before second') * 20 <
       (SELECT f.blocks - b.blocks FROM vf_reads f, vf_reads b
        WHERE f.what = 'first freeze' AND b.what = 'start')
  AS reads_under_5_percent;
SELECT age(relfrozenxid) < 10 AS relfrozenxid_current,
       reltuples BETWEEN 59000 AND 61000 AS reltuples_kept
FROM pg_class WHERE relname = 'vf';

-- a row lock clears ALL_FROZEN of its pseudo-block only
SELECT count(*) FROM (SELECT id FROM vf WHERE id = 30000 FOR SHARE) s;
SELECT all_visible - all_frozen AS not_frozen FROM pg_visibility_map_summary('vf');
SELECT fractam_verify('vf');
-- VACUUM reads it again, clears the ended lock and freezes the block again
VACUUM (FREEZE) vf;
SELECT all_visible - all_frozen AS not_frozen FROM pg_visibility_map_summary('vf');
SELECT fractam_verify('vf');

-- a lock still held: VACUUM leaves the block unfrozen and relfrozenxid waits
BEGIN;
SELECT count(*) FROM (SELECT id FROM vf WHERE id = 40000 FOR UPDATE) s;
SELECT txid_current() AS locker \gset
PREPARE TRANSACTION 'vf_locker';
VACUUM (FREEZE) vf;
SELECT all_visible - all_frozen AS not_frozen FROM pg_visibility_map_summary('vf');
SELECT relfrozenxid::text::bigint <= :locker % 4294967296 AS held_back
FROM pg_class WHERE relname = 'vf';
SELECT fractam_verify('vf');
COMMIT PREPARED 'vf_locker';
VACUUM (FREEZE) vf;
SELECT all_visible - all_frozen AS not_frozen FROM pg_visibility_map_summary('vf');

-- changes clear both bits; results stay right throughout
DELETE FROM vf WHERE id BETWEEN 100 AND 199;
UPDATE vf SET pad = 'updated' WHERE id BETWEEN 50000 AND 50010;
SELECT all_visible < :total AS some_cleared FROM pg_visibility_map_summary('vf');
VACUUM (FREEZE) vf;
SELECT all_visible = all_frozen AS all_frozen FROM pg_visibility_map_summary('vf');
SELECT fractam_verify('vf');
SELECT count(*), sum(id), count(*) FILTER (WHERE pad = 'updated') FROM vf;
SELECT ft_check('index', 'SELECT id FROM vf WHERE id BETWEEN 90 AND 210');

DROP TABLE vf, vf_reads;
DROP FUNCTION vf_blocks;
DROP EXTENSION pg_visibility;

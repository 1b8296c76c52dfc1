--
-- fractam_drain: in an index that is in memory (fractam.page_cache_probe
-- found most leaves outside shared buffers in the kernel's page cache; here
-- forced with 'assume'), inserts are applied directly, and an insert that
-- would join buffered messages flushes them into the leaf (and moves them
-- down from the level above) together with its entry, so that the index
-- stops buffering.  The probe is off by default: reading a leaf from the
-- page cache into shared buffers costs an insert load more than buffering.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
SHOW fractam.page_cache_probe;
CREATE TABLE dr (a int, b int);
CREATE INDEX dr_a ON dr USING fractam (a) WITH (fanout = 4);
CREATE UNIQUE INDEX dr_b ON dr USING fractam (b) WITH (fanout = 4);
SET fractam.direct_apply = off;
INSERT INTO dr SELECT (i * 7919) % 60000, i FROM generate_series(1, 60000) i;
SELECT height >= 3 AS tall, buffered_messages > 1000 AS buffered,
       upper_buffered_messages > 0 AS buffered_at_level_2
FROM fractam_stats('dr_a');
SELECT buffered_messages AS before FROM fractam_stats('dr_a') \gset
RESET fractam.direct_apply;
SET fractam.page_cache_probe = assume;
INSERT INTO dr SELECT (i * 104729) % 60000, 100000 + i FROM generate_series(1, 20000) i;
SELECT buffered_messages < :before / 4 AS drained FROM fractam_stats('dr_a');
-- duplicates are still caught on the way
INSERT INTO dr VALUES (1, 5);
INSERT INTO dr VALUES (1, 100005);
SELECT count(*) FROM dr;
SELECT fractam_verify('dr_a'), fractam_verify('dr_b');
SELECT ft_check('index', 'SELECT a, b FROM dr WHERE a BETWEEN 100 AND 400');
SELECT ft_check('index', 'SELECT a, b FROM dr WHERE b BETWEEN 99990 AND 100100');
SELECT ft_check('bitmap', 'SELECT count(*) FROM dr WHERE a < 3000');
RESET fractam.page_cache_probe;
DROP TABLE dr;

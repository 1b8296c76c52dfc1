--
-- fractam_types: every type with a default operator class, compared with a
-- sequential scan for equality, ranges, IS NULL, = ANY, ordered scans in both
-- directions, bitmap and index-only scans; cross-type integer comparisons.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
-- buffer every insert below the right edge (no direct apply to cached leaves),
-- so that the buffering and flush paths are exercised
SET fractam.direct_apply = off;

-- ty_<name>(id int, v <type>): 3000 rows, every 20th v is NULL, built partly
-- before CREATE INDEX (index build) and partly after (inserts), with a small
-- fanout so the inserts are buffered and flushed.
CREATE FUNCTION ty_make(name text, typ text, expr text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('CREATE TABLE %I (id int, v %s)', 'ty_' || name, typ);
	EXECUTE format('INSERT INTO %I SELECT i, CASE WHEN i %% 20 = 0 THEN NULL ELSE (%s)::%s END
	                FROM generate_series(1, 1500) i', 'ty_' || name, expr, typ);
	EXECUTE format('CREATE INDEX %I ON %I USING fractam (v) WITH (fanout = 4)',
	               'ty_' || name || '_v', 'ty_' || name);
	EXECUTE format('INSERT INTO %I SELECT i, CASE WHEN i %% 20 = 0 THEN NULL ELSE (%s)::%s END
	                FROM generate_series(1501, 3000) i', 'ty_' || name, expr, typ);
END $$;

-- The checks for one table; literals are values taken from the table.
CREATE FUNCTION ty_check(name text, typ text)
RETURNS TABLE (type_name text, check_name text, result text)
LANGUAGE plpgsql AS $$
DECLARE
	tbl text := quote_ident('ty_' || name);
	l1 text; l2 text; l3 text; lo text; hi text;
BEGIN
	EXECUTE format('SELECT quote_literal(v::text) || %L FROM %s WHERE id = 101', '::' || typ, tbl) INTO l1;
	EXECUTE format('SELECT quote_literal(v::text) || %L FROM %s WHERE id = 1203', '::' || typ, tbl) INTO l2;
	EXECUTE format('SELECT quote_literal(v::text) || %L FROM %s WHERE id = 2707', '::' || typ, tbl) INTO l3;
	EXECUTE format('SELECT least(%s, %s, %s)::text, greatest(%s, %s, %s)::text', l1, l2, l3, l1, l2, l3) INTO lo, hi;
	lo := quote_literal(lo) || '::' || typ;
	hi := quote_literal(hi) || '::' || typ;
	type_name := typ;

	check_name := 'eq';
	result := ft_check('index', format('SELECT id, v FROM %s WHERE v = %s', tbl, l2));
	RETURN NEXT;
	check_name := 'range';
	result := ft_check('index', format('SELECT id, v FROM %s WHERE v >= %s AND v <= %s', tbl, lo, hi));
	RETURN NEXT;
	check_name := 'lt-bitmap';
	result := ft_check('bitmap', format('SELECT id FROM %s WHERE v < %s', tbl, l1));
	RETURN NEXT;
	check_name := 'gt-bitmap';
	result := ft_check('bitmap', format('SELECT id FROM %s WHERE v > %s', tbl, l3));
	RETURN NEXT;
	check_name := 'is-null';
	result := ft_check('index', format('SELECT id FROM %s WHERE v IS NULL', tbl));
	RETURN NEXT;
	check_name := 'is-not-null';
	result := ft_check('bitmap', format('SELECT id FROM %s WHERE v IS NOT NULL', tbl));
	RETURN NEXT;
	check_name := 'any';
	result := ft_check('bitmap', format('SELECT id FROM %s WHERE v = ANY (ARRAY[%s, %s, %s])', tbl, l1, l2, l3));
	RETURN NEXT;
	check_name := 'asc-limit';
	result := ft_check('index', format('SELECT v FROM %s WHERE v > %s ORDER BY v LIMIT 40', tbl, lo), true);
	RETURN NEXT;
	check_name := 'desc-limit';
	result := ft_check('index', format('SELECT v FROM %s WHERE v < %s ORDER BY v DESC LIMIT 40', tbl, hi), true);
	RETURN NEXT;
	check_name := 'desc-nulls';
	result := ft_check('index', format('SELECT v FROM %s ORDER BY v DESC LIMIT 200', tbl), true);
	RETURN NEXT;
	check_name := 'asc-all';
	result := ft_check('index', format('SELECT v FROM %s ORDER BY v', tbl), true);
	RETURN NEXT;
	check_name := 'ios';
	result := ft_check('ios', format('SELECT v FROM %s WHERE v >= %s ORDER BY v', tbl, lo), true);
	RETURN NEXT;
	PERFORM fractam_verify(('ty_' || name || '_v')::regclass);
	check_name := 'verify';
	result := 'ok';
	RETURN NEXT;
END $$;

SELECT ty_make('int2', 'int2', '(i * 7919) % 20011 - 10000');
SELECT ty_make('int4', 'int4', '(i * 7919) % 100003 - 50000');
SELECT ty_make('int8', 'int8', '((i * 7919) % 100003 - 50000) * 10000000000');
SELECT ty_make('float4', 'float4', $$CASE WHEN i % 97 = 0 THEN 'NaN' WHEN i % 89 = 0 THEN 'Infinity'
	WHEN i % 83 = 0 THEN '-Infinity' ELSE ((i * 7919) % 10007) / 7.0 - 700 END$$);
SELECT ty_make('float8', 'float8', $$CASE WHEN i % 97 = 0 THEN 'NaN' WHEN i % 89 = 0 THEN 'Infinity'
	WHEN i % 83 = 0 THEN '-Infinity' ELSE ((i * 7919) % 100003) / 7.0 - 7000 END$$);
SELECT ty_make('numeric', 'numeric', $$CASE WHEN i % 97 = 0 THEN 'NaN'
	ELSE round(((i * 7919) % 100003 - 50000) / 100.0 * 10::numeric ^ (i % 7), 2) END$$);
SELECT ty_make('text', 'text', 'substr(md5(i::text), 1, 1 + i % 12)');
SELECT ty_make('varchar', 'varchar(20)', 'upper(substr(md5(i::text), 3, 2 + i % 9))');
SELECT ty_make('bpchar', 'char(10)', 'substr(md5(i::text), 5, 1 + i % 8)');
SELECT ty_make('bytea', 'bytea', 'decode(substr(md5(i::text), 1, 2 * (1 + i % 8)), ''hex'')');
SELECT ty_make('bool', 'bool', 'i % 3 = 0');
SELECT ty_make('date', 'date', 'date ''2000-01-01'' + (i * 7919) % 20000 - 5000');
SELECT ty_make('time', 'time', 'time ''00:00'' + ((i * 7919) % 86400) * interval ''1 second''');
SELECT ty_make('timestamp', 'timestamp', 'timestamp ''2001-02-03 04:05:06'' + ((i * 7919) % 100003) * interval ''37 minutes''');
SELECT ty_make('timestamptz', 'timestamptz', 'timestamptz ''2001-02-03 04:05:06+00'' + ((i * 7919) % 100003) * interval ''37 minutes''');
SELECT ty_make('interval', 'interval', '((i * 7919) % 100003) * interval ''17 minutes''');
SELECT ty_make('uuid', 'uuid', 'md5(((i * 7919) % 1000)::text)::uuid');
SELECT ty_make('oid', 'oid', '(i * 7919) % 100003');
SELECT ty_make('char', '"char"', 'chr(65 + (i * 7) % 26)');
SELECT ty_make('name', 'name', '''n'' || ((i * 7919) % 1009)');

-- index-only scans need the visibility map
VACUUM (ANALYZE) ty_int2, ty_int4, ty_int8, ty_float4, ty_float8, ty_numeric,
	ty_text, ty_varchar, ty_bpchar, ty_bytea, ty_bool, ty_date, ty_time,
	ty_timestamp, ty_timestamptz, ty_interval, ty_uuid, ty_oid, ty_char, ty_name;

-- (bool eq: PG15's planner indexes a bare boolean column only for btree's own
-- bool_ops family (IsBooleanOpfamily), so "v = true" cannot use the index)
SELECT c.* FROM (VALUES
	('int2', 'int2'), ('int4', 'int4'), ('int8', 'int8'),
	('float4', 'float4'), ('float8', 'float8'), ('numeric', 'numeric'),
	('text', 'text'), ('varchar', 'varchar'), ('bpchar', 'bpchar'),
	('bytea', 'bytea'), ('bool', 'bool'), ('date', 'date'), ('time', 'time'),
	('timestamp', 'timestamp'), ('timestamptz', 'timestamptz'),
	('interval', 'interval'), ('uuid', 'uuid'), ('oid', 'oid'),
	('char', '"char"'), ('name', 'name')) t(name, typ),
	LATERAL ty_check(t.name, t.typ) c;

-- values that are equal but spelled differently
INSERT INTO ty_float8 VALUES (5001, '-0'), (5002, '0');
INSERT INTO ty_numeric VALUES (5001, 1.5), (5002, 1.50), (5003, 1.500), (5004, 'NaN');
INSERT INTO ty_interval VALUES (5001, '1 day'), (5002, '24 hours'), (5003, '1440 minutes');
INSERT INTO ty_bpchar VALUES (5001, 'ab'), (5002, 'ab   ');
SELECT ft_check('index', 'SELECT id, v FROM ty_float8 WHERE v = 0');
SELECT ft_check('index', 'SELECT id, v FROM ty_numeric WHERE v = 1.5');
SELECT ft_check('index', 'SELECT id, v FROM ty_numeric WHERE v = ''NaN''');
SELECT ft_check('index', 'SELECT id, v FROM ty_interval WHERE v = ''1 day''');
SELECT ft_check('index', 'SELECT id, v FROM ty_bpchar WHERE v = ''ab''');
SELECT ft_check('index', 'SELECT id, v FROM ty_bpchar WHERE v = ''ab      ''');

-- cross-type comparisons in the integer family use the index
SELECT ft_check('index', 'SELECT id FROM ty_int4 WHERE v = (-42081)::int8');
SELECT ft_check('index', 'SELECT id FROM ty_int4 WHERE v < (-49000)::int8');
SELECT ft_check('index', 'SELECT id FROM ty_int4 WHERE v > 9000::int2 AND v < 12000::int2');
SELECT ft_check('index', 'SELECT id FROM ty_int8 WHERE v < 0::int4');
SELECT ft_check('index', 'SELECT id FROM ty_int2 WHERE v BETWEEN -100::int8 AND 100::int4');
SELECT ft_check('bitmap', 'SELECT id FROM ty_int8 WHERE v = ANY (ARRAY[-420810000000000, -341620000000000, 1]::int8[])');
-- float4 against float8, date against timestamp, text against name
SELECT ft_check('index', 'SELECT id FROM ty_float4 WHERE v > 600::float8');
SELECT ft_check('index', 'SELECT id FROM ty_date WHERE v < timestamp ''1990-01-01 12:00''');
SELECT ft_check('index', 'SELECT id FROM ty_timestamp WHERE v < date ''2001-03-01''');
SELECT ft_check('index', 'SELECT id FROM ty_timestamptz WHERE v > timestamp ''2008-01-01''');

-- every index still verifies after the extra inserts
SELECT count(*) AS verified FROM (
	SELECT fractam_verify(c.oid) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
	WHERE a.amname = 'fractam_index' AND c.relname LIKE 'ty\_%') s;

DROP FUNCTION ty_make(text, text, text);
DROP FUNCTION ty_check(text, text);

-- Percona timeseries INSERT benchmark (percona/sysbench-scripts timeseries/common.lua @94380a1),
-- PostgreSQL translation: ts int unsigned -> integer, double -> double precision.
-- No secondary index. psql variables set by bench/run:
--   tam      table access method (heap | fractam);  topts: WITH (...) for the table, or empty
--   pk_btree true: PRIMARY KEY (sensor_id, ts) (btree); false: UNIQUE index USING fractam instead
--   pkopts   WITH (...) for the fractam PK index, or empty
--   key_unique false: a non-unique index on (sensor_id, ts) instead of the key (btree in the btree
--            variant, fractam otherwise), to compare unique checks with plain inserts
DROP TABLE IF EXISTS sensordata;
CREATE TABLE sensordata (
  ts        integer NOT NULL,
  sensor_id integer NOT NULL,
  data1     double precision NOT NULL,
  data2     double precision NOT NULL,
  data3     double precision NOT NULL,
  data4     double precision NOT NULL,
  data5     double precision NOT NULL,
  cnt       integer NOT NULL
) USING :tam :topts;
\if :key_unique
\if :pk_btree
ALTER TABLE sensordata ADD CONSTRAINT sensordata_pkey PRIMARY KEY (sensor_id, ts);
\else
CREATE UNIQUE INDEX sensordata_pkey ON sensordata USING fractam (sensor_id, ts) :pkopts;
\endif
\else
\if :pk_btree
CREATE INDEX sensordata_key ON sensordata (sensor_id, ts);
\else
CREATE INDEX sensordata_key ON sensordata USING fractam (sensor_id, ts) :pkopts;
\endif
\endif

-- Percona timeseries event (insert.lua @94380a1, --rand-type=uniform): one autocommit INSERT of 1000
-- rows; client c owns sensors 1000*c .. 1000*c+999, all rows of an event share ts, and ts advances by
-- 1 per event (starts at the wall clock). data1..5 = sb_rand(1,1000)/10, cnt = sb_rand(40,60).
-- pgbench -D ts=$(date +%s)   (:ts persists per client)
\set ts :ts + 1
INSERT INTO sensordata (ts, sensor_id, data1, data2, data3, data4, data5, cnt)
SELECT :ts, s,
       (1 + floor(random()*1000)) / 10, (1 + floor(random()*1000)) / 10, (1 + floor(random()*1000)) / 10,
       (1 + floor(random()*1000)) / 10, (1 + floor(random()*1000)) / 10,
       40 + floor(random()*21)::int
FROM generate_series(:client_id * 1000, :client_id * 1000 + 999) AS s;

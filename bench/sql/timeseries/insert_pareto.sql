-- Percona timeseries event with --rand-type=pareto (sysbench: a + (b-a+1) * u^(ln h / ln(1-h)),
-- h = 0.2, so the exponent is ln(0.2)/ln(0.8) = 7.2126): skewed, more compressible values.
-- Same rows/keys as insert_uniform.sql. pgbench -D ts=$(date +%s)
\set ts :ts + 1
INSERT INTO sensordata (ts, sensor_id, data1, data2, data3, data4, data5, cnt)
SELECT :ts, s,
       (1 + floor(1000*power(random(), ln(0.2)/ln(0.8)))) / 10,
       (1 + floor(1000*power(random(), ln(0.2)/ln(0.8)))) / 10,
       (1 + floor(1000*power(random(), ln(0.2)/ln(0.8)))) / 10,
       (1 + floor(1000*power(random(), ln(0.2)/ln(0.8)))) / 10,
       (1 + floor(1000*power(random(), ln(0.2)/ln(0.8)))) / 10,
       40 + floor(21*power(random(), ln(0.2)/ln(0.8)))::int
FROM generate_series(:client_id * 1000, :client_id * 1000 + 999) AS s;

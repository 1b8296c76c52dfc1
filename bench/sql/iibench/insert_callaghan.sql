-- iiBench insert batch (Callaghan's value generation, iibench.py generate_cols):
-- one transaction inserts :rpc rows; dateandtime is the same for the whole batch (now());
-- cashregisterid [0,1000), customerid [0,100000), productid [0,10000), price [0,500) uniform;
-- data: length uniform 10..20, 3/8 of it random (md5 hex), the rest 'a' (data_random_pct=50).
-- pgbench -D rpc=N
INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data)
SELECT now(), floor(random()*1000)::int, floor(random()*100000)::int, floor(random()*10000)::int,
       floor(random()*500)::int,
       repeat('a', d.len - d.len*3/8) || substr(md5(random()::text), 1, d.len*3/8)
FROM generate_series(1, :rpc) AS g,
     LATERAL (SELECT 10 + floor(random()*11)::int + 0*g AS len) AS d;

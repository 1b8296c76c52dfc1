-- iiBench insert batch, Tokutek's value generation (jiibench.java MyWriter): one timestamp per batch,
-- cashregisterid [0,1000), customerid [0,100000), productid [0,10000) uniform,
-- price = ((rand*500) + customerid) / 100.0  (a float correlated with customerid).
-- pgbench -D rpc=N
INSERT INTO purchases_index (dateandtime, cashregisterid, customerid, productid, price)
SELECT now(), floor(random()*1000)::int, c.customerid, floor(random()*10000)::int,
       ((random()*500) + c.customerid) / 100.0
FROM generate_series(1, :rpc) AS g,
     LATERAL (SELECT floor(random()*100000)::int + 0*g AS customerid) AS c;

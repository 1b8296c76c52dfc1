-- iiBench insert + delete (FIFO) on Tokutek's table; see insdel_callaghan.sql for the scheme.
-- pgbench -D rpc=N -D lo=<min(transactionid)> -D n=0 -D nclients=<clients>
INSERT INTO purchases_index (dateandtime, cashregisterid, customerid, productid, price)
SELECT now(), floor(random()*1000)::int, c.customerid, floor(random()*10000)::int,
       ((random()*500) + c.customerid) / 100.0
FROM generate_series(1, :rpc) AS g,
     LATERAL (SELECT floor(random()*100000)::int + 0*g AS customerid) AS c;
\set n :n + 1
\set a :lo + ((:n - 1) * :nclients + :client_id) * :rpc
\set b :a + :rpc
DELETE FROM purchases_index WHERE transactionid >= :a AND transactionid < :b;

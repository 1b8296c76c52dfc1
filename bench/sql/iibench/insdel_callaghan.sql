-- iiBench insert + delete (FIFO, table size constant): insert :rpc new rows, then delete the :rpc
-- oldest ones. Insert and delete are separate autocommit transactions on one connection (iibench.py
-- uses two connections coupled by a queue; this keeps insert and delete rates exactly equal).
-- pgbench -D rpc=N -D lo=<min(transactionid) at phase start> -D n=0 -D nclients=<clients>
-- Each client deletes its own disjoint slices: lo + ((n-1)*nclients + client_id)*rpc.
INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data)
SELECT now(), floor(random()*1000)::int, floor(random()*100000)::int, floor(random()*10000)::int,
       floor(random()*500)::int,
       repeat('a', d.len - d.len*3/8) || substr(md5(random()::text), 1, d.len*3/8)
FROM generate_series(1, :rpc) AS g,
     LATERAL (SELECT 10 + floor(random()*11)::int + 0*g AS len) AS d;
\set n :n + 1
\set a :lo + ((:n - 1) * :nclients + :client_id) * :rpc
\set b :a + :rpc
DELETE FROM pi1 WHERE transactionid >= :a AND transactionid < :b;

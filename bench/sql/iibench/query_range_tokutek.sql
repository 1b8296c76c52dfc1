-- iiBench query thread, Tokutek's version (jiibench.java MyQuery): round-robin over a PK range scan
-- and three "seek" queries, LIMIT 10. MySQL used FORCE INDEX and index order; here ORDER BY the
-- index columns gives the same rows, and the OR-of-prefixes seek predicate
--   (a=? AND b>=?) OR (a>?)   is written   a >= ? AND (a > ? OR b >= ?)
-- so that any ordered index AM (not only btree, which alone gets row comparisons) can use a >= ?.
-- Values: customerid uniform, price = ((rand*500)+customerid)/100, timestamp uniform in [t0, t1].
-- pgbench -D n=0 -D t0=<epoch of load start> -D t1=<epoch of phase start>
\set n :n + 1
\if :n % 100 = 1
SELECT min(transactionid) AS lo, max(transactionid) AS hi FROM purchases_index \gset
\endif
\set q :n % 4
\set c random(0, 99999)
\set p (random(0, 499999) / 1000.0 + :c) / 100.0
\set r random(0, 999)
\set ts random(:t0, :t1)
\set t random(:lo, :hi)
\if :q = 1
SELECT transactionid FROM purchases_index WHERE transactionid >= :t ORDER BY transactionid LIMIT 10;
\elif :q = 2
SELECT price, dateandtime, customerid FROM purchases_index
 WHERE price >= :p AND (price > :p OR dateandtime > to_timestamp(:ts)::timestamp
                        OR (dateandtime = to_timestamp(:ts)::timestamp AND customerid >= :c))
 ORDER BY price, dateandtime, customerid LIMIT 10;
\elif :q = 3
SELECT price, customerid FROM purchases_index
 WHERE price >= :p AND (price > :p OR customerid >= :c)
 ORDER BY price, customerid LIMIT 10;
\else
SELECT cashregisterid, price, customerid FROM purchases_index
 WHERE cashregisterid >= :r AND (cashregisterid > :r OR price > :p OR (price = :p AND customerid >= :c))
 ORDER BY cashregisterid, price, customerid LIMIT 10;
\endif

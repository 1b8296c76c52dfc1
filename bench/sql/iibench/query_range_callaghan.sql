-- iiBench range queries (phase qrN): one of the three covering secondary-index queries, picked
-- uniformly at random, start key uniform over the column's domain, LIMIT 10 (iibench.py).
\set q random(1, 3)
\set productid random(0, 9999)
\set cashregisterid random(0, 999)
\set price random(0, 499)
\if :q = 1
SELECT productid, customerid, price FROM pi1 WHERE productid >= :productid ORDER BY productid, customerid, price LIMIT 10;
\elif :q = 2
SELECT cashregisterid, customerid, price FROM pi1 WHERE cashregisterid > :cashregisterid ORDER BY cashregisterid, customerid, price LIMIT 10;
\else
SELECT price, dateandtime, customerid FROM pi1 WHERE price >= :price ORDER BY price, dateandtime, customerid LIMIT 10;
\endif

-- pgbench's built-in TPC-B-like tables (pgbench -i -I dtgv, i.e. without pgbench's primary keys), then
-- the keys per variant: heap+btree gets exactly pgbench's "p" step; fractam variants get UNIQUE
-- fractam indexes on the same columns (the only indexes of this workload, so a btree PK would leave
-- nothing for fractam to do). psql variables: pk_btree, pkopts.
\timing on
\if :pk_btree
ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid);
ALTER TABLE pgbench_tellers  ADD PRIMARY KEY (tid);
ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid);
\else
CREATE UNIQUE INDEX pgbench_branches_pkey ON pgbench_branches USING fractam (bid) :pkopts;
CREATE UNIQUE INDEX pgbench_tellers_pkey  ON pgbench_tellers  USING fractam (tid) :pkopts;
CREATE UNIQUE INDEX pgbench_accounts_pkey ON pgbench_accounts USING fractam (aid) :pkopts;
\endif

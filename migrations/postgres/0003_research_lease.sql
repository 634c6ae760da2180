-- Research run leases (see migrations/sqlite/0019_research_lease.sql).
alter table research_runs add column runner text;
alter table research_runs add column lease_until bigint;

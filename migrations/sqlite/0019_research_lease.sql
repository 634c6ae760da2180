-- Research runs with several app instances (issue 12): the instance driving a run holds
-- a lease (`runner`, `lease_until`), taken and renewed through one guarded update before
-- every phase. Another instance picks a run up only when its lease expired (its
-- instance died), so no phase — and none of its charges — runs twice at once.
alter table research_runs add column runner text;
alter table research_runs add column lease_until integer;

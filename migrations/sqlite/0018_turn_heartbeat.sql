-- A running turn says it is alive (issue 12: crashes). The process running a turn
-- bumps `heartbeat_at` every few seconds; a turn still 'running' whose heartbeat went
-- silent belongs to a process that died, and is closed in the log (failed, with a
-- plain message) so its session is not left waiting on it forever.
alter table turns add column heartbeat_at integer;
create index turns_running on turns(status, heartbeat_at) where status = 'running';

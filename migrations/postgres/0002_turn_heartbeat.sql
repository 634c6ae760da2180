-- A running turn says it is alive (see migrations/sqlite/0018_turn_heartbeat.sql).
alter table turns add column heartbeat_at bigint;
create index turns_running on turns(status, heartbeat_at) where status = 'running';

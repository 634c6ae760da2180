-- One turn at a time per session (see migrations/sqlite/0022_session_trust.sql),
-- held by the database (not by a read of the log):
-- a second submit that races the first cannot insert a second 'running' row, so it
-- steers the running turn instead. A turn leaves 'running' in the same transaction as
-- the event that closes it in the log (turn.finished / turn.refused).
-- Before the index, any session with several running turns (left by older versions)
-- keeps only its newest one running.
update turns set status = 'failed', finished_at = coalesce(finished_at, created_at)
 where status = 'running'
   and exists (select 1 from turns newer
                where newer.session_id = turns.session_id and newer.status = 'running'
                  and (newer.created_at > turns.created_at
                       or (newer.created_at = turns.created_at and newer.id > turns.id)));
create unique index turns_one_running_per_session on turns(session_id) where status = 'running';

-- The workspace's ceilings over a member's session budget (admins set them in Ajustes;
-- `decisions::auto::set_mode` refuses a budget above them). The engine's own limits
-- until an admin lowers them, so nothing changes for existing workspaces.
alter table workspace_auto_policy add column max_credit_cap bigint not null default 10000
    check (max_credit_cap >= 0);
alter table workspace_auto_policy add column max_contact_cap bigint not null default 500
    check (max_contact_cap >= 0);

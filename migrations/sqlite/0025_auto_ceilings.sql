-- The workspace's ceilings over a member's session budget (admins set them in Ajustes;
-- `decisions::auto::set_mode` refuses a budget above them). The engine's own limits
-- until an admin lowers them, so nothing changes for existing workspaces.
alter table workspace_auto_policy add column max_credit_cap integer not null default 10000
    check (max_credit_cap >= 0);
alter table workspace_auto_policy add column max_contact_cap integer not null default 500
    check (max_contact_cap >= 0);

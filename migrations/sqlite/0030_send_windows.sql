-- Sending windows (issue 23): when a workspace's sequence steps may go out, and the
-- recipient's time zone they are read in.
--   * workspace_send_window: sending days (bit 0 = Monday … bit 6 = Sunday), hours
--     [start_hour, end_hour) in the recipient's local time, the most steps one sender
--     mailbox sends per day, and the workspace's own zone (used for recipients whose
--     state is unknown and for the mailbox's day). No row = the defaults: Monday to
--     Friday, 9:00–18:00, 200 a day, America/Mexico_City.
--   * sequence_audience.time_zone: the IANA zone derived from the recipient company's
--     state when the version was authorized; null = the workspace's zone.
create table workspace_send_window (
    workspace_id text primary key references workspaces(id) on delete cascade,
    days         integer not null default 31 check (days between 1 and 127),
    start_hour   integer not null default 9 check (start_hour between 0 and 23),
    end_hour     integer not null default 18 check (end_hour between 1 and 24),
    daily_cap    integer not null default 200 check (daily_cap between 1 and 5000),
    time_zone    text not null default 'America/Mexico_City',
    updated_by   text,
    updated_at   integer not null,
    check (start_hour < end_hour)
);

alter table sequence_audience add column time_zone text;

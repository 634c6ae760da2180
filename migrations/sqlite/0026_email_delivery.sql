-- Email a real sales team can send (issue 23): unsubscribe, bounces, suppressions,
-- replies.
--   * email_suppressions becomes the workspace's list with the reasons the product
--     names: 'unsubscribed' (the recipient's link or one-click header), 'bounced' (a
--     permanent SMTP answer), 'complained', 'manual' (an admin); `detail` keeps the
--     SMTP answer or the admin's note, `created_by` the admin (null when the recipient
--     or the transport suppressed). Old rows keep their meaning (baja → unsubscribed,
--     rebote → bounced).
--   * sequence_sends gains the status 'cancelled': a pending step that will never go
--     out because its recipient unsubscribed, bounced or replied; `error` says which.
--   * email_settings holds the per-install secret that signs unsubscribe links.
--   * sequence_replies: a recipient who answered a sequence; the dispatcher skips
--     their remaining steps of it.
-- SQLite cannot change a CHECK constraint in place: both tables are rebuilt with
-- their rows (in insertion order) and indexes.

create table email_suppressions_new (
    workspace_id text not null references workspaces(id) on delete cascade,
    email        text not null,
    reason       text not null
                 check (reason in ('unsubscribed', 'bounced', 'complained', 'manual')),
    detail       text,
    created_by   text,
    created_at   integer not null,
    primary key (workspace_id, email)
);
insert into email_suppressions_new (workspace_id, email, reason, created_at)
    select workspace_id, email,
           case reason when 'baja' then 'unsubscribed' when 'rebote' then 'bounced' else 'manual' end,
           created_at
      from email_suppressions order by rowid;
drop table email_suppressions;
alter table email_suppressions_new rename to email_suppressions;

create table sequence_sends_new (
    id              text primary key,
    workspace_id    text not null,
    sequence_id     text not null references sequences(id) on delete cascade,
    version         integer not null,
    step            integer not null,
    email           text not null,
    due_at          integer not null,
    status          text not null default 'pending'
                    check (status in ('pending', 'sending', 'sent', 'failed', 'suppressed',
                                      'blocked', 'unknown', 'cancelled')),
    attempts        integer not null default 0,
    next_attempt_at integer not null,
    claimed_by      text,
    claimed_at      integer,
    message_id      text,
    error           text,
    sent_at         integer,
    unique (sequence_id, step, email)
);
insert into sequence_sends_new (id, workspace_id, sequence_id, version, step, email, due_at,
                                status, attempts, next_attempt_at, claimed_by, claimed_at,
                                message_id, error, sent_at)
    select id, workspace_id, sequence_id, version, step, email, due_at, status, attempts,
           next_attempt_at, claimed_by, claimed_at, message_id, error, sent_at
      from sequence_sends order by rowid;
drop table sequence_sends;
alter table sequence_sends_new rename to sequence_sends;
create index sequence_sends_due on sequence_sends(status, next_attempt_at);
create index sequence_sends_by_recipient on sequence_sends(workspace_id, email, status);

create table email_settings (
    key   text primary key,
    value text not null
);

create table sequence_replies (
    sequence_id  text not null references sequences(id) on delete cascade,
    email        text not null,
    workspace_id text not null,
    marked_by    text not null,            -- the user, or 'cli'
    created_at   integer not null,
    primary key (sequence_id, email)
);

-- Email a real sales team can send (issue 23); the SQLite twin is 0026_email_delivery.
--   * email_suppressions: reasons 'unsubscribed' | 'bounced' | 'complained' | 'manual'
--     (baja → unsubscribed, rebote → bounced), `detail` (SMTP answer or note),
--     `created_by` (the admin; null when the recipient or the transport suppressed);
--   * sequence_sends: status 'cancelled' (unsubscribed, bounced or replied; `error`
--     says which);
--   * email_settings: the per-install secret that signs unsubscribe links;
--   * sequence_replies: recipients who answered; their remaining steps are skipped.
alter table email_suppressions drop constraint email_suppressions_reason_check;
update email_suppressions
   set reason = case reason when 'baja' then 'unsubscribed' when 'rebote' then 'bounced' else 'manual' end;
alter table email_suppressions add constraint email_suppressions_reason_check
    check (reason in ('unsubscribed', 'bounced', 'complained', 'manual'));
alter table email_suppressions add column detail text;
alter table email_suppressions add column created_by text;

alter table sequence_sends drop constraint sequence_sends_status_check;
alter table sequence_sends add constraint sequence_sends_status_check
    check (status in ('pending', 'sending', 'sent', 'failed', 'suppressed',
                      'blocked', 'unknown', 'cancelled'));
create index sequence_sends_by_recipient on sequence_sends(workspace_id, email, status);

create table email_settings (
    key   text primary key,
    value text not null
);

create table sequence_replies (
    sequence_id  text not null references sequences(id) on delete cascade,
    email        text not null,
    workspace_id text not null,
    marked_by    text not null,
    created_at   bigint not null,
    primary key (sequence_id, email)
);

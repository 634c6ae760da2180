-- A request that asked for several things in one message (issue 21, CONTRACT §7.6):
-- after Luna offers the card for one part, the rest waits here until the person
-- resolves that card. Accepted: the next turn continues the plan on its own; declined
-- or expired: the plan ends. One plan per session; `done` is the JSON list of the card
-- kinds already accepted along it, `chain` how many turns it has run.
create table session_plans (
    session_id   text primary key,
    workspace_id text not null,
    message      text not null,
    awaiting     text not null,
    done         text not null,
    chain        integer not null,
    created_at   integer not null
);

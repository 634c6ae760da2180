-- An event is appended by one statement (`session::rows::append_event`): the insert
-- takes its seq as the session's `last_seq + 1`, and this trigger moves the counter
-- to it in the same statement. A single-statement append is atomic on its own, so
-- appending one event needs no explicit transaction; the invariants of 0004 hold
-- (gap-free, unique per session, a rolled-back append leaves no gap). The trigger sets
-- the counter to the inserted seq, so rows are only ever inserted in seq order (by
-- `append_event`, never copied in bulk).
create trigger session_events_claim_seq after insert on session_events
begin
    update work_sessions set last_seq = new.seq, updated_at = new.created_at
     where id = new.session_id;
end;

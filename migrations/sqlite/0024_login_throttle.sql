-- Login throttling per client IP and per (client IP, email), replacing the per-email
-- `login_failures` (anyone could lock a person out by knowing their email, and the
-- count was read before the password was checked, so parallel attempts all ran).
-- One row per counter: `email` is '' for the IP's counter across every email. An
-- attempt claims its slot with one upsert before argon2 runs (accounts::login ->
-- login_throttle::claim); rows whose window ended are deleted by the next attempt.
-- `ip` is an IPv4 address or an IPv6 /64 network.
drop table login_failures;

create table login_throttle (
    ip           text not null,
    email        text not null,
    window_start integer not null,
    attempts     integer not null,
    primary key (ip, email)
);
create index login_throttle_by_window on login_throttle(window_start);

-- A session whose sequence draft waits for its review is in stage 'con_borrador'
-- (luna_protocol::session::Stage::ConBorrador), which 0004's CHECK list did not
-- contain: declining a sequence card or editing a drafted step stored it, the write
-- failed, and every later message of that session failed too (issue 43, bug 1).
--
-- SQLite cannot alter a CHECK constraint, and rebuilding the table needs
-- `foreign_keys = off`, which cannot be set inside the transaction a migration runs
-- in (sessions, turns, decisions and events all reference work_sessions). The CHECK is
-- only text in the schema, so the documented way to widen it is to edit that text
-- (https://www.sqlite.org/lang_altertable.html, "making other kinds of table schema
-- changes"): every stored stage stays valid under the wider list.
pragma writable_schema = on;
update sqlite_master
   set sql = replace(sql,
                     '''con_lista_guardada'', ''decision_pendiente''',
                     '''con_lista_guardada'', ''con_borrador'', ''decision_pendiente''')
 where type = 'table' and name = 'work_sessions';
pragma writable_schema = reset;
-- Creating and dropping a table bumps the schema cookie, so every open connection
-- reads the edited schema before its next statement.
create table session_stage_draft_cookie (x integer);
drop table session_stage_draft_cookie;

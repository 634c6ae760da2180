-- A session whose sequence draft waits for its review is in stage 'con_borrador'
-- (luna_protocol::session::Stage::ConBorrador), which 0001's CHECK list did not
-- contain: declining a sequence card or editing a drafted step stored it, the write
-- failed, and every later message of that session failed too (issue 43, bug 1).
alter table work_sessions drop constraint work_sessions_stage_check;
alter table work_sessions add constraint work_sessions_stage_check
    check (stage in ('sin_criterio', 'buscando', 'con_seleccion',
                     'con_lista_guardada', 'con_borrador', 'decision_pendiente'));

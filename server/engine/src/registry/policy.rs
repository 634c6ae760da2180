//! Authorization of a call before it runs: the calling surface, an API key's scopes,
//! workspace role, plan features and the ladder level (CONTRACT §8). The model proposes;
//! this decides.

use luna_protocol::account::{ApiScope, Role};
use luna_protocol::error::ErrorCode;

use crate::accounts::Caller;
use crate::base::error::EngineError;
use crate::billing::limits;

use super::ctx::ExecMode;
use super::def::{Feature, KeyAccess, Level, Surface, ToolDef};

#[derive(Debug)]
pub enum Decision {
    Execute,
    /// Build the preview only (Luna and a level-1/2 tool).
    PreviewOnly,
    Refuse(EngineError),
}

impl Decision {
    pub fn mode(&self) -> Option<ExecMode> {
        match self {
            Decision::Execute => Some(ExecMode::Execute),
            Decision::PreviewOnly => Some(ExecMode::PreviewOnly),
            Decision::Refuse(_) => None,
        }
    }
}

pub fn plan_refusal(what: &str) -> EngineError {
    EngineError::typed(
        ErrorCode::PlanLimit,
        format!("Tu plan no incluye {what}."),
        "Un administrador puede cambiar al plan Founder o Commercial en Ajustes.",
    )
}

/// A key without the scope a tool needs: FORBIDDEN, naming the scope.
pub fn missing_scope(scope: ApiScope) -> EngineError {
    EngineError::typed(
        ErrorCode::Forbidden,
        format!(
            "Esta llave de API no tiene el permiso «{}» ({}).",
            scope.as_str(),
            scope.label()
        ),
        format!(
            "Un administrador puede crear en Ajustes una llave con el permiso «{}».",
            scope.as_str()
        ),
    )
}

/// The one policy function every surface goes through.
pub fn authorize(def: &ToolDef, caller: &Caller, surface: Surface) -> Decision {
    if !def.surfaces.contains(&surface) {
        return Decision::Refuse(super::alias::unknown_tool(def.name, Vec::new()));
    }
    if let Some(key) = &caller.api_key {
        match def.key_access() {
            KeyAccess::Read => {}
            KeyAccess::Scope(scope) if key.allows(scope) => {}
            KeyAccess::Scope(scope) => return Decision::Refuse(missing_scope(scope)),
            KeyAccess::Never => {
                return Decision::Refuse(EngineError::typed(
                    ErrorCode::Forbidden,
                    "Una llave de API no puede usar esta herramienta.",
                    "Hazlo desde la aplicación, en la página correspondiente.",
                ))
            }
        }
    }
    if def.admin_only && !matches!(caller.role, Role::Owner | Role::Admin) {
        return Decision::Refuse(EngineError::forbidden(
            "Solo el dueño o un administrador del espacio de trabajo puede usar esta herramienta.",
        ));
    }
    let plan = limits(caller.plan);
    for feature in &def.requires {
        let (allowed, what) = match feature {
            Feature::Contacts => (plan.contacts, "contactos"),
            Feature::Sequences => (plan.sequences, "secuencias"),
            Feature::Auto => (plan.auto, "el modo automático"),
            Feature::Research => (plan.research_runs > 0, "investigaciones largas"),
        };
        if !allowed {
            return Decision::Refuse(plan_refusal(what));
        }
    }
    match (surface, def.level) {
        (_, Level::L0) => Decision::Execute,
        (Surface::Luna, Level::L1 | Level::L2) => Decision::PreviewOnly,
        (Surface::Luna | Surface::Mcp, Level::Never) => Decision::Refuse(EngineError::typed(
            ErrorCode::Forbidden,
            "Esto no se puede hacer desde el chat ni por una integración.",
            "Hazlo desde la aplicación, en la página correspondiente.",
        )),
        (Surface::Ui | Surface::Mcp, Level::L1 | Level::L2) | (Surface::Ui, Level::Never) => {
            Decision::Execute
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::def::Family;
    use luna_protocol::account::Plan;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct NoArgs {}

    fn caller(plan: Plan, role: Role) -> Caller {
        Caller {
            user_id: "usr_1".into(),
            email: "a@b.mx".into(),
            display_name: "A".into(),
            workspace_id: "ws_1".into(),
            workspace_name: "W".into(),
            role,
            plan,
            api_key: None,
        }
    }

    fn def(level: Level) -> ToolDef {
        ToolDef::new::<NoArgs>("demo_tool", Family::Crm).level(level)
    }

    #[test]
    fn luna_only_previews_level_one_and_two() {
        let c = caller(Plan::Founder, Role::Member);
        assert!(matches!(
            authorize(&def(Level::L0), &c, Surface::Luna),
            Decision::Execute
        ));
        assert!(matches!(
            authorize(&def(Level::L1), &c, Surface::Luna),
            Decision::PreviewOnly
        ));
        assert!(matches!(
            authorize(&def(Level::L2), &c, Surface::Luna),
            Decision::PreviewOnly
        ));
        assert!(matches!(
            authorize(&def(Level::L2), &c, Surface::Ui),
            Decision::Execute
        ));
        assert!(matches!(
            authorize(&def(Level::Never), &c, Surface::Luna),
            Decision::Refuse(_)
        ));
        assert!(matches!(
            authorize(&def(Level::Never), &c, Surface::Mcp),
            Decision::Refuse(_)
        ));
    }

    #[test]
    fn role_plan_and_surface_are_checked() {
        let member = caller(Plan::Founder, Role::Member);
        let admin = caller(Plan::Founder, Role::Admin);
        let d = def(Level::L0).admin_only();
        assert!(
            matches!(authorize(&d, &member, Surface::Ui), Decision::Refuse(e) if e.code() == ErrorCode::Forbidden)
        );
        assert!(matches!(
            authorize(&d, &admin, Surface::Ui),
            Decision::Execute
        ));

        let explorer = caller(Plan::Explorer, Role::Owner);
        let d = def(Level::L2).requires(Feature::Contacts);
        assert!(
            matches!(authorize(&d, &explorer, Surface::Mcp), Decision::Refuse(e) if e.code() == ErrorCode::PlanLimit)
        );

        let d = def(Level::L0).surfaces(&[Surface::Luna]);
        assert!(
            matches!(authorize(&d, &admin, Surface::Mcp), Decision::Refuse(e) if e.code() == ErrorCode::UnknownTool)
        );
    }

    #[test]
    fn a_key_needs_the_scope_of_what_each_public_tool_does() {
        use KeyAccess::{Read, Scope};
        let reg = crate::tools::catalog();
        let needs: Vec<(&str, KeyAccess)> = reg
            .list(Surface::Mcp)
            .into_iter()
            .filter(|d| d.key_access() != Read)
            .map(|d| (d.name, d.key_access()))
            .collect();
        assert_eq!(
            needs,
            [
                ("context_create", Scope(ApiScope::KnowledgeWrite)),
                ("context_update", Scope(ApiScope::KnowledgeWrite)),
                ("context_delete", Scope(ApiScope::KnowledgeDelete)),
                ("crm_record", Scope(ApiScope::CrmWrite)),
                ("company_save", Scope(ApiScope::CrmWrite)),
                ("people_reveal", Scope(ApiScope::ContactsReveal)),
                ("people_file", Scope(ApiScope::CrmWrite)),
            ]
        );
        // What every key may call reads only.
        assert!(reg
            .list(Surface::Mcp)
            .iter()
            .filter(|d| d.key_access() == Read)
            .all(|d| d.read_only()));
    }

    #[test]
    fn a_key_calls_only_within_its_scopes_and_a_person_is_not_held_to_them() {
        let d = def(Level::L0)
            .side_effect(crate::registry::SideEffect::Destructive)
            .surfaces(&[Surface::Mcp]);
        let d = ToolDef {
            family: Family::Context,
            ..d
        };
        let mut key = caller(Plan::Founder, Role::Owner);
        key.api_key = Some(crate::testkit::grant(&[ApiScope::KnowledgeWrite]));
        assert!(
            matches!(authorize(&d, &key, Surface::Mcp), Decision::Refuse(e) if e.body().message.contains("knowledge:delete"))
        );
        key.api_key = Some(crate::testkit::grant(&[ApiScope::KnowledgeDelete]));
        assert!(matches!(
            authorize(&d, &key, Surface::Mcp),
            Decision::Execute
        ));
        let person = caller(Plan::Founder, Role::Owner);
        assert!(matches!(
            authorize(&d, &person, Surface::Mcp),
            Decision::Execute
        ));
        // A write no scope covers (a send) is never a key's.
        let send = def(Level::L0).side_effect(crate::registry::SideEffect::External);
        assert!(
            matches!(authorize(&send, &key, Surface::Mcp), Decision::Refuse(e) if e.code() == ErrorCode::Forbidden)
        );
    }
}

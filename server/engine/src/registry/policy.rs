//! Authorization of a call before it runs: workspace role, plan features, the calling
//! surface and the ladder level (SPEC §8). The model proposes; this decides.

use luna_protocol::account::Role;
use luna_protocol::error::ErrorCode;

use crate::accounts::Caller;
use crate::billing::limits;
use crate::error::EngineError;

use super::ctx::ExecMode;
use super::def::{Feature, Level, Surface, ToolDef};

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

/// The one policy function every surface goes through.
pub fn authorize(def: &ToolDef, caller: &Caller, surface: Surface) -> Decision {
    if !def.surfaces.contains(&surface) {
        return Decision::Refuse(super::alias::unknown_tool(def.name, Vec::new()));
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
            api_key_id: None,
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
}

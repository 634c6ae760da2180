//! `docs/TOOLS.md`, generated from the registry so no document can name a tool that
//! does not exist or miss one that does. A test regenerates it and compares
//! (`LUNA_UPDATE_DOCS=1` rewrites the file).

use std::fmt::Write;

use super::def::{KeyAccess, Stage, Surface, ToolDef};
use super::{alias, Registry, TOOL_RESULT_CAP};

fn surfaces(def: &ToolDef) -> String {
    let mut out: Vec<&str> = Vec::new();
    for s in [Surface::Mcp, Surface::Luna, Surface::Ui] {
        if def.surfaces.contains(&s) {
            out.push(match s {
                Surface::Mcp => "MCP público",
                Surface::Luna => "Luna",
                Surface::Ui => "interfaz",
            });
        }
    }
    out.join(", ")
}

fn stages(def: &ToolDef) -> String {
    if def.stages.is_empty() {
        return "—".into();
    }
    Stage::ALL
        .iter()
        .filter_map(|s| {
            def.stages
                .iter()
                .find(|(t, _)| t == s)
                .map(|(_, p)| format!("{} ({p})", s.as_str()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What an API key needs for the tool (`ToolDef::key_access`).
fn key_access(def: &ToolDef) -> String {
    match def.key_access() {
        KeyAccess::Read => "lectura".into(),
        KeyAccess::Scope(scope) => format!("`{}`", scope.as_str()),
        KeyAccess::Never => "ninguna".into(),
    }
}

/// The whole reference as markdown.
pub fn markdown(reg: &Registry) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Herramientas de Luna\n");
    let _ = writeln!(
        md,
        "<!-- Generado desde el registro (server/engine/src/registry). No lo edites a mano: \
         `LUNA_UPDATE_DOCS=1 cargo test -p luna-engine tools_md` lo reescribe. -->\n"
    );
    let public = reg.list(Surface::Mcp);
    let _ = writeln!(
        md,
        "Catálogo público por MCP: {} herramientas. Tope de resultado para Luna: {} caracteres.\n",
        public.len(),
        TOOL_RESULT_CAP
    );
    let _ = writeln!(
        md,
        "Una llave de API lee siempre; para lo demás necesita el permiso de la columna «llave de API», \
         que un administrador marca al crearla (en Ajustes o con `luna-server create-api-key --scopes …`). \
         «ninguna»: ninguna llave la usa, la hace una persona en la aplicación. Fusionar conocimiento \
         nunca lo hace una llave.\n"
    );
    let _ = writeln!(md, "| herramienta | familia | nivel | efecto | costo | idempotente | presupuesto | superficies | llave de API |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    for d in reg.all() {
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | {:?} | {} | {} | {} | {} | {} |",
            d.name,
            d.family.label(),
            d.level.as_str(),
            d.side_effect,
            d.cost_class.as_str(),
            if d.idempotent { "sí" } else { "no" },
            d.output_budget,
            surfaces(d),
            key_access(d)
        );
    }
    for d in reg.all() {
        let a = d.annotations();
        let _ = writeln!(md, "\n## `{}` — {}\n", d.name, d.label);
        let _ = writeln!(md, "{}\n", d.full_description());
        let _ = writeln!(
            md,
            "- Etapas de Luna: {}\n- Campos citables: {}\n- Anotaciones MCP: readOnlyHint={}, destructiveHint={}, idempotentHint={}, openWorldHint={}",
            stages(d),
            d.citations.join(", "),
            a.read_only,
            a.destructive,
            a.idempotent,
            a.open_world
        );
        let schema = serde_json::to_string_pretty(&d.input_schema).unwrap_or_default();
        let _ = writeln!(md, "\n```json\n{schema}\n```");
    }
    let _ = writeln!(md, "\n## Nombres heredados\n");
    let _ = writeln!(
        md,
        "Funcionan {} días desde la fecha de publicación configurada, no aparecen en la lista de herramientas \
         y su resultado trae `next_action` con el reemplazo. Cualquier herramienta pública también responde \
         como `driftless_<nombre>` y `brein_<nombre>`.\n",
        alias::ALIAS_WINDOW_DAYS
    );
    let _ = writeln!(md, "| nombre heredado | reemplazo | registrada |");
    let _ = writeln!(md, "|---|---|---|");
    for l in alias::LEGACY_NAMES {
        let _ = writeln!(
            md,
            "| `{}` | `{}` | {} |",
            l.legacy,
            l.target,
            if reg.get(l.target).is_some() {
                "sí"
            } else {
                "todavía no"
            }
        );
    }
    let _ = writeln!(md, "\n## Herramientas retiradas (sin alias)\n");
    for name in alias::DELETED_NAMES {
        let _ = writeln!(md, "- `{name}`");
    }
    for suffix in alias::DELETED_SUFFIXES {
        let _ = writeln!(md, "- `<conexión>{suffix}`");
    }
    md
}

//! The caps on what Cerebro accepts, in one place so the engine's checks and the
//! tools' JSON schemas (`maxLength`, `maxItems`) agree. Every cap is far above what a
//! real team note needs; past it the answer is `INVALID_ARGUMENT` in Spanish naming
//! the limit, never a slow or huge operation.

use luna_protocol::error::ErrorCode;

use crate::base::error::{EngineError, EngineResult};

use super::{glob, normalize_area, NewTopic};

/// A topic's title, in characters.
pub const MAX_TITLE: usize = 160;
/// An area ("gobierno", "ventas"), in characters.
pub const MAX_AREA: usize = 60;
/// A body or a suggested edit's proposed body, in characters: about eight printed
/// pages. Longer text is a document, not a note; it also bounds every diff.
pub const MAX_BODY: usize = 20_000;
/// A suggested edit's summary ("what changes and why, in one sentence").
pub const MAX_SUMMARY: usize = 300;
/// File patterns per topic.
pub const MAX_PATTERNS: usize = 20;
/// One file pattern, in characters (`gobierno/imss/**/*.pdf` is 22).
pub const MAX_PATTERN_CHARS: usize = glob::MAX_PATTERN_CHARS;
/// Files per `context_retrieve`.
pub const MAX_FILES: usize = 20;
/// One file path given to `context_retrieve`, in characters.
pub const MAX_PATH_CHARS: usize = glob::MAX_PATH_CHARS;
/// `context_retrieve`'s `task` and `query`, each, in characters.
pub const MAX_QUERY: usize = 1_000;
/// A topic reference (`topic:<slug>`; slugs are at most 60 characters plus a suffix).
pub const MAX_REF: usize = 100;

pub(super) fn invalid(message: impl Into<String>, hint: impl Into<String>) -> EngineError {
    EngineError::typed(ErrorCode::InvalidArgument, message, hint)
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

pub(super) fn check_title(title: &str) -> EngineResult<()> {
    let title = title.trim();
    if title.is_empty() || chars(title) > MAX_TITLE {
        return Err(invalid(
            format!("El título debe tener entre 1 y {MAX_TITLE} caracteres."),
            "Escribe un título corto que diga de qué trata.",
        ));
    }
    Ok(())
}

pub(super) fn check_area(area: &str) -> EngineResult<()> {
    if area.is_empty() || chars(area) > MAX_AREA {
        return Err(invalid(
            format!("El área debe tener entre 1 y {MAX_AREA} caracteres."),
            "Usa un área como ventas, gobierno, icp o producto.",
        ));
    }
    Ok(())
}

pub(super) fn check_body(body: &str) -> EngineResult<()> {
    if body.trim().is_empty() || chars(body) > MAX_BODY {
        return Err(invalid(
            format!("El contenido debe tener entre 1 y {MAX_BODY} caracteres."),
            "Resume lo que el equipo debe saber.",
        ));
    }
    Ok(())
}

pub(super) fn check_summary(summary: &str) -> EngineResult<()> {
    let summary = summary.trim();
    if summary.is_empty() {
        return Err(invalid(
            "Falta el resumen de la edición.",
            "Explica en una frase qué cambia y por qué.",
        ));
    }
    if chars(summary) > MAX_SUMMARY {
        return Err(invalid(
            format!("El resumen de la edición pasa de {MAX_SUMMARY} caracteres."),
            "Explica en una frase qué cambia y por qué; el detalle va en el contenido.",
        ));
    }
    Ok(())
}

pub(super) fn check_patterns(patterns: &[String]) -> EngineResult<()> {
    if patterns.len() > MAX_PATTERNS || patterns.iter().any(|p| p.trim().is_empty()) {
        return Err(invalid(
            format!("Hasta {MAX_PATTERNS} patrones de archivo, ninguno vacío."),
            "Ejemplos: gobierno/**, *.pdf, propuestas/imss-*.md",
        ));
    }
    if patterns.iter().any(|p| chars(p.trim()) > MAX_PATTERN_CHARS) {
        return Err(invalid(
            format!("Cada patrón de archivo puede tener hasta {MAX_PATTERN_CHARS} caracteres."),
            "Usa carpetas y comodines cortos: gobierno/**, *.pdf, propuestas/imss-*.md",
        ));
    }
    if let Some(bad) = patterns.iter().find(|p| glob::compile(p).is_none()) {
        return Err(invalid(
            format!("El patrón de archivo «{}» no es válido.", bad.trim()),
            "Usa ** para cualquier carpeta, * dentro de una carpeta y ? para una letra.",
        ));
    }
    Ok(())
}

/// A new topic or note, checked and normalised (trimmed, area folded).
pub(super) fn check_new(t: &NewTopic) -> EngineResult<NewTopic> {
    check_title(&t.title)?;
    let area = normalize_area(&t.area);
    check_area(&area)?;
    check_body(&t.body)?;
    check_patterns(&t.patterns)?;
    Ok(NewTopic {
        title: t.title.trim().to_owned(),
        area,
        body: t.body.trim().to_owned(),
        patterns: t.patterns.iter().map(|p| p.trim().to_owned()).collect(),
    })
}

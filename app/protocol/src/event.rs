//! The events of a work session (CONTRACT §12). Every event is appended to the session's
//! log with a gap-free `seq`; the board and the chat are folds of these events (see
//! `view::apply`). Payloads are client-safe: no model ids, quote tokens, idempotency
//! keys or raw `[[kind:id]]` markers ever appear here.
//!
//! JSON form: `{"type":"turn.accepted","turn_id":"…","stage":"buscando"}`.

use crate::json::FromJson;
use serde::{Deserialize, Deserializer, Serialize};

use crate::board::{RunPhase, RunStatus};
use crate::decision::{DecisionCard, DecisionOutcome, DecisionResult};
use crate::patch::PatchOp;
use crate::session::Stage;

/// `Deserialize` goes through `FromJson` (`crate::json::deserialize`): serde's derive for
/// an internally tagged enum would buffer every variant in its `Content` type.
#[derive(Debug, Clone, PartialEq, Serialize, FromJson)]
#[serde(tag = "type")]
pub enum SessionEvent {
    /// The person's message. `steering` is true when it arrived while a turn ran.
    #[serde(rename = "user.message")]
    UserMessage(UserMessage),
    #[serde(rename = "turn.accepted")]
    TurnAccepted(TurnAccepted),
    #[serde(rename = "narration.delta")]
    NarrationDelta(NarrationDelta),
    #[serde(rename = "tool.started")]
    ToolStarted(ToolStarted),
    #[serde(rename = "tool.finished")]
    ToolFinished(ToolFinished),
    #[serde(rename = "board.patched")]
    BoardPatched(BoardPatched),
    #[serde(rename = "decision.proposed")]
    DecisionProposed(DecisionProposed),
    #[serde(rename = "decision.resolved")]
    DecisionResolved(DecisionResolved),
    #[serde(rename = "run.progress")]
    RunProgress(RunProgress),
    #[serde(rename = "turn.finished")]
    TurnFinished(TurnFinished),
    #[serde(rename = "turn.refused")]
    TurnRefused(TurnRefused),
    /// The person tapped "deshacer" on a tool line and the write was undone.
    #[serde(rename = "undo.applied")]
    UndoApplied(UndoApplied),
    /// What became of a steering message: the model received it at its next step, or
    /// it arrived when the turn had no step left.
    #[serde(rename = "steering.resolved")]
    SteeringResolved(SteeringResolved),
}

impl SessionEvent {
    /// The dotted name, as stored in the log's `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            SessionEvent::UserMessage(_) => "user.message",
            SessionEvent::TurnAccepted(_) => "turn.accepted",
            SessionEvent::NarrationDelta(_) => "narration.delta",
            SessionEvent::ToolStarted(_) => "tool.started",
            SessionEvent::ToolFinished(_) => "tool.finished",
            SessionEvent::BoardPatched(_) => "board.patched",
            SessionEvent::DecisionProposed(_) => "decision.proposed",
            SessionEvent::DecisionResolved(_) => "decision.resolved",
            SessionEvent::RunProgress(_) => "run.progress",
            SessionEvent::TurnFinished(_) => "turn.finished",
            SessionEvent::TurnRefused(_) => "turn.refused",
            SessionEvent::UndoApplied(_) => "undo.applied",
            SessionEvent::SteeringResolved(_) => "steering.resolved",
        }
    }
}

impl<'de> Deserialize<'de> for SessionEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::json::deserialize(deserializer)
    }
}

/// An event as stored and streamed: its position in the session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct StoredEvent {
    pub seq: u64,
    pub event: SessionEvent,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct UserMessage {
    pub turn_id: String,
    pub text: String,
    #[serde(default)]
    pub steering: bool,
}

/// The steering message `text` of turn `turn_id` (a `user.message` with `steering`)
/// and what became of it; the chat shows it next to the message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct SteeringResolved {
    pub turn_id: String,
    pub text: String,
    pub outcome: SteeringOutcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum SteeringOutcome {
    /// The model received it at its next step and planned the rest of the turn with it.
    Applied,
    /// It arrived after the turn's last step: nothing read it.
    TurnEnded,
}

impl SteeringOutcome {
    /// The note the chat shows next to the message.
    pub fn note(self) -> &'static str {
        match self {
            SteeringOutcome::Applied => "Luna lo tomó en cuenta",
            SteeringOutcome::TurnEnded => {
                "llegó cuando Luna ya había terminado; envíalo de nuevo si aún aplica"
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct TurnAccepted {
    pub turn_id: String,
    pub stage: Stage,
}

/// A resolved reference inside narration text: `text[start..end] == label` (byte
/// offsets into this delta's `text`, on char boundaries), linking to `ref`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct Anchor {
    pub start: u32,
    pub end: u32,
    pub label: String,
    #[serde(rename = "ref")]
    pub reference: String,
}

/// A piece of Luna's narration, already resolved: plain text plus anchors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct NarrationDelta {
    pub turn_id: String,
    pub text: String,
    #[serde(default)]
    pub anchors: Vec<Anchor>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct ToolStarted {
    pub turn_id: String,
    /// The call's opaque ref; pairs `tool.started` with its `tool.finished`.
    pub call_ref: String,
    /// What Luna is doing, in the product lexicon ("Buscando proveedores en Jalisco").
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct ToolFinished {
    pub turn_id: String,
    pub call_ref: String,
    pub label: String,
    pub summary: String,
    #[serde(default)]
    pub refs: Vec<String>,
    #[serde(default)]
    pub reads_counted: u32,
    /// False when the tool returned a typed error (the summary then explains it).
    #[serde(default = "yes")]
    pub ok: bool,
    /// Present when a level-0 write can be undone ("deshacer").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo_token: Option<String>,
}

fn yes() -> bool {
    true
}

/// "deshacer" worked: the tool line holding `undo_token` shows `summary` instead of
/// its button, for every tab and after any reload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct UndoApplied {
    pub undo_token: String,
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct BoardPatched {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub patch: Vec<PatchOp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct DecisionProposed {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub card: DecisionCard,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct DecisionResolved {
    pub decision_id: String,
    pub outcome: DecisionOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<DecisionResult>,
}

/// A research run's real phase (CONTRACT §10), never a search counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct RunProgress {
    pub run_id: String,
    pub title: String,
    pub phase: String,
    pub status: RunStatus,
    /// The result (finished) or why it stopped (failed, cancelled), resolved text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default)]
    pub refs: Vec<String>,
    /// Every phase of the run, in order, with what each found so far.
    #[serde(default)]
    pub phases: Vec<RunPhase>,
    /// Anchors of `summary` (every figure of a result is one).
    #[serde(default)]
    pub anchors: Vec<Anchor>,
}

/// The `TurnIntent` kinds of CONTRACT §7.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum IntentKind {
    Responder,
    Encuadre,
    ProponerDecision,
    Cierre,
    Limite,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct TurnFinished {
    pub turn_id: String,
    pub intent_kind: IntentKind,
}

/// Why a turn was refused before it ran, with the fixed HTTP mapping of CONTRACT §12.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    /// Daily cap or spend cap reached: 429.
    Cap,
    /// Not enough credits: 402.
    Credits,
    /// The plan or role does not allow it: 403.
    Permission,
    /// No configured model can serve the turn: 422.
    NoCapableModel,
}

impl RefusalCode {
    pub fn http_status(self) -> u16 {
        match self {
            RefusalCode::Cap => 429,
            RefusalCode::Credits => 402,
            RefusalCode::Permission => 403,
            RefusalCode::NoCapableModel => 422,
        }
    }

    /// The sentence the chat shows.
    pub fn message(self) -> &'static str {
        match self {
            RefusalCode::Cap => "Llegaste al límite de uso por ahora. Intenta más tarde.",
            RefusalCode::Credits => "No tienes créditos suficientes para esto.",
            RefusalCode::Permission => "Tu plan o tu rol no permiten esta acción.",
            RefusalCode::NoCapableModel => "Luna no puede atender esta petición en este momento.",
        }
    }

    /// What the person can do about it, in one Spanish sentence (shown under the message).
    pub fn what_to_do(self) -> &'static str {
        match self {
            RefusalCode::Cap => {
                "Espera unos minutos y vuelve a enviarlo; si lo necesitas ya, pide a quien administra tu equipo que suba el límite en Ajustes."
            }
            RefusalCode::Credits => {
                "Pide menos resultados, o pide a quien administra tu equipo más créditos o un plan mayor, y vuelve a intentarlo."
            }
            RefusalCode::Permission => {
                "Pide a quien es dueño o administra tu equipo que lo haga por ti, o que te dé el rol necesario."
            }
            RefusalCode::NoCapableModel => {
                "Vuelve a escribirlo con otras palabras o más sencillo; si sigue pasando, intenta más tarde."
            }
        }
    }

    /// A short title for the refusal card.
    pub fn title(self) -> &'static str {
        match self {
            RefusalCode::Cap => "Límite de uso alcanzado",
            RefusalCode::Credits => "Créditos insuficientes",
            RefusalCode::Permission => "Sin permiso",
            RefusalCode::NoCapableModel => "No se pudo atender",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct TurnRefused {
    pub turn_id: String,
    pub code: RefusalCode,
    pub http_status: u16,
}

impl TurnRefused {
    /// Builds the event with the status fixed by the code.
    pub fn new(turn_id: impl Into<String>, code: RefusalCode) -> Self {
        TurnRefused {
            turn_id: turn_id.into(),
            code,
            http_status: code.http_status(),
        }
    }
}

impl NarrationDelta {
    /// Starts an empty delta; add text with `text` and anchored names with `link`.
    pub fn new(turn_id: impl Into<String>) -> Self {
        NarrationDelta {
            turn_id: turn_id.into(),
            text: String::new(),
            anchors: Vec::new(),
        }
    }

    pub fn text(mut self, text: &str) -> Self {
        self.text.push_str(text);
        self
    }

    /// Appends `label` linked to `reference` (a resolved `[[kind:id]]`).
    pub fn link(mut self, label: &str, reference: impl Into<String>) -> Self {
        let start = self.text.len() as u32;
        self.text.push_str(label);
        self.anchors.push(Anchor {
            start,
            end: self.text.len() as u32,
            label: label.to_owned(),
            reference: reference.into(),
        });
        self
    }
}

/// Why an event is malformed regardless of the session's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEvent(pub &'static str);

impl std::fmt::Display for InvalidEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for InvalidEvent {}

impl SessionEvent {
    /// Checks what can be checked without the session's state: anchors point at their
    /// labels in order, narration has no raw `[[`/`]]` markers, a refusal carries its
    /// fixed HTTP status. Writers call this before appending.
    pub fn validate(&self) -> Result<(), InvalidEvent> {
        match self {
            SessionEvent::NarrationDelta(d) => check_anchors(&d.text, &d.anchors),
            SessionEvent::RunProgress(p) => {
                let summary = p.summary.as_deref().unwrap_or("");
                check_anchors(summary, &p.anchors)?;
                for phase in &p.phases {
                    check_anchors(&phase.found, &phase.anchors)?;
                }
                Ok(())
            }
            SessionEvent::TurnRefused(r) if r.http_status != r.code.http_status() => Err(
                InvalidEvent("turn.refused carries an HTTP status that does not match its code"),
            ),
            _ => Ok(()),
        }
    }
}

/// Text shown to a person with its anchors: no raw `[[`/`]]`, anchors in order and
/// pointing at their labels.
fn check_anchors(text: &str, anchors: &[Anchor]) -> Result<(), InvalidEvent> {
    if text.contains("[[") || text.contains("]]") {
        return Err(InvalidEvent("narration contains a raw [[ ]] reference"));
    }
    let mut pos = 0u32;
    for a in anchors {
        let ok = a.start >= pos
            && a.start < a.end
            && text.get(a.start as usize..a.end as usize) == Some(a.label.as_str());
        if !ok {
            return Err(InvalidEvent("anchor does not match the narration text"));
        }
        pos = a.end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialize_with_dotted_type_tags() {
        let ev = SessionEvent::TurnAccepted(TurnAccepted {
            turn_id: "t1".into(),
            stage: Stage::Buscando,
        });
        assert_eq!(
            serde_json::to_value(&ev).unwrap(),
            json!({"type": "turn.accepted", "turn_id": "t1", "stage": "buscando"})
        );
        let refused =
            SessionEvent::TurnRefused(TurnRefused::new("t2", RefusalCode::NoCapableModel));
        let v = serde_json::to_value(&refused).unwrap();
        assert_eq!(v["type"], "turn.refused");
        assert_eq!(v["code"], "no_capable_model");
        assert_eq!(v["http_status"], 422);
        let back: SessionEvent = serde_json::from_value(v).unwrap();
        assert_eq!(back, refused);
        assert_eq!(back.kind(), "turn.refused");
    }

    #[test]
    fn refusal_codes_have_the_fixed_http_mapping() {
        assert_eq!(RefusalCode::Cap.http_status(), 429);
        assert_eq!(RefusalCode::Credits.http_status(), 402);
        assert_eq!(RefusalCode::Permission.http_status(), 403);
        assert_eq!(RefusalCode::NoCapableModel.http_status(), 422);
        let forged = SessionEvent::TurnRefused(TurnRefused {
            turn_id: "t".into(),
            code: RefusalCode::Cap,
            http_status: 500,
        });
        assert!(forged.validate().is_err());
    }

    #[test]
    fn narration_builder_produces_valid_anchors() {
        let d = NarrationDelta::new("t1")
            .text("Encontré ")
            .link("Cartones Tapatíos", "company:c1")
            .text(" con ")
            .link("3 adjudicaciones", "record:r9")
            .text(".");
        assert_eq!(d.text, "Encontré Cartones Tapatíos con 3 adjudicaciones.");
        assert_eq!(d.anchors[1].label, "3 adjudicaciones");
        assert!(SessionEvent::NarrationDelta(d.clone()).validate().is_ok());

        let mut bad = d.clone();
        bad.anchors[0].end += 1;
        assert!(SessionEvent::NarrationDelta(bad).validate().is_err());
        let raw = NarrationDelta::new("t1").text("Hay [[record:r9]]");
        assert!(SessionEvent::NarrationDelta(raw).validate().is_err());
    }
}

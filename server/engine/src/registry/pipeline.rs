//! The execution pipeline, the same for every caller (UI, MCP, Luna): resolve alias →
//! validate → authorise → bind the idempotency key ([`idempotency`]) → read ceiling →
//! execute → charge → budget → envelope → telemetry. Errors come back as data (`ErrorBody`), never as a thrown string.

use std::time::Instant;

use luna_protocol::error::{ErrorBody, ErrorEnvelope};
use luna_protocol::tool::{Envelope, ToolOutcome};
use serde_json::Value;
use tracing::Instrument;

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::WriteBatch;
use crate::billing::{key_budget, ChargeContext, ChargeSpec, Ledger, Receipt};
use crate::Engine;

use super::ctx::{ExecMode, ToolCtx};
use super::def::{CostClass, Surface, ToolDef};
use super::idempotency::{self, Claim, Stored};
use super::policy::{authorize, Decision};
use super::{budget, telemetry};

/// A call as it arrives from a surface.
#[derive(Debug, Clone)]
pub struct ToolRequest {
    pub name: String,
    pub args: Value,
    pub surface: Surface,
    /// Sent by the caller (or minted by the server for decisions); retries reuse it.
    pub idempotency_key: Option<String>,
    /// Set when auto mode runs the call (goes on receipts).
    pub auto_policy: Option<String>,
    /// The work session a Luna call belongs to (session tools read and patch it).
    pub session_id: Option<String>,
}

impl ToolRequest {
    pub fn new(name: impl Into<String>, args: Value, surface: Surface) -> Self {
        ToolRequest {
            name: name.into(),
            args,
            surface,
            idempotency_key: None,
            auto_policy: None,
            session_id: None,
        }
    }
}

/// The outcome of one call.
#[derive(Debug, Clone)]
pub struct ToolResponse {
    /// The canonical tool name (the requested name when it did not resolve).
    pub tool: String,
    /// The Spanish label of the tool ("Consultando tus créditos"), empty if unresolved.
    pub label: String,
    pub outcome: Result<Envelope, ErrorBody>,
    pub mode: Option<ExecMode>,
    pub receipts: Vec<Receipt>,
    pub duration_ms: u64,
}

impl ToolResponse {
    pub fn is_ok(&self) -> bool {
        self.outcome.is_ok()
    }

    /// The wire outcome: the envelope, or `{error:{…}}`.
    pub fn to_outcome(&self) -> ToolOutcome {
        match &self.outcome {
            Ok(env) => ToolOutcome::Ok(env.clone()),
            Err(e) => ToolOutcome::Err(ErrorEnvelope { error: e.clone() }),
        }
    }

    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.to_outcome()).unwrap_or(Value::Null)
    }
}

struct Done {
    tool: String,
    label: String,
    mode: Option<ExecMode>,
    receipts: Vec<Receipt>,
    /// Charges the executed branch incurred that are not written yet ([`settle`]).
    pending: Vec<Pending>,
    result: EngineResult<Envelope>,
}

/// One charge a call owes: written by [`settle`] in the transaction that records the
/// call (its own, or the turn step's). A refused charge undoes its own writes
/// (`billing` invariant), so the charges before it stay, their receipts with it.
#[derive(Debug, Clone)]
struct Pending {
    spec: ChargeSpec,
    key: String,
    surface: Surface,
    auto_policy: Option<String>,
    call_ref: String,
}

/// A call that ran and whose charges and telemetry row are not written yet, for a
/// caller that writes them inside its own transaction ([`Unsettled::settle_in`]): a
/// turn step commits its events, its trajectory step, the call's charges and its
/// telemetry row together. Dropping it unsettled charges nothing and loses the row.
#[must_use = "settle the call in the transaction that records it"]
pub struct Unsettled {
    caller: Caller,
    surface: Surface,
    duration_ms: u64,
    done: Done,
    /// The call's `tool` span: its `ok` is recorded once the charges are settled.
    span: tracing::Span,
}

impl Unsettled {
    /// The envelope the call produced, before its charges are written (which may
    /// still turn it into an error).
    pub fn envelope(&self) -> Option<&Envelope> {
        self.done.result.as_ref().ok()
    }

    /// Writes the call's charges and queues its telemetry row in `batch` (the caller's
    /// open transaction) and returns the response. A refused charge makes the response
    /// that error, as in [`call`], and the transaction stays usable; any other error
    /// (the database's, or an internal one) is returned, and the caller drops the
    /// transaction.
    pub async fn settle_in(
        self,
        engine: &Engine,
        batch: &mut WriteBatch,
    ) -> EngineResult<ToolResponse> {
        let Unsettled {
            caller,
            surface,
            duration_ms,
            done,
            span,
        } = self;
        let done = settle(engine, &caller, batch, done).await?;
        let response = respond(done, duration_ms);
        span.record("ok", response.is_ok());
        let code = response.outcome.as_ref().err().map(error_code_str);
        batch
            .push(telemetry::statement(&used(
                &caller,
                surface,
                &response,
                code.as_deref(),
            )))
            .instrument(tracing::trace_span!("tool.telemetry"))
            .await?;
        Ok(response)
    }
}

/// Writes `done`'s pending charges in `batch`. A refused one (a typed error) undoes
/// itself and turns the result into its error (the charges before it stay, their
/// receipts with it); any other error is returned, and the caller drops its transaction.
async fn settle(
    engine: &Engine,
    caller: &Caller,
    batch: &mut WriteBatch,
    mut done: Done,
) -> EngineResult<Done> {
    if done.result.is_err() {
        done.pending.clear();
    }
    for pending in std::mem::take(&mut done.pending) {
        let how = ChargeContext {
            surface: pending.surface.as_str(),
            idempotency_key: &pending.key,
            auto_policy: pending.auto_policy.as_deref(),
            call_ref: Some(&pending.call_ref),
        };
        let charged = engine
            .billing
            .charge_batched(batch, caller, &pending.spec, &how, now_ms())
            .instrument(tracing::trace_span!("tool.charge"))
            .await;
        match charged {
            Ok(receipt) => done.receipts.push(receipt),
            Err(refused @ EngineError::Typed(_)) => {
                done.result = Err(refused);
                break;
            }
            Err(failed) => return Err(failed),
        }
    }
    Ok(done)
}

fn error_code_str(body: &ErrorBody) -> String {
    serde_json::to_value(body.code)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn respond(done: Done, duration_ms: u64) -> ToolResponse {
    ToolResponse {
        tool: done.tool,
        label: done.label,
        outcome: done.result.map_err(|e| e.body()),
        mode: done.mode,
        receipts: done.receipts,
        duration_ms,
    }
}

/// The telemetry row of `response`, whichever writer stores it (on its own, or in the
/// caller's transaction).
fn used<'a>(
    caller: &'a Caller,
    surface: Surface,
    response: &'a ToolResponse,
    error_code: Option<&'a str>,
) -> telemetry::ToolUsed<'a> {
    telemetry::ToolUsed {
        workspace_id: &caller.workspace_id,
        user_id: &caller.user_id,
        tool: &response.tool,
        ok: response.is_ok(),
        duration_ms: response.duration_ms,
        surface: surface.as_str(),
        error_code,
    }
}

/// Runs one call through the whole pipeline: its charges commit in a transaction of
/// their own, then its telemetry row is written.
pub async fn call(engine: &Engine, caller: &Caller, req: ToolRequest) -> ToolResponse {
    let unsettled = call_unsettled(engine, caller, req).await;
    let Unsettled {
        caller: _,
        surface,
        duration_ms,
        done,
        span,
    } = unsettled;
    let done = settle_alone(engine, caller, done).await;
    let response = respond(done, duration_ms);
    span.record("ok", response.is_ok());
    let code = response.outcome.as_ref().err().map(error_code_str);
    telemetry::record(
        &engine.store,
        &used(caller, surface, &response, code.as_deref()),
    )
    .instrument(tracing::trace_span!("tool.telemetry"))
    .await;
    response
}

/// Runs one call through the pipeline up to its charges and telemetry, which the
/// caller writes in its own transaction ([`Unsettled::settle_in`]).
pub async fn call_unsettled(engine: &Engine, caller: &Caller, req: ToolRequest) -> Unsettled {
    let started = Instant::now();
    let span = tracing::info_span!(
        "tool",
        tool.name = %req.name,
        tool.surface = req.surface.as_str(),
        workspace = %caller.workspace_id,
        ok = tracing::field::Empty,
    );
    let surface = req.surface;
    let done = run(engine, caller, req).instrument(span.clone()).await;
    Unsettled {
        caller: caller.clone(),
        surface,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        done,
        span,
    }
}

/// Settles `done`'s charges in a transaction of their own (a database failure
/// becomes the call's error).
async fn settle_alone(engine: &Engine, caller: &Caller, done: Done) -> Done {
    if done.pending.is_empty() {
        return done;
    }
    let (tool, label, mode) = (done.tool.clone(), done.label.clone(), done.mode);
    let settled = async {
        let mut batch = engine.store.begin_batch(None).await?;
        let done = settle(engine, caller, &mut batch, done).await?;
        batch.commit().await?;
        EngineResult::Ok(done)
    }
    .await;
    settled.unwrap_or_else(|e| Done {
        tool,
        label,
        mode,
        receipts: Vec::new(),
        pending: Vec::new(),
        result: Err(e),
    })
}

async fn run(engine: &Engine, caller: &Caller, mut req: ToolRequest) -> Done {
    let now = now_ms();
    let fail = |tool: String, label: String, e: EngineError| Done {
        tool,
        label,
        mode: None,
        receipts: Vec::new(),
        pending: Vec::new(),
        result: Err(e),
    };
    // 1. Resolve the name (aliases translate their arguments). Steps 1–3 are one
    //    trace span, so a profile can tell validation from execution.
    let checking = tracing::trace_span!("tool.validate").entered();
    let resolved =
        match engine
            .registry
            .resolve(&req.name, std::mem::take(&mut req.args), req.surface, now)
        {
            Ok(r) => r,
            Err(e) => return fail(req.name, String::new(), e),
        };
    let def = &resolved.entry.def;
    let tool = def.name.to_owned();
    let label = def.label.to_owned();
    // 2. Validate before anything else runs.
    let args = match resolved.entry.validate(resolved.args) {
        Ok(a) => a,
        Err(e) => return fail(tool, label, e),
    };
    // 3. Authorise.
    let mode = match authorize(def, caller, req.surface) {
        Decision::Refuse(e) => return fail(tool, label, e),
        d => d.mode().unwrap_or(ExecMode::Execute),
    };
    drop(checking);
    // 4. Bind the caller's idempotency key to this exact request: another request
    //    under the key is refused, the same one again gets the stored outcome.
    let Some(key) = req.idempotency_key.as_deref() else {
        return execute(engine, caller, &req, resolved.alias, def, mode, args, now).await;
    };
    let key = match idempotency::checked_key(key) {
        Ok(k) => k.to_owned(),
        Err(e) => return fail(tool, label, e),
    };
    let print = idempotency::fingerprint(def.name, &args, caller);
    let store = &engine.store;
    let ws = caller.workspace_id.as_str();
    match idempotency::claim(store, ws, &key, &print, def.name, now).await {
        Err(e) => fail(tool, label, e),
        Ok(Claim::Replay(stored)) => replay(engine, caller, tool, label, *stored).await,
        Ok(Claim::Fresh) => {
            let req = ToolRequest {
                idempotency_key: Some(key.clone()),
                ..req
            };
            // The stored outcome names its receipts: charge before completing the key.
            let done = execute(engine, caller, &req, resolved.alias, def, mode, args, now).await;
            let done = settle_alone(engine, caller, done).await;
            match &done.result {
                Ok(env) => {
                    let stored = Stored {
                        envelope: env.clone(),
                        preview: done.mode == Some(ExecMode::PreviewOnly),
                        receipt_keys: done
                            .receipts
                            .iter()
                            .map(|r| r.idempotency_key.clone())
                            .collect(),
                    };
                    if let Err(e) = idempotency::complete(store, ws, &key, &stored).await {
                        return Done {
                            result: Err(e),
                            ..done
                        };
                    }
                }
                Err(_) => idempotency::release(store, ws, &key).await,
            }
            done
        }
    }
}

/// The stored outcome of a request that already ran under its key, with its receipts.
async fn replay(
    engine: &Engine,
    caller: &Caller,
    tool: String,
    label: String,
    stored: Stored,
) -> Done {
    let mut receipts = Vec::new();
    for key in &stored.receipt_keys {
        match engine
            .billing
            .receipt_by_key(&caller.workspace_id, key)
            .await
        {
            Ok(Some(r)) => receipts.push(Receipt {
                replayed: true,
                ..r
            }),
            Ok(None) => {}
            Err(e) => {
                return Done {
                    tool,
                    label,
                    mode: None,
                    receipts,
                    pending: Vec::new(),
                    result: Err(e),
                }
            }
        }
    }
    Done {
        tool,
        label,
        mode: Some(stored.mode()),
        receipts,
        pending: Vec::new(),
        result: Ok(stored.envelope),
    }
}

/// Steps 5–9: read ceiling, execute, charge, envelope, budget.
#[allow(clippy::too_many_arguments)]
async fn execute(
    engine: &Engine,
    caller: &Caller,
    req: &ToolRequest,
    alias: Option<(String, String)>,
    def: &ToolDef,
    mode: ExecMode,
    args: Value,
    now: i64,
) -> Done {
    let tool = def.name.to_owned();
    let label = def.label.to_owned();
    let fail = |e: EngineError| Done {
        tool: def.name.to_owned(),
        label: def.label.to_owned(),
        mode: None,
        receipts: Vec::new(),
        pending: Vec::new(),
        result: Err(e),
    };
    // 5. Read ceiling, the plan's daily search quota, a credit preflight and the API
    //    key's monthly budget (nothing runs when its smallest charge would not fit).
    if let Err(e) = admit(engine, caller, def, now)
        .instrument(tracing::trace_span!("tool.admit"))
        .await
    {
        return fail(e);
    }
    // 6. Execute.
    let Some(handler) = def.handler.clone() else {
        return fail(EngineError::Internal(format!(
            "{} has no handler",
            def.name
        )));
    };
    let call_ref = format!("call:{}", uuid::Uuid::new_v4().simple());
    let ctx = ToolCtx {
        caller: caller.clone(),
        surface: req.surface,
        engine: engine.clone(),
        mode,
        tool: def.name,
        call_ref: call_ref.clone(),
        idempotency_key: req.idempotency_key.clone(),
        auto_policy: req.auto_policy.clone(),
        session_id: req.session_id.clone(),
        budget: budget::effective_budget(def.output_budget, super::def::result_cap(req.surface)),
    };
    let output = match handler
        .call(ctx, args)
        .instrument(tracing::trace_span!("tool.execute"))
        .await
    {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    // 7. What the executed branch charges (never in a preview), written when the call
    //    is settled.
    let mut charges = output.charges;
    if mode == ExecMode::PreviewOnly {
        if !charges.is_empty() {
            tracing::error!(tool = def.name, "a preview asked to charge; ignored");
        }
        charges.clear();
    } else if charges.is_empty() && def.cost_class == CostClass::Search {
        charges.push(ChargeSpec {
            action: def.name.to_owned(),
            branch: def.name.to_owned(),
            amount: 1,
            ledger: Ledger::Intelligence,
        });
    }
    let pending = charges
        .into_iter()
        .enumerate()
        .map(|(i, spec)| Pending {
            key: match (&req.idempotency_key, i) {
                (Some(k), 0) => k.clone(),
                (Some(k), n) => format!("{k}#{n}"),
                (None, n) => format!("{call_ref}#{n}"),
            },
            spec,
            surface: req.surface,
            auto_policy: req.auto_policy.clone(),
            call_ref: call_ref.clone(),
        })
        .collect();
    // 8-9. Envelope: the call ref, the alias note, then the budget.
    let mut env = output.envelope;
    env.ref_ = call_ref;
    env.shown = env.results.len();
    if let Some((_, note)) = alias {
        env.next_action = Some(match env.next_action.take() {
            Some(existing) => format!("{note} {existing}"),
            None => note,
        });
    }
    budget::apply(
        &mut env,
        budget::effective_budget(def.output_budget, super::def::result_cap(req.surface)),
    );
    Done {
        tool,
        label,
        mode: Some(mode),
        receipts: Vec::new(),
        pending,
        result: Ok(env),
    }
}

async fn admit(engine: &Engine, caller: &Caller, def: &ToolDef, now: i64) -> EngineResult<()> {
    let cost = def.cost_class;
    let reads = i64::from(cost.reads());
    if cost == CostClass::Search {
        engine.billing.admit_search_call(caller, reads, now).await?;
    } else {
        engine
            .billing
            .admit_reads(&caller.workspace_id, reads, now)
            .await?;
    }
    let least = def.min_charge();
    if least > 0 {
        key_budget::admit(&engine.store, caller, least, now).await?;
    }
    Ok(())
}

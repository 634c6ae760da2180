#!/usr/bin/env python3
"""Crash proof (issue 12): kill -9 of the server during turns, decision resolutions,
dispatches and research runs, on SQLite or PostgreSQL, then an audit of the database and
of what a real SMTP server received.

Each trial runs the next step of the seed scene in some session (a turn, accepting a
card, authorizing a sequence), kills the server with SIGKILL at a random moment while
that step (and the background sender) works, restarts it and repeats the step with the
same idempotency key or decision, the way a person's browser retries. When a session
reaches the end of the scene (which starts with a research run: asked for, and killed
within 150 ms of accepting its `investigar` card, while the run works, then waited for
after the restart) a new one starts. After the last trial the audit checks:

  * every session's log is gap-free: count(events) = max(seq) = last_seq;
  * no decision is resolved twice in a log;
  * no charge twice: one receipt per idempotency key (the database's unique index), and
    every ledger's `used` equals the sum of its receipts;
  * no step reaches a person twice: each Message-ID at most once in the SMTP maildir,
    and every message the server received has its send row;
  * no turn is left running;
  * every research run ended (resumed from its checkpoint after the kills, or failed and
    reported after too many), and none went backwards: each run's `run.progress` events
    never show fewer finished phases than before, and its stored checkpoints match the
    phases it finished.

Standard library only, apart from the pinned aiosmtpd that end2end/smtp/run.sh installs.
Usage: crash.py --server target/debug/luna-server --engine sqlite|postgres --trials N
"""

import argparse
import json
import mailbox
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

SCENE = (
    "Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. "
    "Guárdamelos, consígueme el correo de los 10 mejores y ármame una secuencia de tres correos."
)
# The scene as steps: (kind, text or expected card kind).
STEPS = [
    ("turn", "Investiga a los fabricantes de empaque en Jalisco que le venden a gobierno", "investigar"),
    ("accept", "investigar", None),
    ("turn", SCENE, "guardar_en_crm"),
    ("accept", "guardar_en_crm", None),
    ("turn", "consígueme el correo de los 10 mejores", "revelar_contactos"),
    ("accept", "revelar_contactos", None),
    ("turn", "ármame una secuencia de tres correos", "revisar_secuencia"),
    ("authorize", "revisar_secuencia", None),
]


class Server:
    def __init__(self, binary, env, log):
        self.binary, self.env, self.log, self.proc = binary, env, log, None
        self.base = "http://" + env["LUNA_BIND"]

    def start(self):
        self.proc = subprocess.Popen([self.binary], env=self.env, stdout=self.log, stderr=self.log)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"the server exited with {self.proc.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(self.base + "/readyz", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        sys.exit("the server never became ready")

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class Client:
    def __init__(self, server):
        self.server, self.cookie = server, None

    def call(self, endpoint, form, timeout=30):
        data = urllib.parse.urlencode(form, doseq=False).encode()
        req = urllib.request.Request(self.server.base + "/api/" + endpoint, data=data, method="POST")
        req.add_header("Content-Type", "application/x-www-form-urlencoded")
        if self.cookie:
            req.add_header("Cookie", self.cookie)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                cookie = r.headers.get("Set-Cookie")
                if cookie:
                    self.cookie = cookie.split(";")[0]
                body = r.read().decode()
                return r.status, (json.loads(body) if body else None)
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def login(self):
        status, body = self.call("login", {"email": "ventas@demo.luna.mx", "password": "luna-demo-2026"})
        if status != 200:
            sys.exit(f"login failed: {status} {body}")

    def view(self, session):
        status, snap = self.call("session_snapshot", {"session_id": session})
        if status != 200:
            raise RuntimeError(f"snapshot {status}: {snap}")
        return snap["view"]

    def wait_idle(self, session, timeout=90):
        deadline = time.time() + timeout
        while time.time() < deadline:
            view = self.view(session)
            if not view.get("active_turn"):
                return view
            time.sleep(0.2)
        raise RuntimeError(f"session {session} still has a running turn after {timeout}s")

    def wait_runs(self, session, timeout=120):
        """Until no research run of the session is running (resumed after a restart)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            view = self.view(session)
            runs = view.get("board", {}).get("runs", [])
            if all(r.get("status") != "running" for r in runs):
                return view
            time.sleep(0.3)
        raise RuntimeError(f"session {session} still has a running research run after {timeout}s")


def pending(view, kind):
    for card in view.get("board", {}).get("pending", []):
        if card.get("kind") == kind:
            return card
    return None


def act(client, session, step, key, decision):
    kind, arg, _ = step
    if kind == "turn":
        return client.call("send_message", {"session_id": session, "text": arg, "idempotency_key": key})
    decision_id, fingerprint = decision
    if kind == "accept":
        return client.call("resolve_decision", {"session_id": session, "decision_id": decision_id,
                                                "resolution": "accept", "fingerprint": fingerprint})
    form = {"session_id": session, "decision_id": decision_id, "fingerprint": fingerprint}
    form.update({f"steps[{i}]": str(i) for i in range(3)})
    return client.call("authorize_sequence_steps", form)


def run(args):
    work = tempfile.mkdtemp(prefix=f"luna-crash-{args.engine}-")
    log = open(os.path.join(work, "server.log"), "ab")
    env = dict(os.environ)
    env.update({
        "LUNA_DATA_DIR": work,
        "LUNA_BIND": f"127.0.0.1:{args.port}",
        "LUNA_SMTP_URL": args.smtp_url,
        "LUNA_TURN_STALE_SECS": "3",
        "LUNA_RESEARCH_LEASE_SECS": "5",
        "RUST_LOG": "warn",
    })
    if args.engine == "postgres":
        env["LUNA_DATABASE_URL"] = args.database_url
    server = Server(args.server, env, log)
    server.start()
    client = Client(server)
    client.login()
    rng = random.Random(args.seed)
    sessions, kills, retries = [], 0, 0
    session, step_i, attempt = None, 0, 0
    for trial in range(args.trials):
        if session is None:
            status, session = client.call("create_session", {})
            if status != 200:
                raise RuntimeError(f"create_session {status}: {session}")
            sessions.append(session)
            step_i, attempt = 0, 0
        step = STEPS[step_i]
        view = client.wait_idle(session)
        decision = None
        if step[0] == "accept" or step[0] == "authorize":
            card = pending(view, step[1])
            if card is None:  # the card went away (it was resolved before the crash)
                step_i += 1
                session = None if step_i == len(STEPS) else session
                continue
            # The click carries the card as the person saw it (its fingerprint).
            decision = (card["id"], card.get("fingerprint", ""))
        key = f"{session}-{step_i}-{attempt}"
        # Fire the step and kill the server while it works (or just after).
        done = []
        def fire():
            try:
                done.append(act(client, session, step, key, decision))
            except OSError as e:  # the server died under the request: expected
                done.append((None, str(e)))

        t = threading.Thread(target=fire)
        t.start()
        # A run lasts tens of milliseconds on the local director: the kill that lands in
        # it comes right after its card is accepted.
        research = step[1] == "investigar"
        time.sleep(rng.uniform(0.0, 0.15 if research else args.max_delay))
        server.kill9()
        kills += 1
        t.join()
        server.start()
        client.login()
        # Retry exactly what the browser would: the same key, the same decision.
        status, body = act(client, session, step, key, decision)
        retries += 1
        if status not in (200, 409):
            raise RuntimeError(f"retry of {step[0]} answered {status}: {body}")
        view = client.wait_idle(session)
        if research:
            client.wait_runs(session)
        if step[0] == "turn" and pending(view, step[2]) is None:
            # The killed turn was closed ("se reinició"): the person sends it again.
            attempt += 1
            continue
        step_i, attempt = step_i + 1, 0
        if step_i == len(STEPS):
            session = None
        print(f"[{args.engine}] trial {trial + 1}/{args.trials}: killed during {step[0]}", flush=True)
    # Let the sender finish what is due, then stop cleanly.
    time.sleep(3)
    server.stop()
    log.close()
    return work, sessions, kills, retries


def audit_sql(args, work):
    queries = {
        "gaps": "select count(*) from work_sessions s where s.last_seq <> (select count(*) from session_events e where e.session_id = s.id) or s.last_seq <> coalesce((select max(seq) from session_events e where e.session_id = s.id), 0)",
        "running_turns": "select count(*) from turns where status = 'running'",
        "ledger_mismatch": "select count(*) from credit_ledgers l where l.used <> coalesce((select sum(r.amount) from receipts r where r.workspace_id = l.workspace_id and r.ledger = l.ledger and r.period = l.period), 0)",
        "events": "select count(*) from session_events",
        "receipts": "select count(*) from receipts",
        "sent": "select count(*) from sequence_sends where status = 'sent'",
        "send_rows": "select id from sequence_sends where status in ('sent', 'unknown', 'sending')",
        "resolved_payloads": "select payload from session_events where kind = 'decision.resolved'",
        "runs": "select count(*) from research_runs where status <> 'propuesta'",
        "runs_running": "select count(*) from research_runs where status = 'running'",
        "runs_failed": "select count(*) from research_runs where status = 'failed'",
        "runs_resumed": "select count(*) from research_runs where resumes > 0",
        "run_checkpoints": "select id || ' ' || status || ' ' || next_phase || ' ' || checkpoints from research_runs where status <> 'propuesta'",
        "progress_payloads": "select payload from session_events where kind = 'run.progress' order by session_id, seq",
    }
    lists = ("send_rows", "resolved_payloads", "run_checkpoints", "progress_payloads")
    out = {}
    if args.engine == "sqlite":
        db = sqlite3.connect(os.path.join(work, "luna.db"))
        for k, q in queries.items():
            rows = db.execute(q).fetchall()
            out[k] = [r[0] for r in rows] if k in lists else rows[0][0]
        db.close()
    else:
        for k, q in queries.items():
            res = subprocess.run(["psql", args.database_url, "-Atqc", q], capture_output=True, text=True, check=True)
            lines = [l for l in res.stdout.splitlines() if l]
            out[k] = lines if k in lists else int(lines[0])
    return out


def audit_runs(a):
    """A run never goes backwards, and its checkpoints are the phases it finished."""
    failures, done = [], {}
    for payload in a["progress_payloads"]:
        p = json.loads(payload)
        n = sum(1 for ph in p.get("phases", []) if ph.get("status") == "done")
        if n < done.get(p["run_id"], 0):
            failures.append(f"run {p['run_id']} went back from {done[p['run_id']]} to {n} finished phases")
        done[p["run_id"]] = max(n, done.get(p["run_id"], 0))
    for line in a["run_checkpoints"]:
        run_id, status, next_phase, checkpoints = line.split(" ", 3)
        if len(json.loads(checkpoints)) != int(next_phase):
            failures.append(f"run {run_id} ({status}) has {len(json.loads(checkpoints))} checkpoints for {next_phase} phases")
        if status == "finished" and done.get(run_id, 0) != int(next_phase):
            failures.append(f"run {run_id} finished {next_phase} phases but its log shows {done.get(run_id, 0)}")
    return failures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--server", default="target/debug/luna-server")
    p.add_argument("--engine", choices=["sqlite", "postgres"], default="sqlite")
    p.add_argument("--database-url", default="")
    p.add_argument("--smtp-url", required=True)
    p.add_argument("--maildir", required=True)
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--max-delay", type=float, default=1.5)
    p.add_argument("--port", type=int, default=3290)
    p.add_argument("--seed", type=int, default=12)
    args = p.parse_args()
    started = time.time()
    work, sessions, kills, retries = run(args)
    a = audit_sql(args, work)
    ids = [json.loads(x)["decision_id"] for x in a["resolved_payloads"]]
    doubled = len(ids) - len(set(ids))
    message_ids = []
    for msg in mailbox.Maildir(args.maildir, create=False):
        mid = (msg.get("Message-ID") or "").strip()
        message_ids.append(mid)
    dup_mail = len(message_ids) - len(set(message_ids))
    known = {f"<{s}@luna.local>" for s in a["send_rows"]}
    unknown_mail = [m for m in message_ids if m not in known]
    failures = []
    if a["gaps"]:
        failures.append(f"{a['gaps']} sessions with a gap or a lost event")
    if doubled:
        failures.append(f"{doubled} decisions resolved twice")
    if a["ledger_mismatch"]:
        failures.append(f"{a['ledger_mismatch']} ledgers whose used credits differ from their receipts")
    if dup_mail:
        failures.append(f"{dup_mail} messages delivered twice")
    if unknown_mail:
        failures.append(f"{len(unknown_mail)} messages without a send row")
    if a["running_turns"]:
        failures.append(f"{a['running_turns']} turns left running")
    if a["runs_running"]:
        failures.append(f"{a['runs_running']} research runs left running")
    failures += audit_runs(a)
    report = {
        "engine": args.engine,
        "trials": args.trials,
        "kills": kills,
        "sessions": len(sessions),
        "events": a["events"],
        "decisions_resolved": len(ids),
        "receipts": a["receipts"],
        "messages_received": len(message_ids),
        "sends_marked_sent": a["sent"],
        "research_runs": a["runs"],
        "runs_resumed_after_a_kill": a["runs_resumed"],
        "runs_failed": a["runs_failed"],
        "seconds": round(time.time() - started, 1),
        "failures": failures,
    }
    print(json.dumps(report, ensure_ascii=False))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

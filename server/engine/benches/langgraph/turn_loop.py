#!/usr/bin/env python3
"""The same 8-step scripted turn as `server/engine/benches/turn.rs`, in LangGraph.

A scripted "model" node returns the seven tool calls of the Rust bench, one per step,
then a final answer; a `ToolNode` runs them as plain SQLite reads on tables shaped
like Luna's demo market data (2000 suppliers, 15000 awards, same indexes); the graph
is checkpointed by `SqliteSaver` on a file (WAL), with `durability="sync"` by default
so every step is committed before the next one runs, like Luna's session events.
Each turn is a new thread, like each bench turn is a new session.

Install (not part of CI):

    python3 -m venv /tmp/lg && /tmp/lg/bin/pip install langgraph langgraph-checkpoint-sqlite

Run: `/tmp/lg/bin/python turn_loop.py --turns 100` prints one JSON line with p50/p95
in ms. `server/engine/benches/turn_vs_langgraph.sh` alternates it with the Rust bench.
"""

import argparse
import json
import os
import random
import sqlite3
import tempfile
import time

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

STATES = {"Jalisco": 14, "Guanajuato": 11, "Nuevo León": 19, "Puebla": 21}
GIROS = {"empaque": "322", "construccion": "236", "limpieza": "561", "medico": "339"}

DATA: sqlite3.Connection


def seed(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.executescript(
        """
        pragma journal_mode = wal;
        create table mk_suppliers (id text primary key, name text not null, state_code integer,
            scian text, size_band text, awards_count integer not null default 0,
            awards_total real not null default 0, last_award text);
        create index mk_suppliers_state on mk_suppliers(state_code, scian, awards_total desc);
        create index mk_suppliers_scian on mk_suppliers(scian, awards_total desc);
        create table mk_awards (id integer primary key, supplier_id text not null,
            supplier_name text not null, buyer text not null, title text not null, amount real,
            date text, year integer, state_code integer, scian text);
        create index mk_awards_supplier on mk_awards(supplier_id, date desc);
        create index mk_awards_state on mk_awards(state_code, date desc);
        create table usage_counters (workspace_id text, counter text, used integer);
        """
    )
    rng = random.Random(7)
    codes = list(range(1, 33))
    scians = list(GIROS.values()) + ["111", "221", "431", "541"]
    suppliers = []
    for i in range(2000):
        suppliers.append(
            (f"RFC{i:06d}", f"Proveedor {i}", rng.choice(codes), rng.choice(scians),
             rng.choice(["micro", "pequena", "mediana", "grande"]))
        )
    conn.executemany(
        "insert into mk_suppliers (id, name, state_code, scian, size_band) values (?,?,?,?,?)",
        suppliers,
    )
    awards = []
    for i in range(15000):
        s = rng.choice(suppliers)
        year = rng.choice([2022, 2023, 2024, 2025])
        awards.append(
            (i, s[0], s[1], rng.choice(["IMSS", "CFE", "SEP"]), f"Contrato {i}",
             rng.uniform(1e4, 5e6), f"{year}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}", year,
             s[2], s[3])
        )
    conn.executemany("insert into mk_awards values (?,?,?,?,?,?,?,?,?,?)", awards)
    conn.execute(
        """update mk_suppliers set
             awards_count = (select count(*) from mk_awards a where a.supplier_id = mk_suppliers.id),
             awards_total = coalesce((select sum(amount) from mk_awards a
                                      where a.supplier_id = mk_suppliers.id), 0),
             last_award = (select max(date) from mk_awards a where a.supplier_id = mk_suppliers.id)"""
    )
    conn.execute("insert into usage_counters values ('ws', 'reads_hour', 0)")
    conn.commit()
    return conn


def where(kind: str, filters: dict) -> tuple[str, list]:
    clauses, args = [], []
    if "state" in filters:
        clauses.append("state_code = ?")
        args.append(STATES.get(filters["state"], 0))
    if "giro" in filters:
        clauses.append("scian = ?")
        args.append(GIROS.get(filters["giro"], ""))
    if filters.get("has_awards") and kind == "suppliers":
        clauses.append("awards_count > 0")
    return (" where " + " and ".join(clauses)) if clauses else "", args


@tool
def market_count(kind: str, filters: dict) -> str:
    """Counts suppliers or awards matching the filters."""
    table = "mk_awards" if kind == "awards" else "mk_suppliers"
    w, args = where(kind, filters)
    (n,) = DATA.execute(f"select count(*) from {table}{w}", args).fetchone()
    return json.dumps({"results": [{"count": n}], "shown": 1})


@tool
def market_search(kind: str, filters: dict, limit: int = 20) -> str:
    """Lists suppliers matching the filters, largest first."""
    w, args = where(kind, filters)
    rows = DATA.execute(
        "select id, name, state_code, scian, size_band, awards_count, awards_total, last_award "
        f"from mk_suppliers{w} order by awards_total desc limit ?",
        [*args, limit],
    ).fetchall()
    cols = ["ref", "name", "state_code", "scian", "size_band", "awards_count", "awards_total",
            "last_award"]
    return json.dumps({"results": [dict(zip(cols, r)) for r in rows], "shown": len(rows)})


@tool
def usage() -> str:
    """The workspace's usage counters."""
    rows = DATA.execute("select counter, used from usage_counters where workspace_id = 'ws'")
    return json.dumps({"results": [{"counter": c, "used": u} for c, u in rows]})


JALISCO = {"giro": "empaque", "state": "Jalisco", "has_awards": True}
SCRIPT = [
    ("market_count", {"kind": "suppliers", "filters": JALISCO}),
    ("market_search", {"kind": "suppliers", "filters": JALISCO, "limit": 50}),
    ("market_search", {"kind": "suppliers", "filters": {"state": "Guanajuato"}, "limit": 50}),
    ("market_search", {"kind": "suppliers", "filters": {"state": "Nuevo León"}, "limit": 50}),
    ("market_count", {"kind": "suppliers", "filters": {"state": "Puebla"}}),
    ("usage", {}),
    ("market_count", {"kind": "awards", "filters": {"state": "Jalisco"}}),
]


def model(state: MessagesState) -> dict:
    """The scripted model: the next call of the script, or the final answer."""
    step = sum(1 for m in state["messages"] if isinstance(m, AIMessage))
    if step < len(SCRIPT):
        name, args = SCRIPT[step]
        call = {"name": name, "args": args, "id": f"c{step + 1}", "type": "tool_call"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}
    first = json.loads(state["messages"][2].content)["results"][0]["count"]
    return {"messages": [AIMessage(content=f"Hay {first} resultados con ese criterio.")]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--durability", default="sync", choices=["sync", "async", "exit"])
    opts = parser.parse_args()

    global DATA
    tmp = tempfile.mkdtemp(prefix="lg_turn_")
    DATA = seed(os.path.join(tmp, "market.db"))
    saver = SqliteSaver(sqlite3.connect(os.path.join(tmp, "checkpoints.db"), check_same_thread=False))
    saver.setup()

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([market_count, market_search, usage]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    graph = builder.compile(checkpointer=saver)

    question = "¿Cuántos fabricantes de empaque hay en Jalisco que le vendieron a gobierno?"
    samples = []
    for i in range(opts.warmup + opts.turns):
        config = {"configurable": {"thread_id": f"turn_{i}"}}
        t = time.perf_counter()
        out = graph.invoke(
            {"messages": [HumanMessage(question)]}, config, durability=opts.durability
        )
        elapsed = (time.perf_counter() - t) * 1000.0
        ai = [m for m in out["messages"] if isinstance(m, AIMessage)]
        assert len(ai) == 8 and not ai[-1].tool_calls, "the turn must use all 8 steps"
        if i >= opts.warmup:
            samples.append(elapsed)
    samples.sort()

    def pct(p: float) -> float:
        return samples[round((len(samples) - 1) * p)]

    print(json.dumps({"engine": "langgraph", "turns": opts.turns, "durability": opts.durability,
                      "p50_ms": round(pct(0.5), 2), "p95_ms": round(pct(0.95), 2)}))


if __name__ == "__main__":
    main()

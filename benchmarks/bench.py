"""``make bench``: how close the kit runs to its limits, each figure a ratio measured side by side.

Every benchmark measures both of its sides in this one run, alternating, over several rounds,
and reports medians: the machine is shared and noisy, a ratio measured in one run is not.
Prints a table and writes ``benchmarks/results/bench.json`` (figures, versions, machine). Not
a timed test: nothing here fails a build. Loopback only; every load loop is bounded in count
and in time; about 5 minutes on 2 cores.

    .venv/bin/python -m benchmarks.bench                     # everything
    .venv/bin/python -m benchmarks.bench --only sessions client
    .venv/bin/python -m benchmarks.bench --quick             # fewer rounds, for a smoke check

Benchmarks (modules ``bench_*.py`` beside this file):

1. ``sessions``   — sessions/s through HTTP against ``kit serve`` ÷ joserfc RSA-OAEP-256 decrypts/s
2. ``client``     — a full journey through ``kit`` ÷ the same calls with bare httpx + joserfc
3. ``notebooks``  — ``kit regress --jobs 2`` ÷ (notebooks × trivial papermill run ÷ 2)
4. ``prism``      — ``GET /cards/{id}`` req/s, simulator ÷ Stoplight Prism mock
5. ``population`` — ``kit.simulate`` journeys/s ÷ (cores ÷ one bare sequential journey's time)
6. ``imports``    — ``import kit`` ÷ ``import httpx, joserfc``
7. ``cluster``    — the same shards on a 2-worker Dask ``LocalCluster`` ÷ on local processes
8. ``memory``     — a 1,000,000-customer run streamed to Parquet, projected ÷ 8 GiB
9. ``connect``    — ``kit.connect("sim")`` beyond ``import kit`` in a fresh interpreter ÷ 0.3 s
10. ``state``     — ``kit serve --state FILE`` ÷ in memory: sessions/s and one client's journey time
11. ``proxy``     — two notebooks by ``kit regress`` through ``kit proxy`` ÷ straight to the server

A ``before`` section (figures from before the performance fixes, and the fixes themselves)
is carried over from the previous record unless ``--before FILE`` names another one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.bench_support import bytecode, machine

HERE = Path(__file__).resolve().parent

RESULTS = HERE / "results" / "bench.json"
#: The issue's numbering (and the table's order).
NUMBERS = {
    "sessions": 1,
    "client": 2,
    "notebooks": 3,
    "prism": 4,
    "population": 5,
    "imports": 6,
    "cluster": 7,
    "memory": 8,
    "connect": 9,
    "state": 10,
    "proxy": 11,
}
#: The order they run in: quick ones first, the notebook suite (minutes) last.
ORDER = (
    "imports",
    "connect",
    "sessions",
    "client",
    "state",
    "prism",
    "population",
    "cluster",
    "memory",
    "proxy",
    "notebooks",
)
#: The performance fixes the profiles justified (issue #7), kept in the record beside the
#: figures from before them. Each says what the profile showed and the isolated effect.
FIXES = [
    {
        "fix": "one shared TLS context for every kit httpx.Client (kit/_transport.py, kit/_client.py)",
        "profile": "py-spy of kit.simulate.run (300 customers, 8 threads): 35 % of all samples in "
        "ssl.create_default_context, via the httpx.Client each kit.connect() builds",
        "isolated": "httpx.Client() 19.3 ms -> 0.11 ms; the same population run took 35 % fewer samples",
    },
    {
        "fix": "pandas imported on first DataFrame use, not by import kit (kit/_history.py, kit/_client.py, "
        "kit/webhooks.py, kit/_resources/sim.py, kit/_resources/webhooks.py)",
        "profile": "python -X importtime -c 'import kit': pandas 0.9 s of 1.37 s (via kit.webhooks and "
        "kit._client); kit serve spent 10 % of its start-up samples importing pandas it never uses",
        "isolated": "benchmark 6 (imports), before and after",
    },
    {
        "fix": "no Starlette URL built per request when no fault is injected (kit/sim/pipeline.py)",
        "profile": "py-spy --gil of the embedded simulator: request.url (urlunsplit) 6.9 % of server "
        "samples, from getattr(route, 'path', request.url.path) evaluating its default every time",
        "isolated": "tens of µs per request",
    },
    {
        "fix": "the 413 Problem built only when raised (kit/sim/pipeline.py read_body)",
        "profile": "kit serve under session load: Problem.__init__ 3.4 % self time, built for every body",
        "isolated": "a few µs per request",
    },
    {
        "fix": "server key ids, the public JWK set and the JWE registries computed once (kit/sim/crypto.py)",
        "profile": "init data and POST /sessions re-computed RFC 7638 thumbprints and re-serialized "
        "the RSA modulus on every request",
        "isolated": "init data JWK set 13.5 µs -> 2.6 µs; a kid 5.5 µs -> 0.03 µs",
    },
    {
        "fix": "REJECTED (twice): decrypting encrypted_* fields ahead in a worker thread "
        "(cryptography releases the GIL for RSA)",
        "profile": "RSA-OAEP decrypt is about 30 % of the server's time per session",
        "isolated": "founding session: 914 sessions/s with it, 1,182 without. Measured again after the "
        "plain-route fix, per thread from /proc: the loop's CPU per session grew 350 -> 440 µs and the "
        "decrypt thread's 268 -> 420 µs (GIL hand-offs around joserfc's Python code); throughput did not "
        "move. Replaced by worker processes (below)",
    },
    {
        "fix": "partner routes served past FastAPI's routing and dependency layers (kit/sim/fastpath.py)",
        "profile": "cProfile of init data in process: 84 µs through FastAPI, 19 µs calling the endpoint; "
        "every partner endpoint takes only the request and str path parameters and returns a Response",
        "isolated": "init data 111 -> 60 µs, POST /sessions 504 -> 442 µs in process",
    },
    {
        "fix": "JWE decryption in worker processes beside kit serve's event loop "
        "(kit/sim/cryptoworker.py, --crypto-workers, default one per spare core)",
        "profile": "py-spy of kit serve under session load: joserfc decrypt_cek 28 % self time, on the loop",
        "isolated": "sessions/s against kit serve, same load generator: about 1,700 -> 2,600-2,900",
    },
    {
        "fix": "device keys imported and thumbprinted once per (x, y) (kit/sim/crypto.py)",
        "profile": "py-spy: ECKey.import_key + thumbprint 9 % of kit serve's samples under session load",
        "isolated": "about 50 µs per session",
    },
    {
        "fix": "FastAPI's native OpenTelemetry instrumentation off in the simulator app (kit/sim/app.py)",
        "profile": "three os.environ lookups per request (FastAPI asks for the global OTel providers)",
        "isolated": "a few µs per request",
    },
    {
        "fix": "kit serve and the embedded server run on uvicorn's loop choice, uvloop (kit/cli.py, "
        "kit/sim/server.py); asyncio.run had silently meant the pure-Python loop",
        "profile": "py-spy: asyncio selector_events write/read 8 % of kit serve's samples",
        "isolated": "within noise for sessions (RSA-bound); a cheaper transport for every request",
    },
    {
        "fix": "benchmark 1's load generator overlaps batches: one batch posts its sessions while the next "
        "fetches init data (client encryption still off the clock)",
        "profile": "with strictly alternating phases the decrypt workers idled through every init-data phase",
        "isolated": "methodology, not a server change: a server with spare cores sees mixed traffic "
        "in the field",
    },
    # -- issue #14: populations at the machine's limit, the notebook suite near its floor --------
    {
        "fix": "populations in shards on worker processes, each shard with its own simulator in its "
        "process (kit/lab/shard.py, kit/lab/engine.py); Dask tasks with cluster=",
        "profile": "py-spy of kit.simulate.run (8 threads + the embedded simulator in one interpreter): "
        "client and server share one GIL — the run used about one core of two (0.51 of the machine in "
        "the issue's make bench); uvloop/httptools C code and httpx/httpcore dominated the samples, the "
        "RSA decrypts 7 %",
        "isolated": "600 customers on the shared 2-core machine, alternating: 8 threads in one process "
        "38-48 journeys/s, 4 shards on 2 worker processes 80-132 journeys/s",
    },
    {
        "fix": "worker processes forked from a fork server that imported the kit and built a simulator "
        "app once (kit/lab/_warm.py), and kept for the next run",
        "profile": "cProfile of a fresh worker's first shard (30 customers): 4.8 s, of which imports "
        "1.2 s, create_app 0.24 s and openapi-core 3.0 s (below); a kept worker's next shard 0.65 s",
        "isolated": "first shard of a run 4.8 s -> 1.7 s (loaded machine); later runs start at once",
    },
    {
        "fix": "the contract check (api.drift) off by default for population clients "
        "(DEFAULT_CLIENT_OPTIONS drift='off'; client_options turns it on)",
        "profile": "cProfile: the first checked answer in a process imports openapi-core -> jsonschema -> "
        "rfc3987_syntax, which compiles 39 lark grammars: 3.0 s per worker process",
        "isolated": "3.0 s per fresh worker; warm, the check costs under 1 ms a journey (within noise)",
    },
    {
        "fix": "population retries back off 1-4 ms (was 5-50 ms): the simulator's faults do not depend "
        "on time, and a shard plays its customers in order, so it waits out every retry",
        "profile": "the degraded run's shards were mostly asleep: 413 retries at ~25 ms each over 2 workers",
        "isolated": "120 customers, degraded: 5.1 s -> 2.4 s",
    },
    {
        "fix": "kit regress starts the notebooks that took longest in the last run of the same output "
        "folder first (kit/regress/matrix.py longest_first)",
        "profile": "kit regress --jobs 2: notebook 11 (15.9 s) started last and ran alone while the other "
        "worker idled; the suite used about half of the two cores (user+sys 36 s in 35.8 s wall)",
        "isolated": "with notebook 11 at ~16 s: makespan ~35.8 s -> ~27 s on paper; with notebook 11 cut "
        "to a few seconds (a smaller default population) the ordering matters little",
    },
    {
        "fix": "REJECTED: threads inside a shard (concurrency > 1) as the default",
        "profile": "a shard's client threads and its simulator share one GIL, as before sharding",
        "isolated": "one shard in one process, 150 customers, alternating on the loaded machine: 1 thread "
        "27-64, 4 threads 39-67 journeys/s (a little latency hidden, within the noise); with one worker "
        "per core the cores are busy either way, and with threads injected faults arrive in a varying "
        "order, so a faulty run stops being repeatable. Kept as an option (concurrency=)",
    },
    # -- issue #37: connect to the end of the first session; sessions near the decrypt limit ---
    {
        "fix": "the simulator's seeded RSA keys kept per seed in a per-user cache, 0600 "
        "(kit/sim/keycache.py), read back without OpenSSL's key check; pycryptodome imported only "
        "on a miss",
        "profile": "connect parts (CPU, fresh interpreter): server keys 223 ms of 1,406 ms to the first "
        "session: pycryptodome's seeded prime search, then ~50 ms of OpenSSL's RSA check in "
        "RSAKey.import_key",
        "isolated": "keys_for(7) in a fresh process 225 -> 1.2 ms CPU "
        "(benchmarks/results/connect_profile.json)",
    },
    {
        "fix": "the contract check judges a body surely valid against a structural schema without a "
        "validator (kit/_shapes.py conforms); openapi-core and jsonschema-path only for a body it "
        "cannot settle",
        "profile": "the first answer's check imported openapi-core (requests, yaml, jsonschema, openapi-"
        "schema-validator): ~270 ms of the first session's 380 ms CPU",
        "isolated": "first session after connect 380 -> 17 ms CPU; connect + first session (all of "
        "issue 37's fixes) 1,406 -> 667 ms CPU",
    },
    {
        "fix": "httpx's command-line client (click, rich, pygments) kept out of import (kit/_client.py); "
        "the embedded server with ws='none' (kit/sim/server.py)",
        "profile": "importtime: httpx._main 123 ms under load; uvicorn's websockets protocol 19 ms",
        "isolated": "the client's imports 238 -> 175 ms CPU (89 fewer modules); import httpx alone "
        "134 -> 82 ms",
    },
    {
        "fix": "the PII value check searches 'separator, two digits, separator' before the national-id "
        "pattern (kit/sim/pii.py; the same verdicts, a Hypothesis test)",
        "profile": "POST /sessions in process: the pattern's look-behind tried at every position of the "
        "~700-character JWE, ~45 us a session",
        "isolated": "POST /sessions beside its decrypt, in process: ~280 -> ~250 us CPU (alternating, 4 "
        "rounds each)",
    },
    {
        "fix": "REJECTED: an answer's head and body in one write (a uvicorn protocol holding the head for"
        " the body)",
        "profile": "py-spy of kit serve under session load: transport.write 25 % (head) + 8 % (body) of "
        "the loop's samples — mostly the client woken and preempting the loop on a loaded "
        "machine",
        "isolated": "server CPU per init-data request from /proc, alternating 3 x 3 rounds: 128 vs 128 "
        "us: no change",
    },
    # -- issue #37: the notebook suite within 3x its floor (benchmarks/results/notebooks_profile.json)
    {
        "fix": "kit regress forks every kernel from a fork server that imported ipykernel, IPython, pandas, "
        "the kit, its companion and the simulator's app once per run (kit/regress/kernels.py; the "
        "kernelspec's command kit/regress/_kernel_launcher.py asks for it, else starts an ordinary kernel)",
        "profile": "each notebook alone, CPU of its worker and kernel: 2.7-3.9 s a notebook, of which "
        "imports about 1.0 s (ipykernel 0.26, pandas 0.55, kit + companion 0.27, the simulator's "
        "FastAPI app 0.37) and kernel start-up, on the 2-core machine's critical path 13 times",
        "isolated": "each notebook alone (load 17-25), medians of 11 notebooks: CPU 3.39 -> 1.90 s, wall "
        "18.0 -> 9.8 s; kit regress --jobs 2, old tree vs this, alternating (load ~22): CPU 49.0 -> 30.9 s, "
        "wall 206 -> 135 s. Benchmark 3 at load 1.4: 5.81 (27.6 s vs 4.75 s, 13 notebooks; was 5.78 with "
        "12): notebook 11 (18 s: its population's two worker processes) is now the critical path alone",
    },
    {
        "fix": "a forked kernel exits without the interpreter's teardown (atexit handlers, then os._exit)",
        "profile": "papermill's last phase (after the last cell: the kernel's shutdown) 0.7-2.6 s a notebook",
        "isolated": "papermill's end phase, median per notebook at load 17-25: 3.45 -> 1.05 s",
    },
    {
        "fix": "REJECTED: killing the kernel after its last cell (nbclient shutdown_kernel='immediate')",
        "profile": "as above: the orderly shutdown was 0.7-2.6 s a notebook",
        "isolated": "end phase 0.7-2.6 s -> 0.12-0.23 s, but a cell over the time-out then leaves no "
        "error output, and the report can no longer name it (tests/notebooks/test_regress_outcomes.py)",
    },
    {
        "fix": "benchmark 5 pairs each round's sides: half its bare journeys just before its population run, "
        "half just after; the figure is the median of the rounds' ratios (benchmarks/bench_population.py)",
        "profile": "the stored 0.845: 20 bare journeys a round (0.4 s) against a 15 s run; one round's bare "
        "journeys took 48-87 ms in a load spike (others 20 ms), and the pooled median mixed rounds",
        "isolated": "methodology: three fresh runs at load 2-7 gave 1.00, 1.08, 0.96",
    },
    {
        "fix": "the embedded simulator serves its plain partner routes before FastAPI is imported "
        "(kit/sim/lazyapp.py; routes declared on kit.sim.fastpath.Routes); the FastAPI app (OpenAPI, "
        "docs, control plane, 404/405) built once, under a lock, on the first request that needs it",
        "profile": "importtime of connect: FastAPI ~220 ms (fastapi.openapi.models, routing, params), "
        "the route modules' APIRoutes ~100 ms, built twice by include_router",
        "isolated": "connect + first session 512 -> 383 ms CPU (5 rounds, alternating); the simulator's "
        "imports 337 -> 144 ms",
    },
    {
        "fix": "kit.sim.models' pydantic models built on first use (defer_build)",
        "profile": "importtime: kit.sim.models 25 ms self",
        "isolated": "connect + first session 436 -> 417 ms CPU (7 rounds)",
    },
    {
        "fix": "uvicorn imported without its command-line module (kit/sim/server.py)",
        "profile": "importtime: uvicorn.main 39 ms (click, gettext, reload supervisors)",
        "isolated": "import kit.sim.server 184 -> 154 ms CPU (9 rounds); connect + session 396 -> 374",
    },
    {
        "fix": "REJECTED: kit.sim.previous' models deferred as well",
        "profile": "importtime: kit.sim.previous 15 ms",
        "isolated": "connect -10 ms, first session +13 ms (pydantic's plugin lookup moves there): no gain",
    },
    {
        "fix": "the benchmarks write the package's .pyc files first (bench_support.bytecode; "
        "make install runs compileall)",
        "profile": "cProfile of a cold connect: 32 of kit's modules compiled from source every round "
        "(builtins.compile, 28 ms): PYTHONDONTWRITEBYTECODE, set on these machines, keeps an editable "
        "install from ever writing them",
        "isolated": "connect + first session, CPU min of 9: 352 -> 308 ms",
    },
    {
        "fix": "a plain-http client (the embedded simulator) builds a TLS context that trusts nothing "
        "instead of loading the CA bundle (kit/_tls.py tls_context_for)",
        "profile": "cProfile: _ssl load_verify_locations 24 ms inside httpx.Client() of the first connect",
        "isolated": "httpx.create_ssl_context() 24.1 ms -> ssl.SSLContext(PROTOCOL_TLS_CLIENT) 1.4 ms; "
        "app + server + client part 72 -> 41 ms (with the two below)",
    },
    {
        "fix": "the embedded simulator runs on the standard library's loop (uvloop only for population "
        "shards) and says when it listens (an Event, not a 10 ms poll) (kit/sim/server.py)",
        "profile": "importtime: uvloop 21 ms in the server thread before it listens; the caller polled "
        "server.started every 10 ms",
        "isolated": "connect + first session 410 -> 369 ms wall (with the TLS context above)",
    },
    {
        "fix": "the register and the spec facts read from a per-user JSON copy named by the TOML's digest "
        "(kit/_cache.py parsed_toml)",
        "profile": "tomllib 7.0 ms (assumptions.toml) + 2.7 ms (spec.toml) in every process that connects",
        "isolated": "first read of the register and statements 13.3 -> 2.7 ms",
    },
    {
        "fix": "the embedded app matches kit.sim.routes.INDEX and imports a partner route module on the "
        "first request that chooses one of its routes (kit/sim/fastpath.py IndexedRoute)",
        "profile": "importtime (GC off, 5 runs): the seven route modules the first session never reaches "
        "and the 1.1.0 models ~12 ms of their own; most of kit.sim.previous' 7.7 ms is pydantic's "
        "plugin lookup, which then runs at the first session's first validator instead",
        "isolated": "connect + first session, CPU median of 25 alternating: 303.0 -> 300.2 ms",
    },
    {
        "fix": "tomllib imported only to parse a TOML without a kept JSON copy (kit/_cache.py, "
        "kit/_choices.py, kit/_fixtures.py); the wire log and its redaction only by a recording client "
        "(kit/_requestor.py); the contract keeps the document it parses instead of a JSON round-trip copy",
        "profile": "importtime (GC off): tomllib 1.4 ms, kit._wire + kit._redaction 2.3 ms; "
        "json.loads(json.dumps(openapi.json)) 1.1 ms at the first answer checked",
        "isolated": "connect + first session, CPU median of 21 alternating, with the row above: "
        "304.1 -> 293.4 ms; the kit's own import time (GC off) 70 -> 54 ms",
    },
    {
        "fix": "a client's resources (api.accounts, api.cards, api.webhooks…) built on first use, their "
        "modules imported then (kit/_resources/_base.py Lazy)",
        "profile": "importtime (GC off): kit._resources' nine modules, kit.webhooks and http.server "
        "~3.5 ms in every connect; a first session uses none of them",
        "isolated": "not separable from the noise of a shared machine in wall time (est. ~3 ms from "
        "importtime); benchmark 2 builds a client per journey and keeps its figure",
    },
    {
        "fix": "the resources' results (Account, Card, Transfer…: 9 of kit.models' 14 frozen dataclasses) "
        "defined in kit/_results.py when one is first used; kit.models names them (PEP 562), and they "
        "are its own (__module__, pickling)",
        "profile": "dataclasses' class processing in kit.models: 8.9 ms for 14 classes (0.5-0.8 ms each, "
        "frozen: five generated methods compiled apiece), 5.8 ms of them for the 9 results",
        "isolated": "a first session builds 5 of kit.models' dataclasses, not 14 (about 5 ms of CPU "
        "by that profile; the wall figure moves more with the hour than by this)",
    },
    {
        "fix": "REJECTED: the collector's thresholds raised for connect and restored after it",
        "profile": "gc.callbacks: 117 young, 10 middle and 1 full collection (17 ms) during a cold "
        "connect + first session, 33 ms in all",
        "isolated": "connect + session 292 -> 272 ms CPU, but the collections of the next 20 sessions "
        "grew as much (GC 91-107 ms in both cases, connect and those sessions together): moved, not saved",
    },
    {
        "fix": "the request bodies of the areas past a first session moved from kit.sim.models to "
        "kit.sim.bodies, imported by their routes on first use (18 of 41 pydantic classes)",
        "profile": "pydantic class creation in kit.sim.models 6.4 ms (41 classes, schemas deferred); "
        "deleting 20 of them from a copy: connect + first session CPU median of 21, 293.2 -> 287.9 ms",
        "isolated": "the kit's pydantic classes built by connect + first session: 41 in 7.3 ms -> 23 in "
        "4.4 ms (GC off; the wall figure was too noisy to split further while other work ran)",
    },
    # -- issue #37 item 3: sessions at 0.85 of the decrypt floor (benchmarks/results/sessions_profile.json)
    {
        "fix": "kit serve's crypto worker pipes read by one protocol (an answer's frame resolves its future "
        "where it arrives); the worker reads whatever frames are there in one call (kit/sim/cryptoworker.py)",
        "profile": "schedstat + cProfile of kit serve under benchmark 1: the loop's CPU per session ~375-430 "
        "us beside a ~365-400 us worker; asyncio streams woke a reader task, two readexactly per answer",
        "isolated": "loop 335 -> 308 us a session (8 alternating rounds), 2,259 -> 2,461 sessions/s",
    },
    {
        "fix": "plain routes without path parameters found by (method, path) in a table built once, the "
        "same choice as matching in order (kit/sim/fastpath.py); init data's key set encoded once and "
        "spliced into its body (kit/sim/crypto.py, routes/sessions.py); no QueryParams for an empty query "
        "and no fault draw without faults (kit/sim/pipeline.py); format_time cached (kit/sim/clock.py)",
        "profile": "cProfile in process: FastAPI's APIRoute.matches asked of 3-6 routes a request; init data "
        "copied and re-encoded the RSA modulus; a trivial plain route cost 47 us of stack",
        "isolated": "in process: init data 59 -> 39 us, GET /webhooks/jwks 47 -> 34 us, POST /sessions "
        "(decrypt aside) 120 -> 107 us; with the pipes above, kit serve's loop 375 -> 312 us a session",
    },
    {
        "fix": "ServiceHeaders and svc-session-expires-at set on the raw header list, as MutableHeaders "
        "would (kit/sim/middleware.py, kit/sim/pipeline.py)",
        "profile": "a MutableHeaders (and its scans) built for every answer, twice on POST /sessions",
        "isolated": "in process POST /sessions 107 -> 100-106 us; kit serve's loop 312 -> 306 us a session",
    },
    {
        "fix": "the common RSA-OAEP-256 + A256GCM JWE (header alg, enc, kid) decrypted with cryptography's "
        "primitives as joserfc does; anything else and every refusal is joserfc's (kit/sim/crypto.py; "
        "tests/sim/test_sim_jwe_short_path.py: the same verdicts, token by token)",
        "profile": "cProfile of joserfc.jwe.decrypt_compact: raw RSA-OAEP 305-310 us of ~355 us, the rest "
        "its header registry, key-op checks (ABC isinstance), segment objects",
        "isolated": "SimKeys.decrypt 356 -> 335 us (tight loop); kit serve's worker 366 -> 338 us a "
        "session, 2,437 -> 2,687 sessions/s (6 alternating rounds)",
    },
    {
        "fix": "benchmark 1's load generator: a protocol per connection instead of asyncio streams "
        "(benchmarks/bench_sessions.py LeanConnection; fair: it shares the cores with the server under "
        "test; the same two requests per session, fresh devices, the same floor)",
        "profile": "the generator's CPU while timed 72-94 us a session, on the same two cores",
        "isolated": "53-66 us a session. Benchmark 1 at load ~2: 0.713 (2,116/s) before all of issue 37 "
        "item 3's fixes, 0.914 and 0.907 (2,695 and 2,689/s) after, minutes apart",
    },
    {
        "fix": "REJECTED: two crypto workers on two cores (kit serve's default stays one per spare core)",
        "profile": "the loop plus the load generator use one core, the worker the other",
        "isolated": "same tree, alternating: 1 worker 2,545 sessions/s (worker 365 us a session), 2 workers "
        "2,198 (397 us): more wake-ups, no idle core to use",
    },
    {
        "fix": "REJECTED: gc.freeze() and higher GC thresholds in kit serve",
        "profile": "young collections ~0.1 ms every ~9 sessions",
        "isolated": "loop 326-334 vs 340 us a session, paired rounds within the noise",
    },
    {
        "fix": "issue 37 item 2 (notebooks): a population worker that ends is reaped at once "
        "(kit/lab/populations/pool.py: its stderr reader waits for it)",
        "profile": "notebook 11's end 2.63 s of 7-10 s (benchmarks/results/notebooks_profile.json): at "
        "shutdown ipykernel signals the children of its process group and waits while any is "
        "left; the ended workers stayed zombies, so the kernel waited out jupyter_client's "
        "2.5 s, then was killed",
        "isolated": "notebook 11's end 2.63 -> 0.33-0.48 s (3 runs each, kit regress's worker function)",
    },
    {
        "fix": "a population worker builds its simulator once, as it starts (shard.warm_simulator in"
        " _warm, kept idle for the first shard), not a FastAPI app to warm imports and then a"
        " simulator",
        "profile": "a worker's start: imports 0.8 s, create_app 0.15 s, then its first shard started a "
        "simulator whose control plane built a second FastAPI app",
        "isolated": "fresh worker to the end of its first 30-customer shard 1.76 -> 1.71 s CPU (3 runs, "
        "alternating): small; what counts is that the build happens before the first shard "
        "arrives",
    },
    {
        "fix": "kit regress: a kernel's population workers forked by the run's kernel fork server "
        "(KIT_REGRESS_PYTHON_M; the launcher runs python -m MODULE forked, or here without a "
        "server)",
        "profile": "each of notebook 11's two workers imported pandas, the client, the lab and the "
        "simulator's app again: ~0.9 s of CPU each, the fork server had them all imported",
        "isolated": "a 4-customer population in a kit regress kernel, workers started: 0.52 s (~1.5 s "
        "with spawned workers); notebook 11 alone 10.4 -> 7.8 s with the reaping fix (load "
        "2-4)",
    },
    {
        "fix": "kit regress imports papermill without jsonschema's eager iri checker "
        "(worker.import_papermill: rfc3987_syntax hidden while papermill imports, importable "
        "after; nbformat's schemas use no iri)",
        "profile": "python -X importtime -c 'import papermill': rfc3987_syntax.syntax_helpers 0.85 s of "
        "1.28 s (35 Lark parsers built at import: python-jsonschema/jsonschema#1428); the "
        "first kernel waited for it",
        "isolated": "import papermill 1.23 -> 0.53 s; kit regress's first notebook starts 1.6 -> 0.6 s "
        "after launch",
    },
    {
        "fix": "in a regression run a Plot shows its text line alone under a kernel's inline backend"
        " (kit/lab/populations/plots.py: Plot._ipython_display_ in regression runs)",
        "profile": "cProfile of notebook 11's plots cell in kit regress: 1.05 s in IPython's "
        "pylabtools.print_figure: the inline backend renders every Figure to PNG by type "
        "before _repr_png_ (which declines) is asked; the PNGs (wall-clock latencies) went "
        "into the executed notebook",
        "isolated": "notebook 11's plots cell 2.09 -> 0.93 s under cProfile; outputs: text lines only in "
        "kit regress, as documented (nbval's kernels, without KIT_REGRESS, still store the "
        "PNGs)",
    },
    {
        "fix": "kit regress's kernel ends seen sooner: objects frozen (gc.freeze) before the exit "
        "handlers, the kernel manager polls the kernel's end every 10 ms (worker._manager)",
        "profile": "cProfile of a forked kernel's exit handlers: 0.25 s, of which IPython's reset "
        "gc.collect 70 ms and the embedded simulator's stop 0.18 s (uvicorn's 0.1 s tick); "
        "jupyter_client looks every 100 ms",
        "isolated": "notebook 06's end 0.325 -> 0.16-0.25 s (3 runs each)",
    },
    {
        "fix": "kit regress's kernel client drains IOPub after 20 ms of quiet once the kernel "
        "answered, not jupyter_client's fixed 200 ms (worker._manager's client: "
        "wait_for_ready)",
        "profile": "timestamps of a forked kernel's start: fork +0.03 s, IPKernelApp initialized +0.13 "
        "s, first cell +0.42 s: wait_for_ready's final IOPub flush waits 0.2 s of silence at "
        "every start",
        "isolated": "notebook 06's kernel start 0.37-0.41 -> 0.18-0.23 s; 06 alone 1.23 -> 0.95 s",
    },
    {
        "fix": "the webhook receiver's server looks every 20 ms whether it is closing (kit/webhooks.py)",
        "profile": "Receiver.close: socketserver's shutdown waits for serve_forever's 0.5 s poll: "
        "0.2-0.4 s per closed client with a receiver (08, 09, 12)",
        "isolated": "Receiver.close 0.2-0.4 s -> < 1 ms; notebook 12 alone 1.36-1.59 -> 1.18-1.24 s",
    },
    {
        "fix": "kit regress's papermill engine writes the executed notebook at most every 5 s while "
        "it runs, in full at its end (worker._engine)",
        "profile": "a notebook's gaps between cells (benchmarks/results/notebooks_profile.json: 1.2 s "
        "over the suite) and its worker's CPU: papermill wrote the whole notebook at every "
        "cell's start and end (nbformat.writes: 3 ms for 09)",
        "isolated": "notebook 09 alone 1.55 -> 1.2 s, its worker's CPU 0.39 -> 0.11 s, gaps 0.19 -> 0.006"
        " s (3 runs each, alternating); suite CPU 22.1 -> 20.5 s",
    },
    {
        "fix": "kit regress's command imports papermill after the kernel fork server has started "
        "(jsonschema's iri checker hidden for the command's run: worker.without_iri_checks)",
        "profile": "timestamps of a run: the first cell 1.55 s after launch, the kernels waiting for the"
        " fork server's imports (0.8 s CPU), which began after the command had imported "
        "papermill",
        "isolated": "the first cell 1.55 -> 1.35 s after launch (2 runs each)",
    },
    {
        "fix": "issue 37 item 2, all of the above together (benchmark 3)",
        "profile": "kit regress --jobs 2 over the 14 notebooks, this branch's base and this branch "
        "alternating (2 rounds), CPU of every process of the run (orphans reaped by a subreaper)",
        "isolated": "wall 18.4-18.7 -> 12.9-13.4 s, CPU 26.2 -> 20.5 s (load 1.5-2.3); benchmark 3 "
        "(2 rounds, load ~2): base 19.34 s / 4.61 s floor = 4.19; branch, final: 12.73 s / 4.23 s = "
        "3.01 and 12.76 s / 4.11 s = 3.10 (a trivial papermill notebook: 0.59 s at load 1-2, 0.78 s "
        "at the load of the last make bench)",
    },
    {
        "fix": "benchmark 10 (kit serve --state): a write that moved nothing writes no row; a request's "
        "journal unit a plain context manager; a device key's JWK worked out once per key object; "
        "the fold's records pickled by one pickler; the record codec in kit.sim.statecodec (format "
        "3: versions 1 and 2 read and carried on in one transaction)",
        "profile": "knock-outs of StateFile.save's parts (benchmarks/results/state_floor.json): "
        "tracking and group commit 1-7 %, pickling a row 10-18 %, its SQLite commit 13-23 %, the "
        "fold within the noise; a request alone pays ~60-90 us of pickle and ~55-65 us of commit "
        "(cold caches) against ~500 us in memory. Per-record pickles in the rows (the fold reusing "
        "them) and a 4-8 ms group window were measured and dropped (no gain)",
        "isolated": "unit enter/exit 1.31 -> 0.76 us; a row's pickle with device keys 53 -> 49 us "
        "(cold); benchmark 10, main and this branch in turn (load 2.3-2.5): sessions main "
        "1.39-1.47, branch 1.39-1.44; journey main 1.29-1.37, branch 1.25-1.33: within the "
        "noise; target not met (one pickle and one SQLite commit per request: ~1.25-1.30)",
    },
    # -- issue #37, benchmark 1, round 2: kit serve's loop CPU per session (sessions_profile.json)
    {
        "fix": "issue 37, benchmark 1, round 2: a partner request's headers read off the raw ASGI list "
        "(pipeline.header), the body's JSON through one decoder and every JSON answer through one "
        "encoder (json.loads/dumps with keywords built one a call), a plain JSON answer's two headers "
        "written out (pipeline._JSONAnswer, Starlette's order)",
        "profile": "cProfile (thread CPU clock) of kit serve under benchmark 1's load: Starlette 8.6 % of "
        "the loop's profiled time, 65 calls a session (Headers.get 7 a session, a KeyError inside for "
        "each header not sent: 1.7 us against 0.5 us; Response.init_headers 2 a session); json 5 %",
        "isolated": "in process (create_app through raw ASGI, the decrypt a look-up): init data -4.5 us, "
        "POST /sessions -11.5 us; Response(...) 2.13 -> 0.50 us an answer; kit serve's loop CPU a "
        "session, paired rounds against the base: -39 (16 rounds, load 2.3-4.6) and -54 us (14 rounds, "
        "load 3.6-4.6)",
    },
    {
        "fix": "kit serve serves create_app's app through its own 500 layer and ServiceHeaders, past "
        "FastAPI.__call__, Starlette.__call__ and FastAPI's telemetry and body-limit layers, which do "
        "nothing for it (kit.sim.lazyapp.Served; kit/cli.py hands it to uvicorn)",
        "profile": "py-spy and cProfile: four coroutine layers around ServiceHeaders on every request and "
        "on every resumption of a POST after its decrypt (the proposal of round 1)",
        "isolated": "in process ~3 us a request; kit serve's loop CPU a session -5.6 (median) / -15.9 "
        "(mean) us, 16 paired rounds, and -11 us in the seven-way run (14 rounds, load 3.6-4.6)",
    },
    {
        "fix": "a request body read off its ASGI messages without Starlette's stream generator "
        "(pipeline.read_body); init data's body joined from its parts around the nonce; "
        "ServiceHeaders reads an answer's header names and content-type in one pass and asks once "
        "per version whether it deprecates the legacy endpoints; the crypto workers hand back their "
        "worker's future (no coroutine layer to suspend and resume); the answer's set of assumptions "
        "read off the scope's state, not through request.state; the method read off the scope "
        "(Starlette's request.method calls typing.cast: 4 a session)",
        "profile": "the same profiles: read_body 2.6 us (an async generator, three steps a body), "
        "json_body of init data's small dict 3.1 us, ServiceHeaders 5.1-5.6 us a request",
        "isolated": "read_body 2.62 -> 0.85 us; init data's body 3.71 -> 0.56 us; ServiceHeaders 5.1-5.6 "
        "-> 4.4-4.5 us a request; kit serve's loop CPU a session, paired against the step before: "
        "-5 and -22 (body, init data), -6.5 (ServiceHeaders), -4 (the future), -14.5 us (the state; "
        "expected ~-2: noise at load 4.6)",
    },
    {
        "fix": "issue 37, benchmark 1, round 2: all of the above together",
        "profile": "perf (cpu-clock) of kit serve's loop process under benchmark 1: libpython 70 %, the "
        "kernel 18 %, uvloop 3 %, httptools 1.5 %; benchmarks/results/sessions_profile.json round_2",
        "isolated": "kit serve's loop CPU a session, base and branch side by side, 20 paired rounds at load "
        "4.6: 450 -> 365 us (median; -92.5 paired); the crypto worker 405-416 us a session at that load "
        "is now the larger of the two. Measured and not kept: head and body in one write (an uvicorn "
        "protocol holding the head: -3 to -7 us on the base, +13 on the branch), SCHED_BATCH for the "
        "crypto worker (the loop's involuntary switches halved, its CPU unchanged), uvicorn's "
        "proxy_headers off (+4 us: noise)",
    },
    {
        "fix": "issue 37 item 1, round 5: the kept records (kit.sim.records: accounts, persons, cards, "
        "transfers, inbound events, subscriptions, document requests, webhook deliveries) and their "
        "representations (kit.sim.representations) defined on first use; kit.sim.state names them "
        "(PEP 562), so state files are unchanged; a personality works out a representation's writer "
        "on its first answer; the cards' routes imported by the first card, not by the clock",
        "profile": "the kit's share alone (the design's dependencies imported first, then connect + "
        "first session, CPU): 80 ms, of which dataclasses 22 ms (40 classes: ~0.5 ms each, one exec "
        "per generated method), kit.sim.state 8.4 ms and kit.sim.models 8.2 ms of import",
        "isolated": "the kit's share, medians of 11 alternating fresh interpreters: 72.2 -> 66.9 ms",
    },
    {
        "fix": "issue 37 item 1, round 5: the fixtures module imported by a sandbox profile's first "
        "read of its file; the remaining state records given docstrings (dataclasses otherwise "
        "renders one from inspect.signature at import, ~0.1 ms a class)",
        "profile": "dataclasses' _process_class per class on the connect path (hooked): kit._fixtures "
        "1.0 ms for two classes and 1.3 ms of module; 8 record classes without a docstring",
        "isolated": "the kit's share, medians of 11 alternating: 80.7 -> 69.5 ms with the row above "
        "(a slower minute than that row's)",
    },
    {
        "fix": "issue 37 item 1, round 5: register.fact(name) copies one fact of the seed; the modules "
        "that read one fact at import or per token no longer copy the whole spec (its statements)",
        "profile": "register.spec() 0.32 ms a call (a JSON round trip of 25 KB), six calls on a first "
        "connect plus one per token",
        "isolated": "the kit's share, medians of 11 alternating: 73.5 -> 68.8 ms",
    },
    {
        "fix": "REMOVED (issue 60, below): the contract check imports openapi-core's validators "
        "without jsonschema's iri checker (kit/_shapes.py import_validators: rfc3987_syntax hidden "
        "while they import; the contract has no iri format)",
        "profile": "a process's first checked answer imported jsonschema, which imports "
        "rfc3987_syntax eagerly, and that module builds its Lark grammars as it is imported",
        "isolated": "about a second of CPU off each process's first contract check (the figure the "
        "code's comment gave)",
    },
    {
        "fix": "issue 46 (serving): the library copies re-measured against the 2 % rule; kept: headers "
        "read off and set on the raw list (kit/sim/asgi.py first, put), init data's body joined from "
        "its parts, the JWE short path, uvicorn without its command line; sent back to the library: "
        "the body read with Starlette's request.stream(), JSON answers and the session header through "
        "Starlette's Response and MutableHeaders, uvicorn's own main loop (a stop waits for its tick), "
        "lazyapp.Served (one app class, kit.sim.app.SimApp, for the embedded server and kit serve)",
        "profile": "timeit of each copy against the library call it replaces, 7 alternating rounds of "
        "20,000 at load 2.2, set against the last record's figures (benchmark 1's loop 283 us a "
        "session, two answers a session; benchmark 5's GET /cards 80 us a request)",
        "isolated": "per request or answer, copy vs library: 7 header reads 2.6 vs 6.6 us, service "
        "headers 1.1 vs 7.0 us, init data's body 0.45 vs 9.4 us (cached key set), body read 21.4 vs "
        "25.4 us, a JSON answer's headers 0.65 vs 1.66 us, the session header 2.6 vs 4.4 us; "
        "import uvicorn.main 52.6 ms (connect); the first three and uvicorn's above 2 % of a figure, "
        "the last three under it",
    },
    {
        "fix": "issue 60: the sys.modules stand-ins re-measured against the 2 % rule (no public way "
        "avoids any: httpx's and uvicorn's __init__ import their command lines, jsonschema's "
        "_format imports rfc3987_syntax); kept: httpx._main (kit/_client.py), uvicorn.main "
        "(kit/sim/server.py), rfc3987_syntax while kit regress imports papermill "
        "(kit/regress/worker.py); removed: rfc3987_syntax under the contract check's validators "
        "(kit/_shapes.py), which no figure with a target reaches",
        "profile": "benchmarks.paired f24a833 --quick --only connect --rounds 3 with the stand-ins "
        "taken out, on the shared machine; python -c timing each import's CPU, 5 alternating "
        "rounds; every notebook's cells run in one process: openapi-core never imported",
        "isolated": "connect without httpx._main's and uvicorn.main's stand-ins +17.6 % (median ratio "
        "0.994 -> 1.169), without httpx._main's alone +8.2 % (1.098 -> 1.188); import papermill "
        "489 -> 1,930 ms CPU without its stand-in, openapi-core's validators 317 -> 1,449 ms",
    },
    {
        "fix": "issue 60, sessions against d5c40eb: uvicorn's proxy-headers layer only with the "
        "access log (kit/_serveopts.py uvicorn_options; the embedded server never has one), the "
        "only place kit serve shows a client's address or scheme",
        "profile": "callgrind on kit serve's loop (N=250 minus N=50 sessions): the layer's header "
        "scan and trusted-host lookup on both requests of every session",
        "isolated": "kit serve's loop 0.984 -> 0.973 M instructions a session",
    },
    {
        "fix": "issue 60, sessions against d5c40eb: a JWE header the short path took is not read "
        "again (kit/sim/crypto.py SimKeys._read_header: remembered per key pair, bounded)",
        "profile": "a crypto worker's decrypt besides the RSA operation: the protected header's "
        "base64url and JSON read for every token, though a client sends the same header each time",
        "isolated": "one decrypt, callgrind (N=120 minus N=20 tokens): 6.655 -> 6.592 M instructions",
    },
]
UNITS = {
    "sessions": ("sessions/s", "decrypts/s"),
    "client": ("ms", "ms"),
    "notebooks": ("s", "s"),
    "prism": ("req/s", "req/s"),
    "population": ("journeys/s", "journeys/s"),
    "imports": ("ms", "ms"),
    "cluster": ("journeys/s", "journeys/s"),
    "memory": ("GiB", "GiB"),
    "connect": ("ms", "ms"),
    "state": ("x", "x"),
    "proxy": ("s", "s"),
}


def _plan(quick: bool) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """Each benchmark: its module, the function that measures it, and the arguments."""
    population = {"rounds": 1 if quick else 3, "customers": 400 if quick else 1200}
    return {
        "imports": ("bench_imports", "measure", {"rounds": 3 if quick else 7}),
        "connect": ("bench_connect", "measure", {"rounds": 3 if quick else 7}),
        "sessions": ("bench_sessions", "measure", {"rounds": 2 if quick else 5}),
        "client": ("bench_client", "measure", {"rounds": 6 if quick else 30}),
        "prism": ("bench_prism", "measure", {"rounds": 1 if quick else 3, "seconds": 3.0 if quick else 5.0}),
        "population": ("bench_population", "measure", population),
        "cluster": ("bench_population", "measure_cluster", population),
        "memory": ("bench_population", "measure_memory", {"small": 200, "large": 600 if quick else 1200}),
        "notebooks": ("bench_notebooks", "measure", {"rounds": 1 if quick else 2}),
        "state": ("bench_state", "measure", {"rounds": 2 if quick else 5}),
        "proxy": ("bench_proxy", "measure", {"rounds": 2 if quick else 4}),
    }


def _margin(result: dict[str, Any]) -> str:
    """ "met by 12 %" / "missed by 40 %" against the target, or why there is none."""
    if result.get("skipped"):
        return "skipped: " + str(result["skipped"])
    if result.get("error"):
        return "error: " + str(result["error"])
    target = str(result.get("target", ""))
    value = result.get(result.get("target_of", "ratio"))  # "kit" for an absolute target
    if value is None or target[:2] not in (">=", "<="):
        return "no target"
    bound = float(target[2:])
    gap = (value - bound) / bound if target.startswith(">=") else (bound - value) / bound
    return f"{'met' if gap >= 0 else 'missed'} by {abs(gap) * 100:.0f} %"


def _table(results: dict[str, dict[str, Any]]) -> str:
    rows = [("benchmark", "kit side", "reference side", "ratio", "target", "result")]
    for key in sorted(results, key=NUMBERS.__getitem__):
        r, (unit, ref_unit) = results[key], UNITS[key]
        name = f"{NUMBERS[key]}. {key}"
        if "ratio" in r:
            target = str(r.get("target", "")) + (f" {unit}" if r.get("target_of") == "kit" else "")
            rows.append(
                (
                    name,
                    f"{r['kit']:,} {unit}",
                    f"{r['reference']:,} {ref_unit}",
                    f"{r['ratio']:.2f}",
                    target,
                    _margin(r),
                )
            )
        else:
            rows.append((name, "-", "-", "-", str(r.get("target", "")), _margin(r)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=ORDER, help="run only these benchmarks")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke check, noisier)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--before", type=Path, help="a previous record whose figures are the 'before'")
    args = parser.parse_args(argv)

    import importlib

    started = time.perf_counter()
    bytecode()
    info = machine()
    plan = _plan(args.quick)
    results: dict[str, dict[str, Any]] = {}
    for key in args.only or ORDER:
        module, function, kwargs = plan[key]
        print(f"[{time.perf_counter() - started:6.1f} s] {key} …", flush=True)
        t0 = time.perf_counter()
        try:
            results[key] = getattr(importlib.import_module(f"benchmarks.{module}"), function)(**kwargs)
        except Exception as exc:  # one broken side must not hide the other figures
            results[key] = {
                "name": key,
                "error": f"{type(exc).__name__}: {exc}"[:300],
                "traceback": traceback.format_exc()[-2000:],
                "met": None,
            }
        results[key]["seconds"] = round(time.perf_counter() - t0, 1)
        print(f"           {_margin(results[key])} ({results[key]['seconds']} s)", flush=True)

    total = round(time.perf_counter() - started, 1)
    print()
    print(
        f"Benchmarks — {datetime.now(UTC):%Y-%m-%d}, {info['cpus']} cores, Python {info['python']}, "
        f"load {info['load_avg_1m_at_start']} at start, {total} s"
    )
    print(_table(results))

    previous: dict[str, Any] = {}
    source = args.before or args.out
    if source.is_file():
        try:
            previous = json.loads(source.read_text(encoding="utf-8"))
        except ValueError:
            previous = {}
    if args.only and not args.before and args.out.is_file():  # keep the figures not re-measured
        kept = previous.get("benchmarks", {})
        results = {k: results.get(k, kept.get(k)) for k in ORDER if k in results or k in kept}
        results = {k: v for k, v in results.items() if v is not None}
    if args.before:  # that record's figures become the "before"
        before: dict[str, Any] = {
            "date": previous.get("date"),
            "load_avg_1m_at_start": previous.get("machine", {}).get("load_avg_1m_at_start"),
            "figures": {
                k: {f: v.get(f) for f in ("kit", "reference", "ratio")}
                for k, v in previous.get("benchmarks", {}).items()
            },
        }
    else:
        before = previous.get("before", {})
    if before:
        before["fixes"] = FIXES
        before["ratios_before_after"] = {
            k: [before.get("figures", {}).get(k, {}).get("ratio"), v.get("ratio")] for k, v in results.items()
        }
    record = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": info,
        "seconds": total,
        "quick": args.quick,
        "benchmarks": results,
        "before": before,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"\nwrote {args.out.relative_to(HERE.parent) if args.out.is_relative_to(HERE.parent) else args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

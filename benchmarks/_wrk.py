"""wrk, shared by the service benchmarks: one run parsed into figures, and the match-write Lua script.

``bench_service.py`` and ``bench_league10m.py`` post the same unique 1-vs-1 matches; only their
players' ids differ (``p000001``... against ``p0``...), so :func:`write_lua` takes the id format.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import urllib.request
from collections import Counter

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["refused", "run", "status_counts", "write_lua"]

_WRITE_LUA = r"""
local counter = 0
local threads = {}
-- `tid` is a global that setup() sets in each thread's own Lua state (a local here would hide it
-- and make both threads send the same ids and bodies).
local prefix = os.getenv("BENCH_PREFIX") or "%(prefix)s"
-- BENCH_PREFER: a Prefer header to send (e.g. return=minimal for the answers' summary).
local prefer = os.getenv("BENCH_PREFER")
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  math.randomseed(tid * 7919 + os.time())
end
function request()
  counter = counter + 1
  local a = math.random(%(first)d, %(last)d)
  local b = math.random(%(first)d, %(last)d - 1)
  if b >= a then b = b + 1 end
  local body = string.format(
    '{"match_id":"%%s-%%d-%%d","player_a":"%(id)s","player_b":"%(id)s","winner":"%%s",' ..
    '"stats":{"a":{"won_by_16":%%d},"b":{"bad_moves":%%d}}}',
    prefix, tid, counter, a, b, (math.random() < 0.5) and "a" or "b", math.random(0, 2), math.random(0, 3))
  local headers = {["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY")}
  if prefer then headers["Prefer"] = prefer end
  return wrk.format("POST", "/v1/matches", headers, body)
end
"""


def write_lua(id_format: str, first: int, count: int = 10_000, prefix: str = "b") -> str:
    """A wrk script POSTing unique matches between two of players ``first``..``first + count - 1``.

    ``id_format`` is the Lua ``string.format`` pattern of a player's id from its number (``p%06d``);
    match ids are ``<BENCH_PREFIX or prefix>-<thread>-<counter>``; the key comes from ``BENCH_KEY``,
    a ``Prefer`` header from ``BENCH_PREFER`` (none when it is unset).
    """
    return _WRITE_LUA % {"prefix": prefix, "first": first, "last": first + count - 1, "id": id_format}


def run(
    base: str,
    path: str,
    lua: str | None,
    duration: int,
    connections: int,
    env: dict[str, str],
    timeout: int = 5,
) -> dict[str, str]:
    """One wrk run against ``base + path`` (2 threads, or 1 for one connection); its figures as text.

    Keys: ``requests``, ``rps``, ``p50``, ``p99`` (``?`` when wrk printed none), ``non2xx``,
    ``refused`` (the answers that were not 2xx by status and route, as the service's ``GET /metrics``
    counted them before and after the run; empty when all were 2xx or there is no such endpoint),
    ``socket_errors`` and ``steal``: the share of the machine's CPU time that its hypervisor gave
    to others during the run (``/proc/stat``; on this shared machine it has reached a third of it,
    and a round with steal is not comparable with one without). ``env`` is added to the
    environment the Lua script sees.
    """
    script = None
    cmd = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{duration}s", "--latency"]
    cmd += ["--timeout", f"{timeout}s"]
    if lua:
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
            f.write(lua)
        script = f.name
        cmd += ["-s", script]
    counted = status_counts(base)
    before = cpu_times()
    done = subprocess.run([*cmd, base + path], capture_output=True, text=True, env={**os.environ, **env})
    steal = steal_share(before, cpu_times())
    if script:
        os.unlink(script)
    out = done.stdout

    def find(pattern: str, default: str = "?") -> str:
        found = re.search(pattern, out)
        return found.group(1) if found else default

    if done.returncode != 0:
        print(f"  wrk failed: {done.stderr.strip()}")
    non2xx = find(r"Non-2xx or 3xx responses: (\d+)", "0")
    return {
        "requests": find(r"(\d+) requests in"),
        "rps": find(r"Requests/sec:\s+([\d.]+)"),
        "p50": find(r"50%\s+([\d.]+\w+)"),
        "p99": find(r"99%\s+([\d.]+\w+)"),
        "non2xx": non2xx,
        "refused": refused(counted, status_counts(base)) if non2xx != "0" else "",
        "socket_errors": find(r"Socket errors: (.*)", "none"),
        "steal": "?" if steal is None else f"{steal:.0%}",
    }


#: Answers by (status, method, route template), as the service's request counter has them.
StatusCounts = Counter[tuple[str, str, str]]


def status_counts(base: str) -> StatusCounts | None:
    """The answers the service at ``base`` has given so far, from its ``GET /metrics``
    (``sedma_elo_http_requests_total``), or None where that endpoint does not answer with
    Prometheus text (the bare-ASGI app, metrics turned off)."""
    counts: StatusCounts = Counter()
    try:
        with urllib.request.urlopen(f"{base}/metrics", timeout=10) as resp:
            text = resp.read().decode()
        for family in text_string_to_metric_families(text):
            if family.name != "sedma_elo_http_requests":
                continue
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    labels = sample.labels
                    counts[(labels["status"], labels["method"], labels["route"])] += int(sample.value)
    except (OSError, ValueError, KeyError):
        return None
    return counts


def refused(before: StatusCounts | None, after: StatusCounts | None) -> str:
    """The answers other than 2xx given between two :func:`status_counts`, most first, as text
    (``"429 POST /v1/matches: 17"``); ``"not counted"`` without both."""
    if before is None or after is None:
        return "not counted"
    grown = after - before  # Counter subtraction keeps the positive counts
    parts = [f"{s} {m} {r}: {n}" for (s, m, r), n in grown.most_common() if not s.startswith("2")]
    return ", ".join(parts)


def cpu_times() -> list[int] | None:
    """The machine's CPU time so far by kind (``/proc/stat``'s ``cpu`` line), or None off Linux."""
    try:
        with open("/proc/stat") as f:
            return [int(n) for n in f.readline().split()[1:]]
    except OSError:
        return None


def steal_share(before: list[int] | None, after: list[int] | None) -> float | None:
    """The share of CPU time stolen by the hypervisor between two :func:`cpu_times` readings."""
    if before is None or after is None:
        return None
    spent = [b - a for a, b in zip(before, after, strict=False)]
    total = sum(spent)
    return spent[7] / total if total and len(spent) > 7 else None

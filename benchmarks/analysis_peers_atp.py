"""The full comparison table of docs/analysis.md, one group of systems per process, merged at the end.

Usage:
    python benchmarks/analysis_peers_atp.py run HISTORY GROUP OUTDIR [options] [RULES.toml ...]
    python benchmarks/analysis_peers_atp.py merge HISTORY OUTDIR OUT.json
    python benchmarks/analysis_peers_atp.py choose HISTORY GROUP OUT.json --valid N --warm-up W --grid V,...
    python benchmarks/analysis_peers_atp.py tail HISTORY OUTDIR

GROUP is ``sedma`` (the reference rules, then each RULES file), ``standard`` (Elo, tuned Elo,
Glicko-2, TrueSkill, OpenSkill, as in ``backtest --compare``), ``elo`` (its first two),
``glicko2``, ``trueskill`` or ``openskill`` (one of them per process), ``whr`` or ``kickscore``. Each run
saves every system's forecasts and seconds in OUTDIR; ``merge`` scores them all on the standard
split with :func:`sedma_elo.analysis.backtest` (so the paired bootstrap intervals are against the
reference rules), adds the fairness figures of the Sedma rule sets, writes a run for
``sedma-elo report`` and prints the markdown table. Options of ``run``: ``--from N`` runs the
group on the matches from index N on (a documented later slice); ``--refit N`` and ``--iterations
N`` set WHR's block size and Newton steps per refit (kickscore: block size and EP sweeps;
``--recent`` fits the warm-up before the validation window once (``--warm N`` EP sweeps), then
sweeps only each new
block's observations, see :mod:`sedma_elo.analysis.kickscore_peer`).
``--index N`` numbers the saved files from N (two runs of one group in one OUTDIR). ``choose``
scores WHR's or kickscore's ``--grid`` values on the last ``--valid`` validation matches (see
there); ``tail`` scores only the runs on the last matches (``--tail``) against the reference, in
seconds. Groups can run at once in separate processes (the machine's cores are shared).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sedma_elo import REFERENCE_RULES, load_rules
from sedma_elo.analysis import (
    Forecast,
    Forecaster,
    backtest,
    chronological_split,
    fairness_of,
    paired_bootstrap,
    peer_forecasters,
    results_to_json,
    sedma_rules,
    table_from_history,
)
from sedma_elo.analysis.fairness import drift_components
from sedma_elo.analysis.kickscore_peer import KICKSCORE_GRID, kickscore_periodic
from sedma_elo.analysis.metrics import Split, player_bootstrap, score_forecasts
from sedma_elo.analysis.peers import tuned
from sedma_elo.analysis.table import MatchTable
from sedma_elo.analysis.whole_history import WHR_GRID, later_slice, whr_periodic
from sedma_elo.batch.history import load_history

#: Games after which a player counts as established in the drift split (the fair-tuned rules'
#: newcomer games).
NEWCOMER_GAMES = 26

#: Matches per resampled run of the block bootstrap intervals in the merged table.
BLOCK = 1000


def _options(args: list[str]) -> tuple[dict[str, float], list[str]]:
    opts: dict[str, float] = {}
    rest = []
    it = iter(args)
    for arg in it:
        if arg in (
            "--valid",
            "--from",
            "--refit",
            "--iterations",
            "--warm",
            "--tail",
            "--warm-up",
            "--full-every",
            "--index",
        ):
            opts[arg[2:]] = int(next(it))
        elif arg == "--var":
            opts["var"] = float(next(it))

        elif arg == "--recent":
            opts["recent"] = 1
        else:
            rest.append(arg)
    return opts, rest


def _window(table: MatchTable, start: int, end: int) -> MatchTable:
    """Matches ``[start, end)`` of ``table`` (same player index)."""
    return MatchTable(
        table.a[start:end], table.b[start:end], table.y[start:end], table.day[start:end], table.players
    )


def _tail_run(inner: Forecaster, n_scored: int, warm_up: int) -> Forecaster:
    """``inner`` on the last ``warm_up + n_scored`` matches only, its first ``warm_up`` fitted at once.

    The forecasts before the last ``n_scored`` matches are 0.5 and must not be scored (``merge``
    scores every system on those last matches in a table of its own: ``params["scored_from"]``).
    """

    def run(table: MatchTable, split: Split) -> Forecast:
        start = len(table) - n_scored - warm_up
        if start < split.test_start:
            raise SystemExit("--tail and --warm-up must lie inside the test window")
        tail = _window(table, start, len(table))
        fc = inner(tail, Split(len(tail), warm_up, warm_up))
        p = np.concatenate([np.full(start, 0.5), fc.p])
        scored = len(table) - n_scored
        name = f"{fc.system}; last {n_scored:,} matches only, after a warm-up of {warm_up:,}"
        return Forecast(name, p, None, None, None, None, {**fc.params, "scored_from": scored})

    return run


#: Groups of one standard peer each: their index in ``peer_forecasters(strong=False)``.
_ONE_PEER = {"glicko2": 2, "trueskill": 3, "openskill": 4}


def _group(name: str, opts: dict[str, float], rules_files: list[str]) -> list[Forecaster]:
    start = int(opts.get("from", 0))
    if name == "sedma":
        return [sedma_rules(REFERENCE_RULES)] + [sedma_rules(load_rules(p)) for p in rules_files]
    if name == "standard":
        return peer_forecasters(strong=False)
    if name == "elo":
        return peer_forecasters(strong=False)[:2]
    if name in _ONE_PEER:
        # One standard peer per process, so the slow ones (TrueSkill) run beside the others;
        # with --tail on the last matches only, like WHR and kickscore (a documented later slice).
        peer = peer_forecasters(strong=False)[_ONE_PEER[name]]
        if "tail" in opts:
            return [_tail_run(peer, int(opts["tail"]), int(opts.get("warm-up", 30_000)))]
        return [peer]
    if name in ("whr", "kickscore") and "tail" in opts:
        # The last matches only, with one setting (--var) chosen beforehand (docs/analysis.md).
        inner = _fixed_peer(name, opts, float(opts["var"]) if "var" in opts else None)
        return [_tail_run(inner, int(opts["tail"]), int(opts.get("warm-up", 30_000)))]
    if name == "whr":
        refit, steps = int(opts.get("refit", 2000)), int(opts.get("iterations", 10))
        peer = tuned("whr", lambda w2: whr_periodic(w2=w2, refit_every=refit, iterations=steps), WHR_GRID)
    elif name == "kickscore":
        refit, steps = int(opts.get("refit", 20_000)), int(opts.get("iterations", 10))
        sweeps = "recent" if opts.get("recent") else "full"
        peer = tuned(
            "kickscore",
            lambda var: kickscore_periodic(
                var=var,
                refit_every=refit,
                max_iter=steps,
                sweeps=sweeps,
                first_block=None,
                warm_iter=int(opts.get("warm", steps)),
            ),
            KICKSCORE_GRID,
        )
    else:
        raise SystemExit(f"unknown group {name!r}")
    return [later_slice(peer, start) if start > 0 else peer]


def _fixed_peer(name: str, opts: dict[str, float], var: float | None) -> Forecaster:
    """WHR (``var`` = w2, default 14) or kickscore (``var`` = Wiener variance, default 0.17) with one
    setting fixed beforehand, its first ``--warm-up`` matches fitted at once (kickscore) or in blocks."""
    refit = int(opts.get("refit", 2000 if name == "whr" else 20_000))
    steps = int(opts.get("iterations", 10))
    if name == "whr":
        return whr_periodic(w2=14.0 if var is None else var, refit_every=refit, iterations=steps)
    return kickscore_periodic(
        var=0.17 if var is None else var,
        refit_every=refit,
        max_iter=steps,
        sweeps="recent" if opts.get("recent") else "full",
        first_block=int(opts.get("warm-up", 30_000)),
        warm_iter=int(opts.get("warm", steps)),
        full_every=int(opts.get("full-every", 0)),
    )


def choose(history: str, group: str, out: Path, args: list[str]) -> None:
    """Score each ``--grid`` setting of WHR or kickscore on the last ``--valid`` validation matches.

    Each setting runs on the ``--warm-up`` + ``--valid`` matches that end where the test window
    starts: the first ``--warm-up`` fitted at once (never scored), the last ``--valid`` predicted
    in blocks, as ``run --tail`` does on the test window. No test match is read.
    """
    grid_at = args.index("--grid")
    grid = [float(v) for v in args[grid_at + 1].split(",")]
    opts, _ = _options(args[:grid_at] + args[grid_at + 2 :])
    arrays, _ = load_history(history, skip_bad=True)
    table = table_from_history(arrays)
    split = chronological_split(len(table))
    n_scored, warm_up = int(opts["valid"]), int(opts.get("warm-up", 30_000))
    start = split.test_start - n_scored - warm_up
    if start < split.valid_start:
        raise SystemExit("--valid and --warm-up must lie inside the validation window")
    window = _window(table, start, split.test_start)
    rows = []
    for var in grid:
        began = time.perf_counter()
        fc = _fixed_peer(group, opts, var)(window, Split(len(window), warm_up, warm_up))
        seconds = time.perf_counter() - began
        m = score_forecasts(fc.p[warm_up:], window.y[warm_up:])
        rows.append(
            {
                "var": var,
                "log_loss": m.log_loss,
                "accuracy": m.accuracy,
                "seconds": seconds,
                "system": fc.system,
                "params": dict(fc.params),
            }
        )
        print(f"{fc.system}: valid log loss {m.log_loss:.5f}, {seconds:.0f} s", flush=True)
    best = min(rows, key=lambda r: r["log_loss"])
    saved = {
        "group": group,
        "scored": [split.test_start - n_scored, split.test_start],
        "warm_up_from": start,
        "options": opts,
        "rows": rows,
        "chosen": best["var"],
    }
    out.write_text(json.dumps(saved, indent=1), encoding="utf-8")
    print(f"chosen: {best['var']:g} (valid log loss {best['log_loss']:.5f})")


def run(history: str, group: str, outdir: Path, args: list[str]) -> None:
    opts, rules_files = _options(args)
    arrays, _ = load_history(history, skip_bad=True)
    table = table_from_history(arrays)
    split = chronological_split(len(table))
    outdir.mkdir(parents=True, exist_ok=True)
    for i, forecaster in enumerate(_group(group, opts, rules_files)):
        began = time.perf_counter()
        fc = forecaster(table, split)
        seconds = time.perf_counter() - began
        stem = outdir / f"{group}-{i + int(opts.get('index', 0))}"
        arrays_out = {"p": fc.p}
        for key in ("rating_a", "rating_b", "final"):
            if getattr(fc, key) is not None:
                arrays_out[key] = getattr(fc, key)
        np.savez(stem.with_suffix(".npz"), **arrays_out)
        meta: dict[str, Any] = {
            "system": fc.system,
            "initial_rating": fc.initial_rating,
            "params": dict(fc.params),
            "seconds": seconds,
            "rules_file": (None if i == 0 else rules_files[i - 1]) if group == "sedma" else None,
        }
        stem.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
        print(f"{fc.system}: {seconds:.1f} s", flush=True)


def merge(history: str, outdir: Path, out: Path) -> None:
    arrays, _ = load_history(history, skip_bad=True)
    table = table_from_history(arrays)
    split = chronological_split(len(table))
    order = {"sedma": 0, "standard": 1, "elo": 1, "glicko2": 2, "trueskill": 3, "openskill": 4}
    order |= {"whr": 5, "kickscore": 6}
    metas = sorted(
        outdir.glob("*.json"), key=lambda p: (order[p.stem.split("-")[0]], int(p.stem.split("-")[1]))
    )
    forecasts, seconds, rule_sets = [], [], []
    for path in metas:
        meta = json.loads(path.read_text(encoding="utf-8"))
        data = dict(np.load(path.with_suffix(".npz")))
        fc = Forecast(
            meta["system"],
            data["p"],
            data.get("rating_a"),
            data.get("rating_b"),
            data.get("final"),
            meta["initial_rating"],
            meta["params"],
        )
        forecasts.append(fc)
        seconds.append(meta["seconds"])
        if path.stem.startswith("sedma"):
            rule_sets.append(load_rules(meta["rules_file"]) if meta["rules_file"] else REFERENCE_RULES)
    results = backtest(table, [lambda t, s, fc=fc: fc for fc in forecasts], split, players=True)
    test = slice(split.test_start, split.n)
    y = table.y[test]
    # A "forecast" equal to the outcome scores ~0 (clipped at 1e-15), so its paired difference is
    # the system's own test log loss: the bootstrap then gives an interval for the loss itself.
    certain = np.where(y >= 0.5, 1.0, 0.0)
    systems = []
    for i, r in enumerate(results):
        d = r.to_dict()
        d["seconds"] = round(seconds[i], 1)
        p = r.forecast.p[test]
        d["log_loss_interval"] = paired_bootstrap(p, certain, y, block=BLOCK).to_dict()
        if i:
            d["vs_reference_blocks"] = paired_bootstrap(
                p, results[0].forecast.p[test], y, block=BLOCK
            ).to_dict()
        if i < len(rule_sets):
            d["fairness"] = fairness_of(table, r.forecast, rule_sets[i], segments=4).to_dict()
            est, new = drift_components(table, r.forecast, NEWCOMER_GAMES)
            d["fairness"] |= {"drift_established": est, "drift_with_newcomer": new}
        systems.append(d)
    run_json = {"kind": "backtest", "history": history, **results_to_json(results, split)}
    # A system run on the last matches only is 0.5 before them: it is in the tail table only.
    run_json["systems"] = systems = [d for d in systems if "scored_from" not in d["params"]]
    tails = [int(fc.params["scored_from"]) for fc in forecasts if "scored_from" in fc.params]
    if tails:
        # Systems run on the last matches only: every system scored on those same matches.
        tail_split = Split(split.n, split.valid_start, max(tails))
        every = [lambda t, s, fc=fc: fc for fc in forecasts]
        tail = backtest(table, every, tail_split, players=True)
        run_json["tail"] = results_to_json(tail, tail_split)
        for i, d in enumerate(run_json["tail"]["systems"]):
            d["seconds"] = round(seconds[i], 1)  # the run's own time, not the merge's re-scoring
        print(f"last {split.n - max(tails):,} matches (from {max(tails):,}), every system:")
        _print_table([r.to_dict() | {"seconds": seconds[i]} for i, r in enumerate(tail)])
    out.write_text(json.dumps(run_json, indent=1), encoding="utf-8")
    _print_table(systems)
    print(
        f"\n| rules | drift / 100k | by era (quarters) | matches of established players "
        f"({NEWCOMER_GAMES}+ games each) | matches with a newcomer | losing well |"
    )
    print("|---|---|---|---|---|---|")
    for s in systems:
        if f := s.get("fairness"):
            eras = " / ".join(f"{v:+.2f}" for v in f["segment_drifts"])
            cells = [s["system"], f"{f['drift_per_100k']:+.3f}", eras]
            cells += [
                f"{f['drift_established']:+.2f}",
                f"{f['drift_with_newcomer']:+.2f}",
                f"{f['losing_well']:+d}",
            ]
            print("| " + " | ".join(cells) + " |")


def tail_scores(history: str, outdir: Path) -> None:
    """Score the tail-only runs of ``outdir`` on their last matches against ``sedma-0`` (cheap ``merge``).

    Every run in ``outdir`` with ``scored_from`` and the reference rules' run are scored on the
    matches from the latest ``scored_from`` on: log loss, accuracy, and the difference from the
    reference with a paired single-match and a players-resampled interval. No full backtest, so
    it takes seconds where ``merge`` takes minutes on a loaded machine.
    """
    arrays, _ = load_history(history, skip_bad=True)
    table = table_from_history(arrays)
    runs = []
    for path in sorted(outdir.glob("*.json")):
        meta = json.loads(path.read_text(encoding="utf-8"))
        runs.append((path.stem, meta, np.load(path.with_suffix(".npz"))["p"]))
    reference = next(p for stem, _, p in runs if stem == "sedma-0")
    start = max(int(m["params"]["scored_from"]) for _, m, _ in runs if "scored_from" in m["params"])
    window = slice(start, len(table))
    y, a, b = table.y[window], table.a[window], table.b[window]
    print(f"last {len(table) - start:,} matches (from {start:,})")
    print("| system | log loss | vs reference [95% CI]: matches | players | accuracy | seconds |")
    print("|---|---|---|---|---|---|")
    for stem, meta, p in runs:
        if stem != "sedma-0" and "scored_from" not in meta["params"]:
            continue
        m = score_forecasts(p[window], y)
        cells = [meta["system"], f"{m.log_loss:.5f}"]
        if stem == "sedma-0":
            cells += ["-", "-"]
        else:
            cells.append(_interval(paired_bootstrap(p[window], reference[window], y).to_dict()))
            cells.append(_interval(player_bootstrap(p[window], reference[window], y, a, b).to_dict()))
        cells += [f"{m.accuracy:.4f}", f"{meta['seconds']:.0f}"]
        print("| " + " | ".join(cells) + " |")


def _print_table(systems: list[dict[str, Any]]) -> None:
    print(
        "| system | test log loss [95% CI, blocks of 1,000] | vs reference [95% CI]: matches | "
        "blocks of 1,000 | players | accuracy | valid log loss | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for s in systems:
        valid = "-" if s["valid"] is None else f"{s['valid']['log_loss']:.4f}"
        own = s.get("log_loss_interval")
        loss = f"{s['log_loss']:.5f}" + ("" if own is None else f" [{own['low']:.4f}, {own['high']:.4f}]")
        cells = [
            s["system"],
            loss,
            _interval(s["vs_reference"]),
            _interval(s.get("vs_reference_blocks")),
            _interval(s["vs_reference_players"]),
            f"{s['accuracy']:.4f}",
            valid,
            f"{s['seconds']:.0f}",
        ]
        print("| " + " | ".join(cells) + " |")


def _interval(v: dict[str, Any] | None) -> str:
    return "-" if v is None else f"{v['mean']:+.4f} [{v['low']:+.4f}, {v['high']:+.4f}]"


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], Path(sys.argv[4]), sys.argv[5:])
    elif sys.argv[1] == "tail":
        tail_scores(sys.argv[2], Path(sys.argv[3]))
    elif sys.argv[1] == "choose":
        choose(sys.argv[2], sys.argv[3], Path(sys.argv[4]), sys.argv[5:])
    else:
        merge(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))

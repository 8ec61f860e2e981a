"""Analysis commands: ``backtest``, ``tune``, ``simulate`` and ``report``."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..batch.history import load_history
from ..core.rules import REFERENCE_RULES, Rules, load_rules
from ..errors import ValidationError
from . import app
from .backtest_tables import metrics_table, print_details
from .errors import user_errors
from .options import RulesOption, SkipBad, one_path

if TYPE_CHECKING:  # the analysis package is imported by its commands only (CLI start-up)
    from ..analysis import MatchTable, SystemResult

console = Console()
err_console = Console(stderr=True)

HistoryArg = Annotated[
    Path, typer.Argument(help="Match-history file (CSV, gzipped or not, or JSON Lines), oldest match first.")
]
TestOpt = Annotated[
    float, typer.Option("--test-fraction", help="Share of the last matches scored (test window).")
]
ValidOpt = Annotated[
    float,
    typer.Option("--valid-fraction", help="Share of matches just before the test window used for tuning."),
]
LimitOpt = Annotated[
    int | None,
    typer.Option("--limit", help="Use only the first N matches of the file (quick looks; not for results)."),
]
#: The run as JSON (input of `report`); ``--save`` is its old spelling, still accepted.
RunOut = Annotated[
    Path | None, typer.Option("--out", metavar="FILE", help="Write the run as JSON (input of `report`).")
]
SaveAlias = Annotated[Path | None, typer.Option("--save", hidden=True)]


def _load(path: Path, skip_bad: bool, limit: int | None) -> MatchTable:
    from ..analysis import table_from_history

    arrays, errors = load_history(path, skip_bad=skip_bad)
    for e in errors:
        err_console.print(f"skipped: {e}", highlight=False)
    if limit is not None:
        if limit < 1:
            raise ValidationError("limit", f"must be at least 1, got {limit}")
        table = table_from_history(arrays)
        return table.head(min(limit, len(table)))
    return table_from_history(arrays)


#: Eras of the history whose drift each candidate rule set's fairness figures give.
DRIFT_ERAS = 4


def _with_fairness(table: MatchTable, result: SystemResult, rules: Rules, path: Path | None) -> SystemResult:
    """``result`` (a Sedma rule set's) with its fairness figures on the whole history for the JSON."""
    from ..analysis import fairness_of

    fair = fairness_of(table, result.forecast, rules, segments=min(DRIFT_ERAS, len(table)))
    extra = {**result.extra, "fairness": fair.to_dict(), "rules_file": None if path is None else str(path)}
    return replace(result, extra=extra)


@app.command("backtest")
def backtest_command(
    history: HistoryArg,
    rules: RulesOption = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of tables.")
    ] = False,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="Also run plain and tuned Elo, Glicko-2, TrueSkill, OpenSkill, WHR and kickscore.",
        ),
    ] = False,
    candidates: Annotated[
        list[Path] | None,
        typer.Option("--candidate", help="Another rules file to score beside --rules (repeatable)."),
    ] = None,
    strong_from: Annotated[
        int,
        typer.Option(
            "--strong-peers-from",
            help="With --compare, run WHR and kickscore on the matches from this index on (0: all).",
        ),
    ] = 0,
    tune_peers: Annotated[
        bool,
        typer.Option(
            "--tune-peers", help="With --compare, also tune Glicko-2/TrueSkill/OpenSkill dynamics (slow)."
        ),
    ] = False,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate", help="Also report the rules with a logit scale fitted on the validation window."
        ),
    ] = False,
    test_fraction: TestOpt = 0.3,
    valid_fraction: ValidOpt = 0.2,
    limit: LimitOpt = None,
    skip_bad: SkipBad = False,
    plots: Annotated[
        Path | None, typer.Option("--plots", help="Directory to write calibration.png and ratings.png into.")
    ] = None,
    bootstrap_block: Annotated[
        int,
        typer.Option(
            "--bootstrap-block",
            metavar="N",
            help="Resample runs of N consecutive test matches for the intervals (1: single matches).",
        ),
    ] = 1,
    player_bootstrap: Annotated[
        bool,
        typer.Option(
            "--player-bootstrap",
            help="Also give each difference a player-cluster bootstrap interval (players resampled).",
        ),
    ] = False,
    out: RunOut = None,
    save: SaveAlias = None,
) -> None:
    """Chronological backtest: predict each match from the ratings before it, score the last 30%."""
    from ..analysis import (
        backtest,
        calibrated,
        chronological_split,
        peer_forecasters,
        rating_quantiles,
        results_to_json,
        sedma_rules,
    )

    with user_errors():
        save = one_path(("--save", save), ("--out", out), required=False)
        if bootstrap_block < 1:
            raise ValidationError("--bootstrap-block", f"must be at least 1, got {bootstrap_block}")
        the_rules = load_rules(rules)
        table = _load(history, skip_bad, limit)
        split = chronological_split(len(table), test_fraction, valid_fraction)
        rule_sets: list[tuple[Rules, Path | None]] = [(the_rules, rules)]
        rule_sets += [(load_rules(path), path) for path in candidates or []]
        forecasters = [sedma_rules(r) for r, _ in rule_sets]
        if calibrate:
            forecasters.append(calibrated(sedma_rules(the_rules)))
        if compare:
            forecasters.extend(peer_forecasters(tune=tune_peers, strong_from=strong_from))
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            disable=json_out or not sys.stderr.isatty(),
        ) as bar:
            task = bar.add_task("systems", total=len(forecasters))
            results = backtest(
                table,
                forecasters,
                split,
                progress=lambda i: bar.update(task, completed=i),
                block=bootstrap_block,
                players=player_bootstrap,
            )
            bar.update(task, completed=len(forecasters))
        for i, (r, path) in enumerate(rule_sets):
            results[i] = _with_fairness(table, results[i], r, path)
        run: dict[str, Any] = {"kind": "backtest", "history": str(history), **results_to_json(results, split)}
        if save is not None or plots is not None:
            run["timeline"] = rating_quantiles(table, results[0].forecast)
        if save is not None:
            save.write_text(json.dumps(run, indent=1), encoding="utf-8")
        if plots is not None:
            from ..analysis.plots import calibration_png, distribution_png  # matplotlib: slow to import

            plots.mkdir(parents=True, exist_ok=True)
            (plots / "calibration.png").write_bytes(calibration_png(run["systems"]))
            if run["timeline"]:
                (plots / "ratings.png").write_bytes(
                    distribution_png(run["timeline"], f"Ratings: {results[0].system}")
                )
        if json_out:
            run.pop("timeline", None)
            print(json.dumps(run))
            return
        console.print(metrics_table(results, split))
        print_details(console, results[0])


@app.command("tune")
def tune_command(
    history: HistoryArg,
    out: Annotated[
        Path, typer.Option("--out", metavar="FILE", help="Where to write the tuned rules (TOML).")
    ],
    rules: Annotated[
        Path | None,
        typer.Option(
            "--rules",
            metavar="FILE",
            help="Starting rules (default: reference); unsearched values come from it.",
        ),
    ] = None,
    trials: Annotated[
        int, typer.Option("--trials", help="Number of optuna trials to run (in this process).")
    ] = 100,
    jobs: Annotated[
        int, typer.Option("--jobs", help="Worker processes running trials at once (one study).")
    ] = 1,
    storage: Annotated[
        str | None,
        typer.Option(
            "--storage", help="Optuna RDB URL shared by several processes, e.g. postgresql+psycopg://..."
        ),
    ] = None,
    study_name: Annotated[
        str, typer.Option("--study-name", help="Study name inside --storage.")
    ] = "sedma-elo-tune",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the TPE sampler.")] = 0,
    name: Annotated[str, typer.Option("--name", help="Name written into the tuned rules file.")] = "tuned",
    max_drift: Annotated[
        float | None,
        typer.Option(
            "--max-drift", help="Only choose rules whose |drift| is at most POINTS per 100,000 matches."
        ),
    ] = None,
    max_losing_well: Annotated[
        float | None,
        typer.Option("--max-losing-well", help="Only choose rules whose losing-well gain is at most POINTS."),
    ] = None,
    drift_segments: Annotated[
        int,
        typer.Option(
            "--drift-segments",
            metavar="N",
            help="--max-drift must also hold in each of N equal eras of the replay (1: whole only).",
        ),
    ] = 1,
    loss_only: Annotated[
        bool,
        typer.Option(
            "--loss-only",
            help="Minimise validation log loss alone (under the constraints); the front is still reported.",
        ),
    ] = False,
    local: Annotated[
        int,
        typer.Option(
            "--local",
            metavar="N",
            help="After the TPE trials, N local-search trials, each moving 1-3 coefficients of the best.",
        ),
    ] = 0,
    fix: Annotated[
        list[str] | None,
        typer.Option(
            "--fix",
            metavar="NAME=VALUE",
            help="Hold a tuned coefficient at VALUE (not searched; repeatable), e.g. "
            "k_factor.new_player_multiplier=1.",
        ),
    ] = None,
    front: Annotated[
        Path | None,
        typer.Option(
            "--front", help="Where to save the Pareto front as JSON (default: OUT with .front.json)."
        ),
    ] = None,
    test_fraction: TestOpt = 0.3,
    valid_fraction: ValidOpt = 0.2,
    limit: LimitOpt = None,
    skip_bad: SkipBad = False,
) -> None:
    """Search the rules' coefficients for a low validation log loss and fair ratings (optuna TPE).

    Each trial is scored on validation log loss, drift, losing-well gain and newcomer
    convergence; `--out` gets the lowest log loss that meets --max-drift / --max-losing-well.
    The test window is never seen by the search; it is scored once, after it, for the starting
    and the tuned rules.
    """
    from ..analysis import OBJECTIVES, chronological_split, drift_per_100k, score_forecasts, sedma_rules

    with user_errors():
        base = load_rules(rules)
        table = _load(history, skip_bad, limit)
        split = chronological_split(len(table), test_fraction, valid_fraction)
        from ..analysis.objectives import Constraints
        from ..analysis.tune import fix_params, tune_rules  # optuna: slow to import

        base, space = fix_params(base, fix or [])

        if drift_segments < 1:
            raise ValidationError("--drift-segments", f"must be at least 1, got {drift_segments}")
        bounds = Constraints(max_drift, max_losing_well, drift_segments)
        with Progress(
            TextColumn("trial"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("best {task.fields[best]}"),
            TimeElapsedColumn(),
            console=err_console,
        ) as bar:
            task = bar.add_task("tune", total=trials + local, best="-")

            def on_trial(number: int, value: float, best: float) -> None:
                bar.update(task, advance=1, best=f"{best:.5f}")

            result = tune_rules(
                table,
                split,
                trials=trials,
                jobs=jobs,
                seed=seed,
                storage=storage,
                study_name=study_name,
                base=base,
                name=name,
                space=space,
                constraints=bounds,
                objectives=1 if loss_only else len(OBJECTIVES),
                on_trial=on_trial,
                local=local,
            )
        result.rules.save(out)
        console.print(_front_table(result.front))
        console.print(
            f"chose trial {result.number} of {result.trials} ({result.feasible} met the constraints): "
            f"validation log loss {result.valid_log_loss:.5f}"
        )
        for key, value in sorted(result.params.items()):
            console.print(f"  {key} = {value:.6g}" if isinstance(value, float) else f"  {key} = {value}")
        console.print(f"wrote {out}")
        test = slice(split.test_start, split.n)
        scored: dict[str, Any] = {}
        for label, r in (("starting rules", base), ("tuned rules", result.rules)):
            fc = sedma_rules(r)(table, split)
            m = score_forecasts(fc.p[test], table.y[test])
            acc = "-" if m.accuracy is None else f"{m.accuracy:.4f}"
            console.print(
                f"test window ({split.n_test} matches), {label}: log loss {m.log_loss:.5f}, accuracy {acc}"
            )
            scored[label] = {"log_loss": m.log_loss, "accuracy": m.accuracy}
        drift = drift_per_100k(table, fc)
        if abs(drift) > 1.0:
            err_console.print(
                f"warning: the rules written to {out} {'inflate' if drift > 0 else 'deflate'} the pool by "
                f"{abs(drift):.1f} points per 100,000 matches on this history (more than 1)",
                highlight=False,
            )
        saved = {
            "kind": "tune",
            "history": str(history),
            "rules": str(out),
            "objectives": list(OBJECTIVES[:1] if loss_only else OBJECTIVES),
            "constraints": bounds.to_dict(),
            "fixed": list(fix or []),
            "trials": result.trials,
            "feasible": result.feasible,
            "chosen": {"trial": result.number, **result.measures.to_dict(), "params": dict(result.params)},
            "test": scored,
            "full_history_drift_per_100k": drift,
            "front": list(result.front),
            "all_trials": list(result.everything),
        }
        front_path = front if front is not None else out.with_suffix(".front.json")
        front_path.write_text(json.dumps(saved, indent=1), encoding="utf-8")
        console.print(f"wrote the Pareto front ({len(result.front)} rule sets) to {front_path}")


def _front_table(rows: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> Table:
    t = Table(title="Pareto front of the trials that meet the constraints (validation window)")
    for col in ("trial", "valid log loss", "drift/100k", "losing well", "converge med"):
        t.add_column(col, justify="right")
    for row in rows:
        t.add_row(
            str(row["trial"]),
            f"{row['valid_log_loss']:.5f}",
            f"{row['drift_per_100k']:+.2f}",
            f"{row['losing_well']:+d}",
            f"{row['convergence_median']:.0f}",
        )
    return t


@app.command("simulate")
def simulate_command(
    rules: Annotated[
        list[Path] | None,
        typer.Option(
            "--rules", metavar="FILE", help="A variant rules file to compare with the reference (repeatable)."
        ),
    ] = None,
    players: Annotated[int, typer.Option("--players", help="Players in the league.")] = 200,
    founders: Annotated[
        int, typer.Option("--founders", help="Players there from the start; the rest join later.")
    ] = 150,
    matches: Annotated[int, typer.Option("--matches", help="Matches to play.")] = 20_000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the league.")] = 7,
    tolerance: Annotated[
        float, typer.Option("--tolerance", help="Convergence tolerance in rating points.")
    ] = 50.0,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of a table.")
    ] = False,
    out: RunOut = None,
    save: SaveAlias = None,
) -> None:
    """Simulate a league with hidden skills and measure each rule set: ranking, inflation, convergence."""
    from ..analysis import League, simulate_league

    with user_errors():
        save = one_path(("--save", save), ("--out", out), required=False)
        league = League(players=players, founders=founders, matches=matches, seed=seed)
        rule_sets: list[Rules] = [REFERENCE_RULES, *(load_rules(p) for p in rules or [])]
        results = [simulate_league(league, r, tolerance=tolerance) for r in rule_sets]
        run: dict[str, Any] = {"kind": "simulate", "league": asdict(league)}
        run["results"] = [r.to_dict() for r in results]
        if save is not None:
            save.write_text(json.dumps(run, indent=1), encoding="utf-8")
        if json_out:
            print(json.dumps(run))
            return
        t = Table(title=f"Simulated league: {players} players, {matches} matches, seed {seed}")
        for col in (
            "rules",
            "Spearman",
            "pts/100k",
            "mean drift/100k",
            "converge med",
            "p90",
            "losing well",
            "win",
        ):
            t.add_column(col, justify="left" if col == "rules" else "right")
        for r in results:
            t.add_row(
                r.rules,
                f"{r.spearman:.3f}",
                f"{r.points_per_100k:.0f}",
                f"{r.mean_drift_per_100k:.1f}",
                f"{r.convergence_median:.0f}",
                f"{r.convergence_p90:.0f}",
                f"{r.losing_well:+d}",
                f"{r.win_gain:+d}",
            )
        console.print(t)


@app.command("report")
def report_command(
    runs: Annotated[
        list[Path], typer.Argument(help="Runs saved by `backtest --save` and `simulate --save`.")
    ],
    out: Annotated[Path, typer.Option("--out", metavar="FILE", help="The HTML file to write.")] = Path(
        "report.html"
    ),
) -> None:
    """Write one self-contained HTML page (tables and embedded plots) from saved runs."""
    with user_errors():
        loaded = []
        for path in runs:
            try:
                loaded.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, json.JSONDecodeError) as exc:
                raise ValidationError("runs", f"cannot read {path}: {exc}") from exc
        from ..analysis.report import render_report  # matplotlib: slow to import

        out.write_text(render_report(loaded), encoding="utf-8")
        console.print(f"wrote {out}")

"""Tuning a rule set's coefficients for forecast quality and fairness, honestly.

The objectives (:mod:`sedma_elo.analysis.objectives`) are the log loss of the rule set's plain
expected score on the *validation* window (by default the 20% of matches just before the last
30%) together with its drift, "losing well" gain and newcomer convergence; bounds on drift and
losing well are optuna constraints. The tuner replays only the matches before the test window,
so the test window cannot influence any trial; it is scored once, after the search, by the caller.

The search space (:func:`search_space`) is bounded and listed in ``docs/analysis.md``. Optuna's
TPE sampler with a fixed seed makes a single-process search reproducible; ``jobs > 1`` runs
trials in that many worker processes sharing one study, and an optuna RDB ``storage`` URL lets
several commands on several machines share one study (in both cases the order of trials, and so
the result, depends on timing).
"""

from __future__ import annotations

import math
import multiprocessing
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from ..core.coefficients import SearchParam
from ..core.coefficients import search_space as declared_search_space
from ..core.rules import REFERENCE_RULES, Rules
from ..core.rules_toml import point_of, rules_from_point
from ..errors import SedmaEloError, ValidationError
from .fairness import Fairness
from .forecast import Forecaster
from .metrics import Split, score_forecasts
from .objectives import OBJECTIVES, Constraints, TrialMeasures, front_rows, replay_head, trial_measures
from .sedma import sedma_rules
from .table import MatchTable

__all__ = [
    "LOCAL_PENALTY",
    "Param",
    "TuneResult",
    "fix_params",
    "neighbour",
    "rules_from_params",
    "search_space",
    "tune_rules",
    "validation_loss",
]


#: One dimension of the search space (declared in :mod:`sedma_elo.core.coefficients`).
Param = SearchParam


def search_space() -> tuple[Param, ...]:
    """The bounded search space over the rules' coefficients, named by TOML key.

    Derived from the coefficient declarations (:func:`sedma_elo.core.coefficients.search_space`;
    the ranges are in the table of ``docs/rules.md``): the K tiers (K of each, the first boundary
    relative to the initial rating, the next ones as widths), the games-played curve and how it
    combines with the tiers, the new-player multiplier, the bonuses and caps, the loser's share,
    the malus, the highest adjusted score and the margin of victory.
    """
    return declared_search_space()


def rules_from_params(
    params: Mapping[str, float | str], base: Rules = REFERENCE_RULES, name: str = "tuned"
) -> Rules:
    """The rule set a point of :func:`search_space` stands for (missing keys keep ``base``'s values).

    Raises:
        RulesError: the point gives invalid rules (cannot happen inside the bounds).
    """
    return rules_from_point(params, base, name)


def fix_params(base: Rules, fixes: Sequence[str]) -> tuple[Rules, tuple[Param, ...]]:
    """Hold coefficients fixed: ``base`` with each ``NAME=VALUE`` of ``fixes``, and the space without them.

    ``NAME`` is a dimension of :func:`search_space` other than the K tiers' (a TOML key such as
    ``k_factor.new_player_multiplier``); ``VALUE`` one of its choices or a number inside its
    tuning range.

    Raises:
        ValidationError: field ``--fix``: not ``NAME=VALUE``, an unknown or repeated name, or a value
            that is not one of the choices or not a number in the range.
        RulesError: the fixed value gives invalid rules.
    """
    space = search_space()
    by_name = {p.name: p for p in space}
    point: dict[str, float | str] = {}
    for item in fixes:
        key, sep, text = item.partition("=")
        key, text = key.strip(), text.strip()
        if not sep or not key or not text:
            raise ValidationError("--fix", f"expected NAME=VALUE, got {item!r}")
        param = by_name.get(key)
        if param is None:
            raise ValidationError("--fix", f"{key!r} is not a tuned coefficient (see docs/rules.md)")
        if key.startswith("k_factor.tiers["):
            # the tier dimensions are read together (boundaries as offsets and widths)
            raise ValidationError("--fix", f"{key}: the tiers are searched together; set them in --rules")
        if key in point:
            raise ValidationError("--fix", f"{key!r} is given twice")
        point[key] = _fixed_value(param, text)
    rules = rules_from_point(point, base, base.name).replace(description=base.description) if point else base
    return rules, tuple(p for p in space if p.name not in point)


def _fixed_value(param: Param, text: str) -> float | str:
    if param.choices:
        if text not in param.choices:
            raise ValidationError(
                "--fix", f"{param.name} must be one of {', '.join(param.choices)}, got {text!r}"
            )
        return text
    try:
        value: float = int(text) if param.integer else float(text)
    except ValueError:
        kind = "an integer" if param.integer else "a number"
        raise ValidationError("--fix", f"{param.name} must be {kind}, got {text!r}") from None
    if not (param.low <= value <= param.high):
        raise ValidationError(
            "--fix", f"{param.name} must be in its tuning range [{param.low:g}, {param.high:g}], got {text}"
        )
    return value


def validation_loss(
    table: MatchTable, split: Split, rules: Rules, forecaster: Callable[[Rules], Forecaster] = sedma_rules
) -> float:
    """Log loss of ``rules`` on the validation window, replaying only the matches before the test window."""
    head, fc = replay_head(table, split, forecaster(rules))
    window = slice(split.valid_start, split.test_start)
    return score_forecasts(fc.p[window], head.y[window]).log_loss


@dataclass(frozen=True, slots=True)
class TuneResult:
    """The chosen trial of a search and the Pareto front it was chosen from.

    Attributes:
        rules: the chosen rule set: the lowest validation log loss among the trials that meet the
            constraints (among all trials without constraints).
        valid_log_loss: its log loss on the validation window.
        trials: number of finished trials in the study.
        params: the chosen point of the search space.
        measures: every figure of the chosen trial (log loss and fairness).
        front: the Pareto front of the trials that meet the constraints, best log loss first
            (rows of :func:`sedma_elo.analysis.objectives.front_rows`).
        feasible: how many finished trials meet the constraints.
        number: the chosen trial's number.
        everything: every finished trial's figures (no parameters) with ``feasible``, for plots.
    """

    rules: Rules
    valid_log_loss: float
    trials: int
    params: Mapping[str, float | str]
    measures: TrialMeasures
    front: tuple[dict[str, Any], ...] = ()
    feasible: int = 0
    number: int = 0
    everything: tuple[dict[str, Any], ...] = ()


def tune_rules(
    table: MatchTable,
    split: Split,
    *,
    trials: int = 100,
    jobs: int = 1,
    seed: int = 0,
    storage: str | None = None,
    study_name: str = "sedma-elo-tune",
    name: str = "tuned",
    space: Sequence[Param] | None = None,
    base: Rules = REFERENCE_RULES,
    forecaster: Callable[[Rules], Forecaster] = sedma_rules,
    constraints: Constraints | None = None,
    objectives: int = len(OBJECTIVES),
    on_trial: Callable[[int, float, float], None] | None = None,
    local: int = 0,
) -> TuneResult:
    """Search ``space`` with optuna's multi-objective TPE for rules that predict well and are fair.

    Every trial minimises the four figures of :mod:`sedma_elo.analysis.objectives` (validation
    log loss, |drift|, |losing well|, newcomer convergence), or only the first ``objectives`` of
    them (1: validation log loss alone, a sharper search for the chosen point; the front is still
    over all four figures); ``constraints`` go to the sampler as optuna constraints, so it learns
    where the feasible rules are. The chosen rules are the
    lowest validation log loss among the trials that meet the constraints. The reference rules
    (``base``) are always the first trial, so without constraints (or when ``base`` meets them) the
    result is never worse on the validation window than where the search started.
    ``on_trial(number, log_loss, best)`` is called after each trial, with the best log loss that
    meets the constraints so far (``inf`` while none does); ``name`` names the tuned rules.

    ``local`` more trials then refine the result by a local search (one process): each trial moves
    one to three coefficients of the walk's current point (:func:`neighbour`), where the current
    point is the trial with the lowest validation log loss plus :data:`LOCAL_PENALTY` times its
    constraint violations, so the walk can follow the edge of the feasible rules; the chosen rules
    still meet the constraints.

    Raises:
        ValidationError: the split has no validation window, ``trials``/``jobs`` below 1,
            ``objectives`` not in 1..4, ``local`` below 0, or no
            trial met the constraints (field ``constraints``; the error names the closest trial).
        SedmaEloError: a worker process failed (``jobs > 1``; its error is on its stderr).
    """
    if split.n_valid < 1:
        raise ValidationError("valid_fraction", "tuning needs a validation window (a fraction above 0)")
    if trials < 1:
        raise ValidationError("trials", f"must be at least 1, got {trials}")
    if jobs < 1:
        raise ValidationError("jobs", f"must be at least 1, got {jobs}")
    if local < 0:
        raise ValidationError("local", f"must be at least 0, got {local}")
    if not 1 <= objectives <= len(OBJECTIVES):
        raise ValidationError("objectives", f"must be in 1..{len(OBJECTIVES)}, got {objectives}")
    space = tuple(space if space is not None else search_space())
    constraints = constraints if constraints is not None else Constraints()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    journal = None
    if jobs > 1 and storage is None:
        # worker processes need a storage they can share: a journal file in a private directory
        journal = str(Path(tempfile.mkdtemp(prefix="sedma-elo-tune-")) / "journal.log")
    study = optuna.create_study(
        directions=["minimize"] * objectives,
        sampler=_sampler(seed, constraints),
        storage=_open_storage(storage, journal),
        study_name=study_name,
        load_if_exists=storage is not None,
    )
    if not study.trials:
        study.enqueue_trial(_params_of(base, space), skip_if_exists=True)

    def objective(trial: optuna.Trial) -> tuple[float, ...]:
        params: dict[str, float | str] = {}
        for p in space:
            if p.choices:
                params[p.name] = trial.suggest_categorical(p.name, p.choices)
            elif p.integer:
                params[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
            else:
                params[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
        rules = rules_from_params(params, base)
        measures = trial_measures(table, split, rules, forecaster(rules), segments=constraints.drift_segments)
        trial.set_user_attr("measures", measures.to_dict())
        violations = constraints.violations(measures.fairness)
        trial.set_user_attr(_CONSTRAINTS_KEY, violations)
        if _NATIVE_CONSTRAINTS:
            for key, value in zip(constraints.names(), violations, strict=True):
                trial.set_constraint(key, value)
        return measures.values()[:objectives]

    best = [math.inf]

    def report(number: int, values: Sequence[float], attrs: Mapping[str, Any]) -> None:
        measures = _measures_from(attrs)
        if constraints.met(measures.fairness):
            best[0] = min(best[0], values[0])
        if on_trial is not None:
            on_trial(number, values[0], best[0])

    try:
        if jobs == 1:
            study.optimize(
                objective,
                n_trials=trials,
                callbacks=[lambda _, t: report(t.number, t.values, t.user_attrs) if t.values else None],
            )
        else:
            _optimize_in_processes(
                study, storage, journal, seed, constraints, objective, trials, jobs, report
            )
        _local_search(study, space, constraints, local, seed, objective, report)
        done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    finally:
        if journal is not None:
            shutil.rmtree(Path(journal).parent, ignore_errors=True)
    measured = [(t.number, _measures_from(t.user_attrs), dict(t.params)) for t in done]
    ok = [row for row in measured if constraints.met(row[1].fairness)]
    if not ok:
        closest = min(
            measured, key=lambda row: sum(max(v, 0.0) for v in constraints.violations(row[1].fairness))
        )
        raise ValidationError(
            "constraints",
            f"none of {len(measured)} trials met them; closest: trial {closest[0]} with "
            f"drift {closest[1].fairness.drift_per_100k:.2f} per 100k matches and losing well "
            f"{closest[1].fairness.losing_well} (more trials, or looser bounds)",
        )
    number, measures, params = min(ok, key=lambda row: (row[1].valid_log_loss, row[0]))
    note = (
        f"Tuned by sedma-elo tune: validation log loss {measures.valid_log_loss:.5f} over {len(done)} trials"
        + (f" ({len(ok)} met the constraints)." if constraints.active else ".")
    )
    rules = rules_from_params(params, base, name).replace(description=note)
    front = tuple(front_rows(measured, constraints))
    everything = tuple(
        {"trial": n, **m.to_dict(), "feasible": constraints.met(m.fairness)} for n, m, _ in measured
    )
    return TuneResult(
        rules, measures.valid_log_loss, len(done), params, measures, front, len(ok), number, everything
    )


#: Weight of a trial's constraint violations (points of drift or losing well) against its validation
#: log loss when the local search picks its current point: 0.002 per point.
LOCAL_PENALTY = 0.002


def neighbour(
    params: Mapping[str, float | str], space: Sequence[Param], rng: random.Random, step: float = 0.08
) -> dict[str, float | str]:
    """``params`` with one to three coefficients moved: a choice drawn anew, a number by a normal
    step of ``step`` times its range (on the log scale for a log dimension), kept inside its bounds."""
    out = dict(params)
    for p in rng.sample(list(space), min(len(space), rng.choice((1, 1, 2, 3)))):
        if p.choices:
            out[p.name] = rng.choice(p.choices)
            continue
        low, high, x = p.low, p.high, float(out.get(p.name, p.low))
        if p.log:
            low, high, x = math.log(low), math.log(high), math.log(max(x, p.low))
        x = min(max(x + rng.gauss(0.0, step) * (high - low), low), high)
        value = min(max(math.exp(x), p.low), p.high) if p.log else x
        out[p.name] = round(value) if p.integer else value
    return out


def _local_search(
    study: optuna.Study,
    space: Sequence[Param],
    constraints: Constraints,
    steps: int,
    seed: int,
    objective: Callable[[optuna.Trial], tuple[float, ...]],
    report: Callable[[int, Sequence[float], Mapping[str, Any]], None],
) -> None:
    """``steps`` trials, each a :func:`neighbour` of the best trial so far (see :func:`tune_rules`)."""
    rng = random.Random(seed)

    def penalized(t: optuna.trial.FrozenTrial) -> float:
        measures = _measures_from(t.user_attrs)
        excess = sum(max(v, 0.0) for v in constraints.violations(measures.fairness))
        return measures.valid_log_loss + LOCAL_PENALTY * excess

    for _ in range(steps):
        done = [
            t
            for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
            if t.values and math.isfinite(t.values[0])
        ]
        if not done:
            return
        current = min(done, key=lambda t: (penalized(t), t.number))
        study.enqueue_trial(neighbour(current.params, space, rng))
        study.optimize(
            objective,
            n_trials=1,
            callbacks=[lambda _, t: report(t.number, t.values, t.user_attrs) if t.values else None],
        )


_CONSTRAINTS_KEY = "constraints"
#: optuna 5 takes constraints from the trial (``Trial.set_constraint``) and deprecates ``constraints_func``.
_NATIVE_CONSTRAINTS = hasattr(optuna.trial.Trial, "set_constraint")


def _constraint_values(trial: optuna.trial.FrozenTrial) -> Sequence[float]:
    """optuna's constraints_func: the violations the objective stored on the trial."""
    return list(trial.user_attrs.get(_CONSTRAINTS_KEY, []))


def _sampler(seed: int, constraints: Constraints) -> optuna.samplers.TPESampler:
    return optuna.samplers.TPESampler(
        seed=seed,
        constraints_func=_constraint_values if constraints.active and not _NATIVE_CONSTRAINTS else None,
    )


def _measures_from(attrs: Mapping[str, Any]) -> TrialMeasures:
    data = dict(attrs["measures"])
    loss = float(data.pop("valid_log_loss"))
    data["segment_drifts"] = tuple(data.get("segment_drifts", ()))
    return TrialMeasures(loss, Fairness(**data))


def _open_storage(storage: str | None, journal: str | None) -> str | optuna.storages.BaseStorage | None:
    if journal is not None:
        return JournalStorage(JournalFileBackend(journal))
    return storage


def _worker(
    storage: str | None,
    journal: str | None,
    study_name: str,
    seed: int,
    constraints: Constraints,
    objective: Callable[[optuna.Trial], tuple[float, ...]],
    trials: int,
) -> None:
    """Body of one worker process: open the shared study with its own sampler seed and run trials."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    shared = _open_storage(storage, journal)
    assert shared is not None  # workers only run with a storage they can share
    study = optuna.load_study(
        study_name=study_name,
        storage=shared,
        sampler=_sampler(seed, constraints),
    )
    study.optimize(objective, n_trials=trials)


def _optimize_in_processes(
    study: optuna.Study,
    storage: str | None,
    journal: str | None,
    seed: int,
    constraints: Constraints,
    objective: Callable[[optuna.Trial], tuple[float, ...]],
    trials: int,
    jobs: int,
    report: Callable[[int, Sequence[float], Mapping[str, Any]], None],
) -> None:
    """Run ``trials`` trials in ``jobs`` forked processes that share ``study`` through its storage.

    Fork (not spawn) so that each worker inherits the loaded history instead of pickling it. The
    parent only watches the storage and reports finished trials.
    """
    ctx = multiprocessing.get_context("fork")
    shares = [trials // jobs + (1 if i < trials % jobs else 0) for i in range(jobs)]
    procs = [
        ctx.Process(
            target=_worker,
            args=(storage, journal, study.study_name, seed + 1 + i, constraints, objective, n),
        )
        for i, n in enumerate(shares)
        if n > 0
    ]
    for proc in procs:
        proc.start()
    seen: set[int] = set()
    while True:
        running = any(proc.is_alive() for proc in procs)
        done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
        for trial in sorted(done, key=lambda t: t.number):
            if trial.number not in seen and trial.values:
                seen.add(trial.number)
                report(trial.number, trial.values, trial.user_attrs)
        if not running:
            break
        time.sleep(0.2)
    failed = [proc.exitcode for proc in procs if proc.exitcode != 0]
    if failed:
        raise SedmaEloError(f"{len(failed)} tuning worker process(es) failed (exit codes {failed})")


def _params_of(rules: Rules, space: Sequence[Param]) -> dict[str, float | str]:
    """The point of ``space`` closest to ``rules`` (used to enqueue the starting rules)."""
    return point_of(rules, space)

"""Tuning a rule set's coefficients for forecast quality, honestly.

The objective is the log loss of the rule set's plain expected score on the *validation* window
(by default the 20% of matches just before the last 30%). The tuner replays only the matches
before the test window, so the test window cannot influence any trial; it is scored once, after
the search, by the caller.

The search space (:func:`search_space`) is bounded and listed in ``docs/analysis.md``. Optuna's
TPE sampler with a fixed seed makes a single-process search reproducible; ``jobs > 1`` runs
trials in that many worker processes sharing one study, and an optuna RDB ``storage`` URL lets
several commands on several machines share one study (in both cases the order of trials, and so
the result, depends on timing).
"""

from __future__ import annotations

import math
import multiprocessing
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from ..core.coefficients import SearchParam
from ..core.coefficients import search_space as declared_search_space
from ..core.rules import REFERENCE_RULES, Rules
from ..core.rules_toml import point_of, rules_from_point
from ..errors import SedmaEloError, ValidationError
from .forecast import Forecaster
from .metrics import Split, score_forecasts
from .sedma import sedma_rules
from .table import MatchTable

__all__ = ["Param", "TuneResult", "rules_from_params", "search_space", "tune_rules", "validation_loss"]


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


def validation_loss(
    table: MatchTable, split: Split, rules: Rules, forecaster: Callable[[Rules], Forecaster] = sedma_rules
) -> float:
    """Log loss of ``rules`` on the validation window, replaying only the matches before the test window."""
    head = table.head(split.test_start)
    fc = forecaster(rules)(head, split)
    window = slice(split.valid_start, split.test_start)
    return score_forecasts(fc.p[window], head.y[window]).log_loss


@dataclass(frozen=True, slots=True)
class TuneResult:
    """The best trial of a search.

    Attributes:
        rules: the best rule set found.
        valid_log_loss: its log loss on the validation window.
        trials: number of finished trials in the study.
        params: the best point of the search space.
    """

    rules: Rules
    valid_log_loss: float
    trials: int
    params: Mapping[str, float | str]


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
    on_trial: Callable[[int, float, float], None] | None = None,
) -> TuneResult:
    """Search ``space`` with optuna TPE for the rules with the lowest validation log loss.

    The reference rules (``base``) are always the first trial, so the result is never worse on
    the validation window than where the search started. ``on_trial(number, value, best)`` is
    called after each trial (for a progress display); ``name`` names the tuned rules.

    Raises:
        ValidationError: the split has no validation window, or ``trials``/``jobs`` below 1.
        SedmaEloError: a worker process failed (``jobs > 1``; its error is on its stderr).
    """
    if split.n_valid < 1:
        raise ValidationError("valid_fraction", "tuning needs a validation window (a fraction above 0)")
    if trials < 1:
        raise ValidationError("trials", f"must be at least 1, got {trials}")
    if jobs < 1:
        raise ValidationError("jobs", f"must be at least 1, got {jobs}")
    space = tuple(space if space is not None else search_space())
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    journal = None
    if jobs > 1 and storage is None:
        # worker processes need a storage they can share: a journal file in a private directory
        journal = str(Path(tempfile.mkdtemp(prefix="sedma-elo-tune-")) / "journal.log")
    study = optuna.create_study(
        direction="minimize",
        sampler=optuna.samplers.TPESampler(seed=seed),
        storage=_open_storage(storage, journal),
        study_name=study_name,
        load_if_exists=storage is not None,
    )
    if not study.trials:
        study.enqueue_trial(_params_of(base, space), skip_if_exists=True)

    def objective(trial: optuna.Trial) -> float:
        params: dict[str, float | str] = {}
        for p in space:
            if p.choices:
                params[p.name] = trial.suggest_categorical(p.name, p.choices)
            elif p.integer:
                params[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
            else:
                params[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
        rules = rules_from_params(params, base)
        loss = validation_loss(table, split, rules, forecaster)
        return loss if math.isfinite(loss) else float("inf")

    def callback(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        if on_trial is not None and trial.value is not None:
            on_trial(trial.number, trial.value, study.best_value)

    try:
        if jobs == 1:
            study.optimize(objective, n_trials=trials, callbacks=[callback])
        else:
            _optimize_in_processes(study, storage, journal, seed, objective, trials, jobs, on_trial)
        best = study.best_trial
        value = float(study.best_value)
        count = len(study.trials)
    finally:
        if journal is not None:
            shutil.rmtree(Path(journal).parent, ignore_errors=True)
    note = f"Tuned by sedma-elo tune: validation log loss {value:.5f} over {count} trials."
    rules = rules_from_params(best.params, base, name).replace(description=note)
    return TuneResult(rules, value, count, dict(best.params))


def _open_storage(storage: str | None, journal: str | None) -> str | optuna.storages.BaseStorage | None:
    if journal is not None:
        return JournalStorage(JournalFileBackend(journal))
    return storage


def _worker(
    storage: str | None,
    journal: str | None,
    study_name: str,
    seed: int,
    objective: Callable[[optuna.Trial], float],
    trials: int,
) -> None:
    """Body of one worker process: open the shared study with its own sampler seed and run trials."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    shared = _open_storage(storage, journal)
    assert shared is not None  # workers only run with a storage they can share
    study = optuna.load_study(
        study_name=study_name,
        storage=shared,
        sampler=optuna.samplers.TPESampler(seed=seed),
    )
    study.optimize(objective, n_trials=trials)


def _optimize_in_processes(
    study: optuna.Study,
    storage: str | None,
    journal: str | None,
    seed: int,
    objective: Callable[[optuna.Trial], float],
    trials: int,
    jobs: int,
    on_trial: Callable[[int, float, float], None] | None,
) -> None:
    """Run ``trials`` trials in ``jobs`` forked processes that share ``study`` through its storage.

    Fork (not spawn) so that each worker inherits the loaded history instead of pickling it. The
    parent only watches the storage and reports finished trials.
    """
    ctx = multiprocessing.get_context("fork")
    shares = [trials // jobs + (1 if i < trials % jobs else 0) for i in range(jobs)]
    procs = [
        ctx.Process(target=_worker, args=(storage, journal, study.study_name, seed + 1 + i, objective, n))
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
            if trial.number not in seen and trial.value is not None:
                seen.add(trial.number)
                if on_trial is not None:
                    on_trial(trial.number, trial.value, study.best_value)
        if not running:
            break
        time.sleep(0.2)
    failed = [proc.exitcode for proc in procs if proc.exitcode != 0]
    if failed:
        raise SedmaEloError(f"{len(failed)} tuning worker process(es) failed (exit codes {failed})")


def _params_of(rules: Rules, space: Sequence[Param]) -> dict[str, float | str]:
    """The point of ``space`` closest to ``rules`` (used to enqueue the starting rules)."""
    return point_of(rules, space)

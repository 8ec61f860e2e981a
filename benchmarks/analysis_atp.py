"""Backtest figures on a real history that the CLI table does not print.

Usage: python benchmarks/analysis_atp.py HISTORY [RULES.toml ...]

Prints, on the standard protocol (last 30% scored, 20% validation before it): the package's
unpatched Glicko-2 beside the patched one, FiveThirtyEight's tennis K curve as a Sedma rule set,
and each given rules file with and without the validation-fitted calibration; then the seconds
per system (wall time on whatever machine runs it). Last, a robustness table: the log loss of the
reference rules, plain Elo and each rules file on two earlier eras of the history, matches that
no tuning objective ever scored.
"""

from __future__ import annotations

import sys

from sedma_elo import REFERENCE_RULES, BonusRule, load_rules
from sedma_elo.analysis import (
    backtest,
    calibrated,
    chronological_split,
    elo,
    glicko2_weekly,
    score_forecasts,
    sedma_rules,
    table_from_history,
)
from sedma_elo.batch.history import load_history

NO_BONUS = BonusRule(0.0, 0.0)
FIVE_THIRTY_EIGHT = REFERENCE_RULES.replace(
    name="538-k-curve",
    initial_rating=1500,
    k_mode="games",
    k_games_a=250.0,
    k_games_b=5.0,
    k_games_c=0.4,
    bonus_16=NO_BONUS,
    bonus_24=NO_BONUS,
    bonus_4_and_last=NO_BONUS,
    malus_per_bad_move=0.0,
)


def main(argv: list[str]) -> None:
    arrays, skipped = load_history(argv[0], skip_bad=True)
    print(f"{len(arrays)} matches, {len(skipped)} bad rows skipped")
    table = table_from_history(arrays)
    split = chronological_split(len(table))
    systems = [
        glicko2_weekly(fixed=False),
        glicko2_weekly(fixed=True),
        sedma_rules(REFERENCE_RULES.replace(initial_rating=1500), "sedma reference, start 1500"),
        sedma_rules(FIVE_THIRTY_EIGHT),
    ]
    for path in argv[1:]:
        rules = load_rules(path)
        systems += [sedma_rules(rules), calibrated(sedma_rules(rules))]
    print("| system | test log loss | Brier | accuracy | valid log loss | seconds |")
    print("|---|---|---|---|---|---|")
    for r in backtest(table, systems, split):
        valid = "-" if r.valid is None else f"{r.valid.log_loss:.4f}"
        print(
            f"| {r.system} | {r.test.log_loss:.4f} | {r.test.brier:.4f} | {r.test.accuracy:.4f} | {valid} "
            f"| {r.seconds:.1f} |"
        )
    eras = [(len(table) // 12, len(table) // 4), (len(table) // 4, split.valid_start)]
    print()
    print("| system | " + " | ".join(f"log loss, matches {lo}-{hi - 1}" for lo, hi in eras) + " |")
    print("|---|" + "---|" * len(eras))
    era_systems = [sedma_rules(), elo(32.0)] + [sedma_rules(load_rules(path)) for path in argv[1:]]
    for forecaster in era_systems:
        fc = forecaster(table, split)
        cells = [f"{score_forecasts(fc.p[lo:hi], table.y[lo:hi]).log_loss:.4f}" for lo, hi in eras]
        print(f"| {fc.system} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])

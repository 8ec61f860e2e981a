"""The card game engine: Sedma rules, game records, the exact endgame solver, bad-move analysis, bots.

Pure computation except :mod:`.record` (reading and writing record files) and :mod:`.league` (writing
the league's match history). ``docs/game.md`` documents the rules as implemented, the record format
and the definition of a bad move.
"""

from .analysis import AnalysisConfig, BadMove, MatchAnalysis, PlayerReport, analyze
from .bots import Bot, GreedyBot, PlayedMatch, RandomBot, SamplingBot, make_bot, play_match
from .cards import deal_deck, format_card, parse_card
from .config import DEFAULT_GAME_RULES, GameRules
from .greedy import greedy_move
from .pimc import pimc_values
from .record import (
    GameRecord,
    Move,
    Replay,
    RoundRecord,
    dumps_record,
    iter_positions,
    load_record,
    loads_record,
    parse_record,
    record_to_dict,
    replay,
)
from .solver import Solver
from .state import STOP, RoundResult, RoundState

__all__ = [
    "DEFAULT_GAME_RULES",
    "STOP",
    "AnalysisConfig",
    "BadMove",
    "Bot",
    "GameRecord",
    "GameRules",
    "GreedyBot",
    "MatchAnalysis",
    "Move",
    "PlayedMatch",
    "PlayerReport",
    "RandomBot",
    "Replay",
    "RoundRecord",
    "RoundResult",
    "RoundState",
    "SamplingBot",
    "Solver",
    "analyze",
    "deal_deck",
    "dumps_record",
    "format_card",
    "greedy_move",
    "iter_positions",
    "load_record",
    "loads_record",
    "make_bot",
    "parse_card",
    "parse_record",
    "pimc_values",
    "play_match",
    "record_to_dict",
    "replay",
]

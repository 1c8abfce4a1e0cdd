"""Type stubs of the native module ``wisp._wisp`` (crate wisp-py). Use the ``wisp`` package's
functions; these are its building blocks."""

from typing import Any, Callable, final

__version__: str
MAX_DURATION_S: float
MAX_DELAY_MS: float
PAPERS: list[str]

# (name, numpy dtype string, raw little-endian bytes)
Column = tuple[str, str, bytes]

@final
class RunOutput:
    """A run's report, time series and per-packet log, kept in Rust until asked for."""

    def report_json(self) -> str: ...
    def timeseries_columns(self) -> list[Column]: ...
    def packets_columns(self) -> list[Column]: ...
    @staticmethod
    def drop_reasons() -> list[str]: ...
    def html(self) -> str: ...
    @property
    def callbacks(self) -> int: ...

@final
class Trace:
    """A link trace."""

    @staticmethod
    def load(path: str, ns: bool = False) -> Trace: ...
    @property
    def name(self) -> str: ...
    def stats_json(self) -> str: ...
    def rate_columns(self, bin_ms: float) -> list[Column]: ...

class ControllerError(RuntimeError): ...

@final
class Rate:
    def __init__(self, kbps: float, pacing_kbps: float | None = None) -> None: ...
    @property
    def kbps(self) -> float: ...
    @property
    def pacing_kbps(self) -> float: ...

@final
class Window:
    def __init__(self, bytes: int, pacing_kbps: float | None = None) -> None: ...
    @property
    def bytes(self) -> int: ...
    @property
    def pacing_kbps(self) -> float | None: ...

@final
class Packet:
    @property
    def seq(self) -> int: ...
    @property
    def byte_seq(self) -> int: ...
    @property
    def send_time(self) -> float: ...
    @property
    def size(self) -> int: ...

@final
class Controller:
    """Factories of a Python scheme's halves: each returns (object, class name, [hooks])."""

    def __init__(
        self,
        name: str,
        sender: Callable[[], tuple[Any, str, list[str]]],
        receiver: Callable[[], tuple[Any, str, list[str]]],
    ) -> None: ...
    @staticmethod
    def rust_example_aimd(
        start_kbps: float = 300.0,
        target_s: float = 0.040,
        beta: float = 0.85,
        step_kbps: float = 50.0,
        interval_s: float = 0.050,
    ) -> Controller: ...
    @property
    def name(self) -> str: ...

_Obs = tuple[float, float, float, float, float, float, float]

@final
class RateControl:
    """wisp-sim's monitor-interval environment (wisp_sim::interval::Env), for wisp.gym."""

    def __init__(
        self,
        links: list[str],
        monitor_interval_ms: float = 50.0,
        episode_s: float = 10.0,
        reward: list[float] = ...,
        action: str = "rate",
        min_kbps: float = 50.0,
        max_kbps: float = 20000.0,
        start_kbps: float = 1000.0,
        delay_ms: float = 20.0,
        queue: str | None = None,
        loss: str | None = None,
    ) -> None: ...
    @property
    def steps(self) -> int: ...
    @property
    def link_names(self) -> list[str]: ...
    def reset(self, link: int, seed: int) -> _Obs: ...
    def step(self, action: float) -> tuple[_Obs, float, bool]: ...
    def close(self) -> None: ...

def run(
    scheme: str | Controller | list[str | Controller],
    link: str,
    reverse: str | None = None,
    delay_ms: float = 20.0,
    queue: str | None = None,
    loss: str | None = None,
    reverse_loss: str | None = None,
    duration_s: float | None = None,
    warmup_s: float = 0.0,
    seed: int | None = None,
    timer_jitter_us: float = 0.0,
    flows: int = 1,
    cancel: CancelToken | None = None,
) -> RunOutput: ...

class CancelToken:
    def __init__(self) -> None: ...
    def set(self) -> None: ...
    def is_set(self) -> bool: ...

def bench(
    schemes: list[str],
    traces: list[str],
    reverse: str = "pair",
    delay_ms: float = 20.0,
    queue: str | None = None,
    loss: str | None = None,
    reverse_loss: str | None = None,
    duration_s: float | None = None,
    warmup_s: float = 0.0,
    seed: int | None = None,
    timer_jitter_us: float = 0.0,
    jobs: int | None = None,
) -> str: ...
def reproduce(
    paper: str,
    quick: bool = False,
    seed: int | None = None,
    jobs: int | None = None,
    trace: str | None = None,
    traces: str | None = None,
    out: str | None = None,
) -> list[tuple[str, str, str, str, str, bool, str]]: ...
def split_schemes(list: str) -> list[str]: ...
def schemes() -> list[tuple[str, str, list[tuple[str, str | None, str]]]]: ...

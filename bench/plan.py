"""What the benchmark runs: which strategies on which workloads, raw or under the latency model,
at which stack settings (as deployed, or with ``--set`` context keys over them), and whether the
ordered mode's shapes and the batch-size sweep follow.

(b) is left out of the modeled pass and runs on W1 only: three writes per message, its place is
clear raw. W1's raw runs of (c) and (e) go on to the summary path at several stream batch sizes,
and W1's (c) runs again on a year of history per sensor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.workloads import QUICK_MESSAGES
from sensor_digest_cdk.context import shape_from_context
from sensor_digest_cdk.shape import PipelineShape

DEPLOYED = PipelineShape()
MODELED = "acdefg"  # (b) is left out of the modeled pass: three writes per message, its place is clear raw
B_WORKLOADS = ("W1",)  # and it runs on W1 only, for the same reason
REPORTED_SETTINGS = (
    "ingest_batch_size",
    "ingest_batching_window_seconds",
    "ingest_max_concurrency",
    "ingest_max_workers",
    "summary_batch_size",
    "summary_batching_window_seconds",
    "fifo_batch_size",
    "fifo_max_concurrency",
)
"""The settings a results file records."""


@dataclass(frozen=True)
class Run:
    """One run of a workload: a strategy, raw or under the latency model, and the stream batch
    sizes of its summary path (none: no summary path)."""

    strategy: str
    modeled: bool
    summary_batches: tuple[int, ...] = ()


@dataclass(frozen=True)
class Plan:
    """The command line's choices, resolved: ``--quick`` is ``QUICK_MESSAGES`` of W1 and W4."""

    messages: int
    workloads: str  # comma-separated names, as given
    strategies: str  # comma-separated keys, as given
    modes: str  # comma-separated: raw, model
    sets: tuple[str, ...]  # the --set KEY=VALUE items, as given
    overrides: dict[str, str]
    settings: PipelineShape
    quick: bool = False
    no_sweep: bool = False
    only_sweep: bool = False
    only_peer: bool = False
    no_peer: bool = False
    no_concurrency: bool = False

    @classmethod
    def of(
        cls,
        *,
        quick: bool,
        messages: int,
        workloads: str,
        strategies: str,
        modes: str,
        sets: list[str],
        no_sweep: bool,
        only_sweep: bool,
        only_peer: bool = False,
        no_peer: bool = False,
        no_concurrency: bool = False,
    ) -> Plan:
        n = QUICK_MESSAGES if quick else messages
        if quick:
            workloads = "W1,W4"
        overrides = dict(item.split("=", 1) for item in sets)
        settings = shape_from_context(overrides.get) if overrides else DEPLOYED
        chosen = (workloads, strategies, modes, tuple(sets), overrides, settings)
        return cls(n, *chosen, quick, no_sweep, only_sweep, only_peer, no_peer, no_concurrency)

    @property
    def summary_sizes(self) -> tuple[int, ...]:
        """The stream batch sizes of W1's summary path."""
        return tuple(sorted({100, 1_000, self.settings.summary_batch_size}))

    def workload_names(self) -> list[str]:
        return [] if self.only_sweep or self.only_peer else self.workloads.split(",")

    @property
    def peer(self) -> bool:
        """Whether the comparison with Powertools runs (``bench.peer``)."""
        return not (self.no_peer or self.only_sweep)

    def runs(self, name: str) -> list[Run]:
        """The runs of workload ``name``, in order: every mode, every strategy of it."""
        out = []
        for mode in self.modes.split(","):
            for key in self.strategies.split(","):
                if (key == "b" and name not in B_WORKLOADS) or (mode == "model" and key not in MODELED):
                    continue
                young_summary = self.summary_sizes if name == "W1" and key in "ce" and mode == "raw" else ()
                out.append(Run(key, mode == "model", young_summary))
        return out

    def ages(self, name: str) -> bool:
        """Whether (c) on workload ``name`` runs again with a year of history per sensor (W1, raw)."""
        return name == "W1" and "c" in self.strategies and "raw" in self.modes

    @property
    def concurrency(self) -> bool:
        """Whether (c) runs on W1 at 10 invocations at once beside the default (``runner.run_concurrency``)."""
        return "c" in self.strategies and not (self.no_concurrency or self.only_sweep or self.only_peer or self.quick)

    @property
    def fifo_shapes(self) -> bool:
        """Whether ordered mode (e) runs on the sweep's shapes."""
        return "e" in self.strategies and not (self.only_sweep or self.only_peer)

    @property
    def sweep(self) -> bool:
        return not self.no_sweep

    def reported_settings(self) -> dict[str, Any]:
        return {k: getattr(self.settings, k) for k in REPORTED_SETTINGS}
